"""A fake full disk or read-only folder, for machines where a tmpfs cannot be mounted.

`install(folder, error)` makes this process's Python-level writes under `folder` fail as the
kernel would: opening a file for writing, making a folder, renaming into it and (read-only only)
removing from it raise `OSError(error)` (`errno.ENOSPC` or `errno.EROFS`). Reads are untouched.
Writes made by C++ (TensorFlow's file system, HDF5) do not go through these functions, which is
why the suite prefers a real tmpfs (tests/safety/safety_folders.py) and only falls back on this.
"""

import builtins
import errno
import io
import os

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def install(folder: str, error: int) -> None:
    """Makes writes under `folder` raise `OSError(error)` in this process from now on."""
    root = os.path.realpath(folder)

    def inside(path, dir_fd=None) -> bool:
        if isinstance(path, int):
            return False
        path = os.fsdecode(path)
        if dir_fd is not None and not os.path.isabs(path):
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        # The parent resolved, not the name: a link named in the folder is still in it.
        full = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))),
                            os.path.basename(path))  # fmt: skip
        return full == root or full.startswith(root + os.sep)

    def refuse(path):
        raise OSError(error, os.strerror(error), os.fsdecode(path))

    real_open, real_os_open, real_mkdir = builtins.open, os.open, os.mkdir
    real_rename, real_replace, real_remove, real_rmdir = os.rename, os.replace, os.remove, os.rmdir

    def fake_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+") and inside(file):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    def fake_os_open(path, flags, mode=0o777, *, dir_fd=None):
        if flags & _WRITE_FLAGS and inside(path, dir_fd):
            refuse(path)
        return real_os_open(path, flags, mode, dir_fd=dir_fd)

    def fake_mkdir(path, mode=0o777, *, dir_fd=None):
        if inside(path, dir_fd):
            refuse(path)
        return real_mkdir(path, mode, dir_fd=dir_fd)

    def moving(real):
        def fake(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
            if inside(dst, dst_dir_fd) or (error == errno.EROFS and inside(src, src_dir_fd)):
                refuse(dst)
            return real(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

        return fake

    def removing(real):
        def fake(path, *, dir_fd=None):
            if error == errno.EROFS and inside(path, dir_fd):
                refuse(path)
            return real(path, dir_fd=dir_fd)

        return fake

    builtins.open = io.open = fake_open
    os.open, os.mkdir = fake_os_open, fake_mkdir
    os.rename, os.replace = moving(real_rename), moving(real_replace)
    os.remove = os.unlink = removing(real_remove)
    os.rmdir = removing(real_rmdir)
