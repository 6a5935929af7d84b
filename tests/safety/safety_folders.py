"""The five places the data-safety suite sends each command's output, and the tree checksum.

(a) `user_folder`: a folder holding a user's files, some named as our outputs are.
(b) `other_output`: a folder another command made (its manifest, its claimed files).
(c) `LiveHolder`: a folder another live process is writing (it holds the lock, and sleeps).
(d) a full disk: tests/full_disk.py's (a tmpfs filled to the last byte, or its fake).
(e) `read_only`: a tmpfs remounted read-only; without mount rights, `chmod a-w` (it stops
    anyone but root) or, as root, tests/safety/fake_filesystem.py's fake (a
    `{"folder", "errno"}` the child installs).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from albert_keras_contracts.output_folder import LOCK, MANIFEST, OutputFolder

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
# A user's files: some unrelated, some named as the commands' own outputs are.
USER_FILES = {
    "notes.txt": b"my notes, not albert-keras's\n",
    "model.keras": b"the user's own model, not a zip albert-keras wrote",
    "spm.model": b"the user's own vocabulary",
    "summary.json": b'{"mine": true}\n',
    "predictions.jsonl": b'{"label": 1}\n',
    "checkpoints/ckpt-1.npz": b"the user's checkpoint",
    "photos/cat.jpg": bytes(range(256)) * 4,
    ".hidden": b"",
}


def tree_digest(root: str | os.PathLike) -> dict[str, str]:
    """Every entry under `root`: files by sha256, links by target, folders as "folder"."""
    digest = {}
    for folder, names, files in os.walk(root):
        for name in names + files:
            path = os.path.join(folder, name)
            key = os.path.relpath(path, root)
            if os.path.islink(path):
                digest[key] = "link:" + os.readlink(path)
            elif os.path.isdir(path):
                digest[key] = "folder"
            else:
                with open(path, "rb") as file:
                    digest[key] = hashlib.sha256(file.read()).hexdigest()
    return digest


def write_user_files(folder: pathlib.Path) -> None:
    for name, data in USER_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def user_folder(folder: pathlib.Path) -> pathlib.Path:
    """(a) `folder` holding USER_FILES."""
    folder.mkdir(parents=True)
    write_user_files(folder)
    return folder


def other_output(folder: pathlib.Path, command: str, model: str | None) -> pathlib.Path:
    """(b) A folder `command` wrote: its manifest, `model.keras` (a copy of `model`, the
    input the command under test reads from here), `checkpoints/`, `summary.json`."""
    with OutputFolder(folder, command, {"seed": 1}) as out:
        if model is not None:
            shutil.copyfile(model, out.claim("model.keras"))
        pathlib.Path(out.claim("checkpoints")).mkdir()
        pathlib.Path(out.claim("checkpoints", "ckpt-1.npz")).write_bytes(b"step 1")
        pathlib.Path(out.claim("summary.json")).write_text('{"step": 1}\n')
    return folder


# The holder of case (c): claims a file (named as no command's output: the lock must be what
# refuses, not a name clash), writes it, says so, then sleeps holding the lock.
HOLDER = """
import pathlib, sys, time
from albert_keras_contracts.output_folder import OutputFolder
out = OutputFolder(sys.argv[1], sys.argv[2], {"seed": 1}).open()
pathlib.Path(out.claim("live-run.log")).write_text("step 1 of the live run")
print("ready", flush=True)
time.sleep(600)
"""


class LiveHolder:
    """(c) A process holding `folder`'s lock as a run of `command` does, until `stop()`."""

    def __init__(self, folder: pathlib.Path, command: str):
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(folder), command],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            self.stop()
            raise RuntimeError(f"the lock holder did not start: {line!r}")

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.process.stdout.close()


# === Mounts: a real full disk and a real read-only folder where this user may mount ===
def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


def unmount(folder: pathlib.Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def can_mount() -> bool:
    """Whether this process may mount a tmpfs (root, or a container that allows it)."""
    if shutil.which("mount") is None:
        return False
    probe = pathlib.Path(tempfile.mkdtemp(prefix="albert-safety-probe-"))
    try:
        if not _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)):
            return False
        unmount(probe)
        return True
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def read_only(folder: pathlib.Path, mount: bool) -> dict | None:
    """(e) A read-only `folder` holding USER_FILES and an empty `run/`; returns the fake, if any."""
    folder.mkdir(parents=True)
    if mount:
        assert _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder))
    write_user_files(folder)
    (folder / "run").mkdir()
    if mount:
        assert _mount("-o", "remount,ro", str(folder))
        return None
    if os.geteuid() != 0:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        return None
    return {"folder": str(folder), "errno": errno.EROFS}


def restore_writable(folder: pathlib.Path) -> None:
    """Undoes `read_only`'s chmod so that pytest can remove the folder."""
    for path in [folder, *folder.rglob("*")]:
        with contextlib.suppress(OSError):
            path.chmod(0o755 if path.is_dir() else 0o644)


def unexpected_new_entries(before: dict, after: dict) -> list[str]:
    """Entries a refusal added besides empty folders and our own manifest and lock files."""
    return sorted(
        key
        for key in set(after) - set(before)
        if after[key] != "folder" and os.path.basename(key) not in (MANIFEST, LOCK)
    )
