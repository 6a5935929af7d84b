"""The output-folder rule's shared pieces: its file names, its one-line error, and the checks
for single-file outputs (`check_new_file`) and OS errors (`os_error_line`).

`albert_keras_contracts.output_folder` (the rule itself, `OutputFolder`) re-exports all of them; import them
from there.
"""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import stat
from collections.abc import Mapping

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


def open_lock(path: str, *, create: bool) -> int | None:
    """A file descriptor of the lock file `path`, opened without following a link; None when
    absent and not `create`.

    Opened with `O_NOFOLLOW` (a lock that is a symlink would truncate and overwrite its target,
    outside the folder) and `O_NONBLOCK` (a FIFO would block the open), then checked to be a
    regular file: anything else is refused in one line.

    Args:
        path: str. The lock file.
        create: bool. Make it when absent (a run taking the lock), or not (a reader).
    """
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_RDWR | os.O_CREAT if create else os.O_RDONLY
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:
        if create:
            raise
        return None
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        raise OutputFolderError(_not_a_lock(path, "a symbolic link")) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputFolderError(_not_a_lock(path, "not a regular file"))
    return fd


def _not_a_lock(path: str, what: str) -> str:
    return f"{path} is {what}, not an albert-keras lock: remove it, or choose another folder"


def live_holder(folder: str, lock_name: str = LOCK) -> str | None:
    """Who holds `folder`'s lock (its first line, or "") if a live process does, else None: a
    shared flock taken and dropped at once (a dead holder's lock is free). A lock that is a
    link or not a regular file is refused (`open_lock`)."""
    try:
        fd = open_lock(os.path.join(folder, lock_name), create=False)
    except OutputFolderError:
        raise
    except OSError:
        return None  # unreadable: nobody can hold it through us either
    if fd is None:
        return None  # no lock file: nobody writes here
    with os.fdopen(fd, encoding="utf-8", errors="replace") as file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return holder_line(file.read())
    return None


def holder_line(text: str) -> str:
    """The lock's first line (who holds it), for a one-line refusal."""
    lines = text.strip().splitlines()
    return lines[0].strip() if lines else ""


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


def check_apart(output_flag: str, output, inputs: Mapping[str, object]) -> None:
    """Refuses, in one line, to write over what a command reads: an output that is one of its
    inputs (the same path, a link to it, a hard link), lies inside an input folder, or, as a
    folder, holds an input (which its `--overwrite` or a rerun would replace).

    Called by every writing command's checks, before anything is written.

    Args:
        output_flag: str. The output's flag, for the message (`"--output"`).
        output: str, path-like or a list of them (`train_vocab`'s `PREFIX.model`, `.vocab`,
            ...). URLs pass.
        inputs: dict of flag -> a path, a list of paths, or None. Local files or folders;
            patterns (`corpus/*.txt`) are expanded; URLs, None and names of nothing on disk
            (a preset's name) pass.

    Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> model = os.path.join(folder, "model.keras")
    >>> _ = open(model, "w").write("a model")
    >>> check_apart("--output", os.path.join(folder, "out.jsonl"), {"--model": model})
    >>> try:
    ...     check_apart("--output", model, {"--model": model})
    ... except OutputFolderError as error:
    ...     print(str(error).replace(folder, "F"))
    --output F/model.keras is the --model file it reads: choose another path
    """
    outputs = [output] if isinstance(output, (str, os.PathLike)) else list(output)
    for out in outputs:
        out = os.fspath(out)
        if is_remote(out):
            continue
        real_out = os.path.realpath(out)
        for flag, value in inputs.items():
            for path in _local_inputs(value):
                real_in = os.path.realpath(path)
                if real_in == real_out or _same_file(real_in, real_out):
                    kind = "folder" if os.path.isdir(real_in) else "file"
                    shown = "" if os.path.abspath(path) == os.path.abspath(out) else f" ({path})"
                    raise OutputFolderError(
                        f"{output_flag} {out} is the {flag} {kind} it reads{shown}: "
                        "choose another path"
                    )
                if _inside(real_out, real_in):
                    raise OutputFolderError(
                        f"{output_flag} {out} lies inside {flag} {path}, which it reads: "
                        "choose a path outside it"
                    )
                if _inside(real_in, real_out):
                    raise OutputFolderError(
                        f"{flag} {path} lies inside {output_flag} {out}: choose another output "
                        "folder"
                    )


def _local_inputs(value) -> list[str]:
    """The local paths of an input value (a path, a pattern, a list of them, or None; anything
    else, such as a model object given from Python, names no file)."""
    if isinstance(value, (str, os.PathLike)):
        values = [value]
    elif isinstance(value, (list, tuple)):
        values = [item for item in value if isinstance(item, (str, os.PathLike))]
    else:
        return []
    paths = []
    for item in values:
        item = os.fspath(item)
        if not item or is_remote(item) or item == "-":
            continue
        if any(c in item for c in "*?[") and not os.path.exists(item):  # a pattern
            paths += glob.glob(item, recursive=True)
        elif os.path.lexists(item):  # not a preset name (`albert_base`) nor a missing file
            paths.append(item)
    return paths


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


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
