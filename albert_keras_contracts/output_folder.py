"""The output-folder rule: a command writes only into a folder it owns, one run at a time.

Every command that writes (the vocabulary, the data writers, pretrain, distill, the fine-tuning
jobs, convert, export, study, demo) opens its output folder through `OutputFolder`:

- **Ownership.** The folder holds a manifest, `.albert-keras.json`, naming the command that made
  it, the arguments and inputs it ran with, and every top-level entry it wrote. A folder that
  holds files but no manifest (a user's folder) is refused; so is a folder another command made.
- **Same command, same arguments: resume.** The run continues where the last one stopped and
  keeps its files, as it always did.
- **Same command, other arguments: refused**, naming the first argument that differs, unless the
  command was given `overwrite=True` (its `--overwrite` flag): then only the entries the manifest
  lists are removed, never anything else.
- **The folder's own files are input.** The manifest is checked against its schema, and every
  name it lists must be one plain name inside the folder, before anything is done with it; the
  lock is opened without following a link; a temporary is ours only when it carries a token a
  run recorded in the manifest (`atomic_write.process_token`), never by its pattern alone.
- **A failed first run claims nothing.** Used as a context manager, a run that fails before it
  wrote anything to resume from removes what it made as it closes (`discard_if_unused`).
- **One run at a time.** A lock file, `.albert-keras.lock`, holds the PID and host of the run and
  an exclusive `flock`. The kernel drops a `flock` when its process dies, `kill -9` included, so
  a lock left by a dead run is free and the next run takes it over; a live holder is named in the
  refusal.

Every refusal is an `OutputFolderError` with one line that names the folder and the way out; the
command line prints it and exits 2. Nothing is written before the checks pass. Remote folders
(`gs://...`) are written through `tf.io.gfile` by the commands themselves and cannot be locked: the
rule applies to local paths.

Written by hand: no library we use keeps a per-folder ownership manifest (`filelock` gives the
lock alone, and `fcntl.flock` is all of it we need). Pure Python: the TensorFlow-free data writer
uses it too.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterable, Mapping

from albert_keras_contracts import atomic_write

# The folder's files, its error and the single-file checks live in `output_checks` (re-exported
# here: `from albert_keras_contracts.output_folder import check_new_file, os_error_line, ...` as before).
from albert_keras_contracts.output_checks import (  # noqa: F401
    HELD_HERE,
    LOCK,
    MANIFEST,
    OutputFolderError,
    check_apart,
    check_new_file,
    holder_line,
    is_remote,
    live_holder,
    open_lock,
    os_error_line,
)

# The manifest's schema and entries live in `output_manifest`.
from albert_keras_contracts.output_manifest import (
    TOKENS_KEPT,
    first_difference,
    holds_a_file,
    is_own_name,
    read_manifest,
    remove_entry,
)

# A lock taken before refusing "in use": another starter's own probe may hold it that long.
_LOCK_TRIES, _LOCK_WAIT_SECONDS = 5, 0.02


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _jsonable(value):
    """`value` as JSON keeps it (tuples as lists, paths as strings), for comparing arguments."""
    return json.loads(json.dumps(value, default=str))


class OutputFolder:
    """A folder one command owns while it writes into it (see the module docstring).

    Args:
        path: str or path-like. The folder; made (with its parents) when absent.
        command: str. The command that owns it, as a user types it (`"albert-keras pretrain"`).
        arguments: dict. The settings that make a run this run: a rerun with equal ones resumes.
        inputs: dict or None. What the run read (files, vocabulary hashes), recorded for users.
        overwrite: bool. On a folder this command made with other arguments, remove what that
            run wrote (the manifest's entries only) instead of refusing.
        ignore_arguments: names of `arguments` that may change between a run and its resume
            (`max_steps`, to train longer).
        overwrite_flag: str. The flag named in the refusal (`--overwrite`).
        lock_name: str. The lock file's name: `.albert-keras.lock`, or one per task where
            several machines write their own share of one folder at once
            (`.albert-keras.task-00001-of-00004.lock`).
        rewritten: names of entries every run writes again from its arguments (the study's
            `study.json`): a failed first run that wrote only these is discarded all the same.

    Used as a context manager, a run that fails (an exception, Ctrl-C included) before writing
    anything it could resume from is discarded as it closes (`discard_if_unused`).

    Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with OutputFolder(folder, "albert-keras demo", {"seed": 1}) as out:
    ...     _ = open(out.claim("summary.json"), "w").write("{}")
    >>> sorted(os.listdir(folder))
    ['.albert-keras.json', 'summary.json']
    >>> try:
    ...     OutputFolder(folder, "albert-keras export", {}).open()
    ... except OutputFolderError as error:
    ...     print(str(error).replace(folder, "F"))
    F holds the output of `albert-keras demo`, not of `albert-keras export`: choose another folder
    """

    def __init__(
        self,
        path: str | os.PathLike,
        command: str,
        arguments: Mapping | None = None,
        *,
        inputs: Mapping | None = None,
        overwrite: bool = False,
        ignore_arguments: Iterable[str] = (),
        overwrite_flag: str = "--overwrite",
        lock_name: str = LOCK,
        rewritten: Iterable[str] = (),
    ):
        self.path = os.fspath(path)
        self.command = command
        self.arguments = _jsonable(dict(arguments or {}))
        self.inputs = _jsonable(dict(inputs or {}))
        self.overwrite = overwrite
        self.ignore_arguments = tuple(ignore_arguments)
        self.overwrite_flag = overwrite_flag
        self.lock_name = lock_name
        self.rewritten = tuple(rewritten)
        self.resumed = False
        self._made_folder = False
        self._lock_file = None
        self._manifest: dict | None = None
        self._previous_files: list[str] | None = None  # the earlier run's, when there was one

    # === Opening: checks, lock, manifest ===
    def open(self) -> OutputFolder:
        """Checks the folder, takes the lock and writes the manifest; raises before writing."""
        if is_remote(self.path):
            return self
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise OutputFolderError(f"{self.path} is a file, not a folder: choose a folder")
        self._refuse_if_in_use()  # first: a live run is what a user must hear about
        previous = read_manifest(self.path)
        if previous is None:
            self._refuse_foreign_files()
        else:
            self._check_previous(previous)
        try:
            self._made_folder = not os.path.isdir(self.path)
            os.makedirs(self.path, exist_ok=True)
            self._take_lock()
            # Checked again under the lock: another run may have claimed the folder meanwhile.
            previous = read_manifest(self.path)
            if previous is None:
                self._refuse_foreign_files()
            else:
                self._check_previous(previous)
            self._start_manifest(previous)
        except OSError as error:
            self._abandon_open()
            raise OutputFolderError(os_error_line(error, self.path)) from None
        except BaseException:
            self._abandon_open()
            raise
        return self

    def _abandon_open(self) -> None:
        """A refused or failed open: the lock released, and the folder gone if we made it."""
        self.close()
        if self._made_folder:
            with contextlib.suppress(OSError):
                os.rmdir(self.path)  # only when empty (a full disk: nothing could be written)

    def __enter__(self) -> OutputFolder:  # noqa: PYI034 (typing.Self needs Python 3.11)
        return self.open()

    def __exit__(self, exc_type, exc, traceback) -> None:
        self.close()
        if exc_type is not None:
            # A first run that failed (a bad value found late, Ctrl-C, a full disk) before it
            # wrote anything to resume from leaves the folder as it found it, so the corrected
            # rerun starts without --overwrite. Never masks the failure itself.
            with contextlib.suppress(OSError):
                self.discard_if_unused()

    def _refuse_foreign_files(self) -> None:
        if not os.path.isdir(self.path):
            return
        foreign = sorted(name for name in os.listdir(self.path) if not is_own_name(name))
        if foreign:
            shown = ", ".join(foreign[:3]) + (
                f" and {len(foreign) - 3} more" if foreign[3:] else ""
            )
            raise OutputFolderError(
                f"{self.path} holds files albert-keras did not write ({shown}): "
                f"choose a new or empty folder"
            )

    def _check_previous(self, previous: dict) -> None:
        if previous["command"] != self.command:
            raise OutputFolderError(
                f"{self.path} holds the output of `{previous['command']}`, not of "
                f"`{self.command}`: choose another folder"
            )
        difference = first_difference(
            previous.get("arguments", {}), self.arguments, self.ignore_arguments
        )
        if difference is not None and not self.overwrite:
            raise OutputFolderError(
                f"{self.path} holds an earlier `{self.command}` run with other arguments "
                f"({difference}): rerun with the same arguments to resume, pass "
                f"{self.overwrite_flag} to replace that run's files, or choose another folder"
            )

    def _start_manifest(self, previous: dict | None) -> None:
        same = previous is not None and (
            first_difference(previous.get("arguments", {}), self.arguments, self.ignore_arguments)
            is None
        )
        self._previous_files = None if previous is None else list(previous["files"])
        if previous is not None and not same:  # overwrite: the checks above allowed it
            for name in previous["files"]:  # each one plain name (`read_manifest` checked)
                remove_entry(self.path, name)
        tokens = [t for t in (previous or {}).get("temporary_tokens", []) if t != _token()]
        self.resumed = same
        self._manifest = {
            "command": self.command,
            "arguments": self.arguments,
            "inputs": self.inputs,
            "created": previous["created"] if same else _now(),
            "updated": _now(),
            "files": list(previous["files"]) if same else [],
            # This run's temporaries' token, recorded before it writes one (`atomic_write`).
            "temporary_tokens": [*tokens, _token()][-TOKENS_KEPT:],
        }
        self._write_manifest()

    @property
    def temporary_tokens(self) -> tuple[str, ...]:
        """The tokens of the runs that wrote here (this one last): a temporary carrying one is
        ours (`atomic_write.temporary_writer`); nothing else is."""
        return tuple(self._manifest["temporary_tokens"]) if self._manifest else ()

    def _write_manifest(self) -> None:
        atomic_write.write_json(os.path.join(self.path, MANIFEST), self._manifest)

    # === The lock ===
    def _in_use_error(self, holder: str) -> OutputFolderError:
        return OutputFolderError(
            f"{self.path} is in use: {holder or 'another process'} holds {self.lock_name}; "
            f"wait for it to finish"
        )

    def _refuse_if_in_use(self) -> None:
        """Refuses a folder whose lock a live process holds."""
        holder = live_holder(self.path, self.lock_name)
        if holder is not None:
            raise self._in_use_error(holder)

    def _take_lock(self) -> None:
        lock_path = os.path.join(self.path, self.lock_name)
        tries = 0
        while True:
            # Never through a link (its target, outside the folder, would be overwritten).
            fd = open_lock(lock_path, create=True)
            file = os.fdopen(fd, "r+", encoding="utf-8", errors="replace")  # held until close
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                file.seek(0)
                holder = holder_line(file.read())
                file.close()
                tries += 1
                if tries >= _LOCK_TRIES:
                    raise self._in_use_error(holder) from None
                # Another starter's probe (`_refuse_if_in_use`) holds it for an instant: ask
                # again shortly before naming a holder.
                time.sleep(_LOCK_WAIT_SECONDS)
                continue
            # The holder before us may have removed the file between our open and our flock:
            # then our lock is on a name nobody else sees, and we take the new file instead.
            try:
                same_file = os.lstat(lock_path).st_ino == os.fstat(file.fileno()).st_ino
            except FileNotFoundError:
                same_file = False
            if same_file:
                break
            file.close()
        self._lock_file = file  # held from here: `close` removes it, even if the write fails
        HELD_HERE.add(os.path.realpath(self.path))
        file.seek(0)
        file.truncate()
        file.write(
            f"`{self.command}` (pid {os.getpid()} on host {socket.gethostname()}, since {_now()})\n"
        )
        file.flush()

    def close(self) -> None:
        """Releases the lock (the manifest stays: it is the folder's record)."""
        if self._lock_file is None:
            return
        with contextlib.suppress(OSError):
            os.remove(os.path.join(self.path, self.lock_name))
        with contextlib.suppress(OSError):  # unwritten bytes on a full disk: dropped
            self._lock_file.close()  # closing drops the flock
        self._lock_file = None
        HELD_HERE.discard(os.path.realpath(self.path))

    def discard_if_unused(self) -> bool:
        """After a run that failed before writing anything it could resume from: removes what
        it made (its empty claimed folders, its `rewritten` entries, the manifest, and the
        folder when this run made it and it is empty), so that the failure leaves the folder
        as it found it and the corrected rerun starts without `--overwrite`.

        Call it after `close()`. Does nothing (returns False) on a resumed run, or when a
        claimed entry holds a file that is not in `rewritten`. The manifest stays where the
        run replaced an earlier one's files and the folder holds more (a user's unlisted files):
        without it the folder would count as a user's.

        The `rewritten` entries given to the constructor count as unused: no work is lost
        with them.
        """
        if self._manifest is None or is_remote(self.path) or self.resumed:
            return False
        claimed = self._manifest["files"]
        kept = [n for n in claimed if n not in self.rewritten and holds_a_file(self.path, n)]
        if kept:
            return False
        for name in claimed:
            remove_entry(self.path, name)
        with contextlib.suppress(OSError):
            rest = [n for n in os.listdir(self.path) if not is_own_name(n)]
            if not rest or self._previous_files is None:
                os.remove(os.path.join(self.path, MANIFEST))
        if self._made_folder:
            with contextlib.suppress(OSError):
                os.rmdir(self.path)  # only when empty
        self._manifest = None  # discarded: nothing is claimed any more
        return True

    # === Writing ===
    def claim(self, *names: str) -> str:
        """Records `names` (relative to the folder) as this command's; returns the joined path.

        Only the first component of each name is recorded (`checkpoints/ckpt-1` claims
        `checkpoints`): an overwrite removes whole top-level entries it made.

        Args:
            *names: str. Relative paths, as `os.path.join` takes them.
        """
        relative = os.path.join(*names)
        if os.path.isabs(relative) or relative.split(os.sep)[0] in ("", "..", "."):
            raise ValueError(f"{relative!r} is not a name inside the output folder")
        top = relative.split(os.sep)[0]
        if self._manifest is not None and top not in self._manifest["files"]:
            self._manifest["files"].append(top)
            self._write_manifest()
        return os.path.join(self.path, relative)

    def owns(self, name: str) -> bool:
        """Whether the top-level entry `name` is recorded as written by this command."""
        return self._manifest is not None and name.split(os.sep)[0] in self._manifest["files"]


def _token() -> str:
    return atomic_write.process_token()
