"""Files that are whole or absent: write a temporary name in the same folder, then rename.

The one place the project writes an output atomically (JSON summaries, models, submissions,
checkpoints, vocabularies). A rename within a folder is atomic on POSIX file systems, so a crash
or `kill -9` leaves either the old file or the new one under the final name, never half of one;
the temporary file of a failed write is removed. Pure Python: the data writer's worker processes
and the TensorFlow side use the same helper.

A temporary's name carries the writer's PID and a random token drawn once per process
(`process_token`), which an output folder's manifest records: a killed run's temporaries are
recognised by a recorded token (`temporary_writer`), never by the name's pattern alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator


def process_token() -> str:
    """This process's random token, which every temporary name it makes carries.

    Drawn once per process from the OS's randomness (`secrets`, not a seeded RNG: no run's
    draws change), inherited by forked workers. An `OutputFolder` records the token of every
    run in its manifest, so that a temporary is recognised by a token one of our runs drew and
    recorded, never by its pattern alone: a user's `.notes.tmp-123.txt` is a user's file.

    Example:
    >>> len(process_token()), process_token() == process_token()
    (16, True)
    """
    global _TOKEN
    if _TOKEN is None:
        _TOKEN = secrets.token_hex(8)
    return _TOKEN


_TOKEN: str | None = None


def temporary_path(path: str | os.PathLike) -> str:
    """The hidden name `path` is written under first: same folder and suffix, the pid and this
    process's token inside.

    The suffix stays last because some writers choose the format from it (`model.save` wants
    `.keras`, matplotlib `.png`).

    Example:
    >>> name = f".model.tmp-{os.getpid()}-{process_token()}.keras"
    >>> temporary_path("run/model.keras") == os.path.join("run", name)
    True
    """
    folder, name = os.path.split(os.fspath(path))
    stem, suffix = os.path.splitext(name)
    if not stem:  # a dot-file such as ".env": no suffix to keep
        stem, suffix = name, ""
    temporary = f".{stem.lstrip('.')}.tmp-{os.getpid()}-{process_token()}{suffix}"
    return os.path.join(folder, temporary)


def temporary_writer(name: str, tokens: Iterable[str] | None = None) -> int | None:
    """The pid of the process that made the temporary `name` (a file name, no folder), or None
    when `name` is not a temporary of a process whose token is in `tokens`.

    Args:
        name: str. A file name.
        tokens: the tokens that count (an `OutputFolder`'s `temporary_tokens`); None: this
            process's own.

    Example:
    >>> temporary_writer(os.path.basename(temporary_path("run/model.keras"))) == os.getpid()
    True
    >>> temporary_writer(".model.tmp-123.keras"), temporary_writer("model.keras")
    (None, None)
    """
    match = _TEMPORARY.fullmatch(name)
    if match is None:
        return None
    allowed = {process_token()} if tokens is None else set(tokens)
    return int(match.group(1)) if match.group(2) in allowed else None


def is_temporary_name(name: str, tokens: Iterable[str] | None = None) -> bool:
    """Whether `name` (a file name, no folder) is a temporary name of `temporary_path` made by a
    process whose token is in `tokens` (None: this process).

    Example:
    >>> is_temporary_name(os.path.basename(temporary_path("run/model.keras")))
    True
    >>> is_temporary_name(".model.tmp-123.keras"), is_temporary_name("model.keras")
    (False, False)
    """
    return temporary_writer(name, tokens) is not None


_TEMPORARY = re.compile(r"\..*\.tmp-([0-9]+)-([0-9a-f]{16})(?:\.[^.]*)?")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yields a temporary path to write; renames it to `path` if the block ends without error.

    On an error the temporary file (or folder) is removed and `path` is left as it was.

    Args:
        path: str or path-like. The final name.

    Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with atomic_path(os.path.join(folder, "a.txt")) as temporary:
    ...     _ = open(temporary, "w").write("done")
    >>> sorted(os.listdir(folder))
    ['a.txt']
    """
    temporary = temporary_path(path)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        if os.path.isdir(temporary) and not os.path.islink(temporary):
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
        raise


def write_bytes(path: str | os.PathLike, data: bytes, *, fsync: bool = False) -> None:
    """Writes `data` to `path` atomically; `fsync=True` also forces it to disk first."""
    with atomic_path(path) as temporary, open(temporary, "wb") as file:
        file.write(data)
        if fsync:
            file.flush()
            os.fsync(file.fileno())


def write_text(path: str | os.PathLike, text: str, *, fsync: bool = False) -> None:
    """Writes `text` (UTF-8) to `path` atomically."""
    write_bytes(path, text.encode("utf-8"), fsync=fsync)


def write_json(path: str | os.PathLike, data, *, fsync: bool = False, **dumps_options) -> None:
    """Writes `data` as JSON (with a final newline) to `path` atomically.

    Args:
        path: str or path-like.
        data: what `json.dumps` takes.
        fsync: bool. Force the file to disk before the rename.
        **dumps_options: passed to `json.dumps` (`indent` defaults to 2).

    Example:
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "summary.json")
    >>> write_json(path, {"steps": 3})
    >>> json.load(open(path))
    {'steps': 3}
    """
    dumps_options.setdefault("indent", 2)
    write_text(path, json.dumps(data, **dumps_options) + "\n", fsync=fsync)


def copy_file(source: str | os.PathLike, destination: str | os.PathLike) -> None:
    """Copies `source` to `destination` atomically (contents only, as `shutil.copyfile`)."""
    with atomic_path(destination) as temporary:
        shutil.copyfile(source, temporary)
