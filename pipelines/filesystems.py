"""Input and output paths on the local disk or on any filesystem Apache Beam has (`gs://`, ...).

A local path goes through Python's `open` (and `glob`); a path with a scheme (`gs://bucket/x`,
`s3://...`, `hdfs://...`) goes through `apache_beam.io.filesystems.FileSystems`, imported only
then, so `pipelines` works without Beam on local files and reads the same text from anywhere
with it (`pip install albert-keras[beam]`).
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterator

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_remote(path: str) -> bool:
    """True for a path with a scheme (`gs://...`): Beam's filesystems read it."""
    return bool(_SCHEME.match(path))


def beam_filesystems():
    """`apache_beam.io.filesystems.FileSystems`, or an ImportError that says how to get it."""
    try:
        from apache_beam.io.filesystems import FileSystems
    except ImportError:
        raise ImportError(
            "apache-beam is not installed: `pip install albert-keras[beam]` "
            "(needed for --runner and for gs:// and other remote paths)"
        ) from None
    return FileSystems


def open_input(path: str):
    """A binary file object reading `path`, gunzipped when the name ends in `.gz`.

    Example:
    >>> with open_input("corpus/a.txt") as f:  # or "gs://bucket/corpus/a.txt.gz", with Beam
    ...     f.read(7)
    b'The cat'
    """
    if not is_remote(path):
        return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")
    filesystems = beam_filesystems()
    from apache_beam.io.filesystem import CompressionTypes

    raw = filesystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
    # Our own gunzip, as for local files: the same bytes and the same errors on a bad stream.
    return gzip.GzipFile(fileobj=raw, mode="rb") if path.endswith(".gz") else raw


def is_file(path: str) -> bool:
    """Whether `path` names an existing file."""
    if not is_remote(path):
        return os.path.isfile(path)
    return beam_filesystems().exists(path)


def match_remote(pattern: str) -> Iterator[str]:
    """The files a remote glob pattern matches, as Beam's `FileSystems.match` lists them."""
    (result,) = beam_filesystems().match([pattern])
    for metadata in result.metadata_list:
        yield metadata.path


def read_bytes(path: str) -> bytes:
    """The whole content of a (small) file, local or remote."""
    if not is_remote(path):
        with open(path, "rb") as f:
            return f.read()
    with beam_filesystems().open(path) as f:
        return f.read()
