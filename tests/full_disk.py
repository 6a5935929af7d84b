"""A disk that fills up on demand, for tests of what a command does when writes fail (ENOSPC).

    from full_disk import full_disk

    with full_disk(tmp_path) as disk:          # disk.root: a folder on the small "disk"
        out = disk.root / "run"
        job = subprocess.Popen(argv_writing_into(out), env=disk.env)
        ...                                   # let it write a while
        disk.fill()                           # from now on, writes under disk.root fail
        job.wait(timeout=300)                 # ... with errno.ENOSPC (job.kill() if it hangs)
        disk.free()                           # space again: a rerun can finish

Two kinds, the same API:
- **tmpfs** (as root, where `mount` works): a real file system of `size_mb`; `fill()` writes a
  filler file (`disk.root.parent / "filler"`, outside `disk.root`) until the kernel says ENOSPC,
  so every writer fails, TensorFlow's and HDF5's C code included.
- **fake** (otherwise, or with `kind="fake"`): a `sitecustomize.py` put first on the subprocess's
  PYTHONPATH patches `open` / `io.open`: while the flag file exists, a `write` to a file opened for
  writing under `disk.root` raises `OSError(ENOSPC)` (the file itself is created, as on a real
  full disk). Only Python-level writes fail; C libraries writing by themselves do not. The fake
  acts in subprocesses run with `disk.env` only, never in the test's own process.

`disk.kind` says which one a test got (`"tmpfs"` or `"fake"`); `ALBERT_KERAS_FULL_DISK=fake`
forces the fake everywhere.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
import subprocess
import sys
from collections.abc import Iterator

_SITECUSTOMIZE = '''\
"""Written by tests/full_disk.py: writes under FULL_DISK_ROOT fail with ENOSPC while
FULL_DISK_FLAG exists."""
import builtins
import errno
import io
import os

_ROOT = os.path.realpath(os.environ["FULL_DISK_ROOT"]) + os.sep
_FLAG = os.environ["FULL_DISK_FLAG"]
_open = io.open


def _full():
    return os.path.exists(_FLAG)


def _no_space(path):
    return OSError(errno.ENOSPC, "No space left on device", path)


class _FullFile:
    """The file `open` returned, whose writes fail while the disk is full."""

    def __init__(self, file, path):
        self._file, self._path = file, path

    def write(self, data):
        if _full() and len(data):
            raise _no_space(self._path)
        return self._file.write(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        return self._file.flush()

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __iter__(self):
        return iter(self._file)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._file.close()


def _patched_open(file, mode="r", *args, **kwargs):
    opened = _open(file, mode, *args, **kwargs)
    writing = any(flag in mode for flag in "wax+")
    if writing and isinstance(file, (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(file))
        if path.startswith(_ROOT):
            return _FullFile(opened, path)
    return opened


builtins.open = io.open = _patched_open
'''


class FullDisk:
    """A folder on a disk that `fill` makes full and `free` empties again (see the module).

    Args:
        root: pathlib.Path. The folder to write into (exists).
        env: dict. The environment a subprocess needs to see the disk (the fake needs it).
        kind: str. `"tmpfs"` or `"fake"`.
    """

    def __init__(self, root: pathlib.Path, env: dict, kind: str, flag: pathlib.Path):
        self.root, self.env, self.kind, self._flag = root, env, kind, flag

    def fill(self) -> None:
        """From now on every write under `root` fails with ENOSPC."""
        if self.kind == "fake":
            self._flag.write_text("full\n")
            return
        filler = os.open(self._flag, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for chunk in (1 << 20, 1 << 12, 1):
                try:
                    while True:
                        os.write(filler, b"\0" * chunk)
                except OSError as error:
                    if error.errno != errno.ENOSPC:
                        raise
        finally:
            os.close(filler)

    def free(self) -> None:
        """Space again."""
        with contextlib.suppress(FileNotFoundError):
            self._flag.unlink()


def can_mount_tmpfs() -> bool:
    """Whether this process may mount a tmpfs (root on Linux, and a kernel that lets it)."""
    return sys.platform.startswith("linux") and os.geteuid() == 0


@contextlib.contextmanager
def full_disk(tmp_path: pathlib.Path, *, size_mb: int = 64, kind: str | None = None
              ) -> Iterator[FullDisk]:  # fmt: skip
    """A `FullDisk` under `tmp_path` (a pytest `tmp_path`), unmounted or removed at the end.

    Args:
        tmp_path: pathlib.Path. An empty folder of the test's.
        size_mb: int. The tmpfs's size (room for what the test writes before `fill`).
        kind: `"tmpfs"`, `"fake"` or None: tmpfs where it can be mounted, else the fake.
    """
    kind = kind or os.environ.get("ALBERT_KERAS_FULL_DISK")
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = False
    if kind in (None, "tmpfs") and can_mount_tmpfs():
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(mount)],
            check=False,
            capture_output=True,
            timeout=60,
        )
        mounted = done.returncode == 0
    if kind == "tmpfs" and not mounted:
        import pytest

        pytest.skip("a tmpfs cannot be mounted here (not root, or no permission)")
    root = mount / "root"
    root.mkdir()
    if mounted:
        disk = FullDisk(root, dict(os.environ), "tmpfs", mount / "filler")
    else:
        site = tmp_path / "full_disk_site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        flag = tmp_path / "disk-is-full"
        path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "PYTHONPATH": path, "FULL_DISK_ROOT": str(root),
               "FULL_DISK_FLAG": str(flag)}  # fmt: skip
        disk = FullDisk(root, env, "fake", flag)
    try:
        yield disk
    finally:
        disk.free()
        if mounted:
            subprocess.run(
                ["umount", "-l", str(mount)], check=False, capture_output=True, timeout=60
            )
