"""The Beam pipeline's pieces of text (a group's documents in one input file) between reading
and making records: packed into bytes and spilled to files that every worker can read, so that
the pipeline's one shuffle carries where each piece lies (a path and three integers), not its
text.

Why not shuffle the text itself (`docs/beam.md` has the figures): a runner that shuffles in its
driver, as the DirectRunner does, holds every shuffled byte there with gRPC's copies of it
(56 MB of the driver for 8 MB of text), and sends each worker all its shards' text in one
bundle. Spilled, the text is written once by the worker that read it, and read back one group
at a time by the worker that makes its shard; the driver holds a few integers per group. The
spill folder is hidden in the output folder (any filesystem Beam has: `gs://` on Dataflow,
readable by every worker), one file per input file and attempt, and the pipeline's driver
removes it at the end, whether the run succeeded or not.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import uuid
import zlib
from collections.abc import Iterable
from itertools import chain

import numpy as np
from apache_beam.io.filesystem import BeamIOError, CompressionTypes
from apache_beam.io.filesystems import FileSystems

from pipelines import filesystems

SPILL_PREFIX = ".beam-text-"
_SPILL_NAME = re.compile(re.escape(SPILL_PREFIX) + "[0-9a-f]{32}")

# Where a piece lies: (spill file, byte offset, bytes of packed text, bytes of packed sizes).
Location = tuple[str, int, int, int]


def spill_folder(output_dir: str) -> str:
    """A new hidden folder in `output_dir` for one run's pieces (created by its first file).

    Args:
        output_dir: str. The run's output folder, on any filesystem Beam has.
    """
    return FileSystems.join(output_dir, f"{SPILL_PREFIX}{uuid.uuid4().hex}")


def spill_pieces(
    folder: str, pieces: Iterable[tuple[int, list[list[str]]]]
) -> list[tuple[int, Location]]:
    """Writes pieces, packed (`pack_documents`), to one new file in `folder`.

    Args:
        folder: str. From `spill_folder`.
        pieces: `(group index, documents)` pairs, consumed one at a time.

    Returns:
        `(group index, location)` of each piece, once the file is complete. The file's name is
        new on every call: a retried attempt never overwrites a file another attempt's
        locations point into.

    Example:
    >>> folder = spill_folder("out")
    >>> located = spill_pieces(folder, [(3, [["It rained.", "Again."]]), (4, [["No."]])])
    >>> [(group, read_piece(where)) for group, where in located]
    [(3, [['It rained.', 'Again.']]), (4, [['No.']])]
    >>> remove_spill_folder(folder)
    """
    path = FileSystems.join(folder, f"{uuid.uuid4().hex}.bin")
    located, offset = [], 0
    file = FileSystems.create(path, "application/octet-stream", CompressionTypes.UNCOMPRESSED)
    try:
        for group, documents in pieces:
            text, sizes = pack_documents(documents)
            file.write(text)
            file.write(sizes)
            located.append((group, (path, offset, len(text), len(sizes))))
            offset += len(text) + len(sizes)
    finally:
        file.close()
    return located


def read_piece(location: Location) -> list[list[str]]:
    """The documents of the piece at `location` (from `spill_pieces`).

    Args:
        location: `(spill file, offset, text bytes, sizes bytes)`.
    """
    path, offset, text_bytes, sizes_bytes = location
    file = FileSystems.open(path, "application/octet-stream", CompressionTypes.UNCOMPRESSED)
    try:
        file.seek(offset)
        data = file.read(text_bytes + sizes_bytes)
    finally:
        file.close()
    if len(data) != text_bytes + sizes_bytes:
        raise OSError(f"{path}: {len(data)} bytes at offset {offset}, expected a whole piece")
    return unpack_documents(data[:text_bytes], data[text_bytes:])


def remove_spill_folder(folder: str) -> None:
    """Removes a run's spill folder and its files; a folder never made is not an error.

    Args:
        folder: str. From `spill_folder`.
    """
    with contextlib.suppress(BeamIOError):
        (matched,) = FileSystems.match([FileSystems.join(folder, "*")])
        files = [metadata.path for metadata in matched.metadata_list]
        if files:
            FileSystems.delete(files)  # on an object store (gs://) the folder goes with them
    with contextlib.suppress(BeamIOError):
        FileSystems.delete([folder])  # a folder of a disk


def remove_stale_spill_folders(output_dir: str) -> int:
    """Removes the spill folders a killed run left in `output_dir`; returns how many.

    Called by a run that holds the output folder's lock, so every spill folder there belongs to
    a run that is dead (a driver killed with -9 never reaches its own removal).

    Args:
        output_dir: str. The run's output folder, on any filesystem Beam has.

    Example:
    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> _ = spill_pieces(spill_folder(out), [(0, [["Left behind."]])])
    >>> os.mkdir(os.path.join(out, ".beam-text-notes"))  # a user's, named alike: kept
    >>> remove_stale_spill_folders(out), os.listdir(out)
    (1, ['.beam-text-notes'])
    """
    folders = set()
    pattern = FileSystems.join(output_dir, f"{SPILL_PREFIX}*", "*")
    with contextlib.suppress(BeamIOError):
        (matched,) = FileSystems.match([pattern])
        folders = {FileSystems.split(metadata.path)[0] for metadata in matched.metadata_list}
    if not filesystems.is_remote(output_dir):
        # Beam's match lists files only; a disk also keeps the empty folder of a run killed
        # between making its folder and its first file (an object store has no empty folders).
        folders.update(glob.glob(os.path.join(glob.escape(output_dir), f"{SPILL_PREFIX}*/")))
        folders = {os.path.normpath(folder) for folder in folders}
    # Only names `spill_folder` makes (the prefix and a uuid4's 32 hex digits): a user's
    # `.beam-text-notes/` in the folder is not ours to remove.
    folders = {f for f in folders if _SPILL_NAME.fullmatch(FileSystems.split(f.rstrip("/"))[1])}
    for folder in sorted(folders):
        remove_spill_folder(folder)
    return len(folders)


def pack_documents(documents: list[list[str]]) -> tuple[bytes, bytes]:
    """Documents as two byte strings, whatever their sentences: the UTF-8 text of every
    sentence, zlib-compressed (level 1: 2.2x smaller for 0.01 CPU-s per MB), and as int32 the
    number of documents, each one's number of sentences and each sentence's length in
    characters. Written and read in one call each, where a list of lists of str costs a Python
    object per sentence.

    Args:
        documents: list of documents, each a list of sentences (str).

    Example:
    >>> text, sizes = pack_documents([["It rained.", "Again."], ["No."]])
    >>> unpack_documents(text, sizes)
    [['It rained.', 'Again.'], ['No.']]
    """
    sentences = list(chain.from_iterable(documents))
    sizes = chain([len(documents)], map(len, documents), map(len, sentences))
    counts = np.fromiter(sizes, np.int32, 1 + len(documents) + len(sentences))
    return zlib.compress("".join(sentences).encode(), 1), counts.tobytes()


def unpack_documents(text: bytes, sizes: bytes) -> list[list[str]]:
    """The documents `pack_documents` packed.

    Args:
        text: bytes. The compressed text.
        sizes: bytes. The int32 sizes.
    """
    counts = np.frombuffer(sizes, np.int32)
    number = int(counts[0])
    ends = np.cumsum(counts[1 + number :]).tolist()
    characters = zlib.decompress(text).decode()
    sentences = [characters[a:b] for a, b in zip([0, *ends[:-1]], ends)]
    documents, first = [], 0
    for count in counts[1 : 1 + number].tolist():
        documents.append(sentences[first : first + count])
        first += count
    return documents
