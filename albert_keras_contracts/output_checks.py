"""The output-folder rule's shared pieces: its file names, its one-line error, and the checks
for single-file outputs (`check_new_file`) and OS errors (`os_error_line`).

`albert_keras_contracts.output_folder` (the rule itself, `OutputFolder`) re-exports all of them; import them
from there.
"""

from __future__ import annotations

import errno
import fcntl
import os

MANIFEST = ".albert-keras.json"
LOCK = ".albert-keras.lock"
# Folders whose lock this process holds (their real paths): `check_new_file` writes there freely.
HELD_HERE: set[str] = set()


class OutputFolderError(ValueError):
    """A one-line refusal to write into a folder (the command line exits 2 with it)."""


# Shown (tracebacks, doctests) where users import it from: `albert_keras_contracts.output_folder`.
OutputFolderError.__module__ = "albert_keras_contracts.output_folder"


def is_remote(path: str | os.PathLike) -> bool:
    """Whether `path` is a URL (`gs://...`) rather than a local path."""
    return "://" in os.fspath(path)


def live_holder(folder: str, lock_name: str = LOCK) -> str | None:
    """Who holds `folder`'s lock (its line, or "") if a live process does, else None: a shared
    flock taken and dropped at once (a dead holder's lock is free)."""
    try:
        file = open(os.path.join(folder, lock_name), encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None  # no lock file: nobody writes here
    with file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return file.read().strip()
    return None


def check_new_file(path: str | os.PathLike, *, overwrite: bool, flag: str = "--overwrite") -> None:
    """Refuses, in one line, to replace an existing file unless `overwrite` (a single-file output),
    and to write into a folder another live process holds the lock of.

    Args:
        path: str or path-like. The file a command is about to write.
        overwrite: bool. The command's overwrite flag.
        flag: str. That flag's name, for the message.
    """
    path = os.fspath(path)
    if is_remote(path):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.realpath(folder) not in HELD_HERE:
        holder = live_holder(folder)
        if holder is not None:
            raise OutputFolderError(
                f"{folder} is in use: {holder or 'another process'} holds {LOCK}; "
                "wait for it to finish"
            )
    if not os.path.lexists(path):
        return
    if os.path.isdir(path):
        raise OutputFolderError(f"{path} is a folder: give a file name")
    if not overwrite:
        raise OutputFolderError(f"{path} exists: pass {flag} to replace it, or choose another name")


def os_error_line(error: OSError, path: str | os.PathLike) -> str:
    """One line for an `OSError` met while writing `path`: full disk, no permission, the rest.

    Example:
    >>> os_error_line(OSError(errno.ENOSPC, "No space left on device"), "run/model.keras")
    'run/model.keras: no space left on the device; free some space and rerun'
    """
    path = os.fspath(getattr(error, "filename", None) or path)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{path}: no space left on the device; free some space and rerun"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{path}: not writable ({error.strerror}); choose a folder you can write"
    return f"{path}: {error.strerror or error}"
