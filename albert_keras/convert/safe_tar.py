"""Unpacking release archives (`albert_base_v2.tar.gz`): regular files and folders only.

Google's releases hold nothing else, so nothing else is unpacked. Every member is checked before
the first byte is written, and the files are then written by this module, not by tarfile's
`extract`: its `filter="data"` guard is bypassed on CPython before 3.11.13 by an archive that
chains symlinks through long folder names past PATH_MAX (CVE-2025-4517), and a guard that
depends on the interpreter's patch level is no guard. Refused: every symlink, hard link,
character or block device, FIFO and unknown member type; names that are absolute, hold a `..`
component or a NUL byte; a name given twice, or used both as a file and as a folder; a component
longer than NAME_MAX or a path longer than PATH_MAX. Folders are made one component at a time
relative to the open folder above them (`dir_fd`), and files opened with
`O_CREAT | O_EXCL | O_NOFOLLOW`, so even a link planted while unpacking is never followed.
"""

from __future__ import annotations

import lzma
import os
import pathlib
import posixpath
import tarfile
import zlib

from albert_keras.convert.official_format import CheckpointError
from albert_keras_contracts.output_folder import os_error_line

_CHUNK = 1 << 20
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_KINDS = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO",
}
# What a damaged archive raises while it is read (gzip and bz2 raise OSError subclasses).
_READ_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError)


class _WriteFailed(Exception):
    """An OSError met while writing `path` (a full disk, a read-only folder), not while reading."""

    def __init__(self, error: OSError, path: pathlib.Path):
        super().__init__(str(error))
        self.error = error
        self.path = path


def safe_extract_tar(archive: str | pathlib.Path, target_dir: str | pathlib.Path) -> pathlib.Path:
    """Unpacks the regular files and folders of a tar archive (any compression) into `target_dir`.

    All members are checked first; any other kind of member (link, device, FIFO) or a name that
    would leave `target_dir` is refused with one line naming the archive and the member, and
    nothing is written. Files get mode 0644 and folders 0755 (less the umask): no setuid bits,
    no owners. A read error while writing (a truncated archive, a full disk) removes what this
    call wrote before the error is raised.

    Args:
        archive: str or Path. The `.tar`, `.tar.gz`, `.tgz`, `.tar.bz2` or `.tar.xz` file.
        target_dir: str or Path. The folder to unpack into: absent (it is made) or empty.

    Returns:
        The target folder.

    Raises:
        CheckpointError: an unsafe member, an unreadable archive, or a target with files in it.
        FileNotFoundError: `archive` does not exist.

    Example:
    >>> import tarfile
    >>> with tarfile.open("albert.tar.gz", "w:gz") as tar:
    ...     tar.add("spm.model", arcname="albert/30k-clean.model")
    >>> safe_extract_tar("albert.tar.gz", "unpacked")
    PosixPath('unpacked')
    >>> os.listdir("unpacked/albert")
    ['30k-clean.model']
    """
    archive = pathlib.Path(archive)
    target = pathlib.Path(target_dir)
    if not archive.exists():
        raise FileNotFoundError(f"{archive}: no such file")
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()  # reads every header: a truncated archive fails here
            plan = _checked_plan(archive, members, target)
            _check_target(target)
            _write_members(tar, plan, target)
    except _WriteFailed as failed:
        raise CheckpointError(os_error_line(failed.error, failed.path)) from None
    except _READ_ERRORS as error:
        reason = str(error).splitlines()[0].rstrip(":") if str(error) else type(error).__name__
        raise CheckpointError(f"{archive}: not a readable tar archive ({reason})") from None
    return target


def _checked_plan(
    archive: pathlib.Path, members: list[tarfile.TarInfo], target: pathlib.Path
) -> list[tuple[tarfile.TarInfo, tuple[str, ...]]]:
    """Each member with its name's components, after refusing any member that is not safe."""
    path_max, name_max = _limits(target)
    base = len(os.fsencode(os.path.abspath(target))) + 1
    files: set[tuple[str, ...]] = set()
    folders: set[tuple[str, ...]] = set()
    plan = []
    for member in members:
        parts = _checked_parts(archive, member, base, path_max, name_max)
        if not parts:  # "." or "./": the target itself
            continue
        ancestors = {parts[:i] for i in range(1, len(parts))}
        if parts in files or (member.isreg() and parts in folders) or ancestors & files:
            raise _refusal(archive, member, "is given twice, or as both a file and a folder")
        (files if member.isreg() else folders).add(parts)
        folders |= ancestors
        plan.append((member, parts))
    return plan


def _checked_parts(
    archive: pathlib.Path, member: tarfile.TarInfo, base: int, path_max: int, name_max: int
) -> tuple[str, ...]:
    name = member.name
    if not (member.isreg() or member.isdir()):
        kind = _KINDS.get(member.type, f"of type {member.type!r}")
        link = f" to {member.linkname!r}" if member.issym() or member.islnk() else ""
        raise _refusal(archive, member, f"is {kind}{link}")
    if "\x00" in name:
        raise _refusal(archive, member, "has a NUL byte in its name")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise _refusal(archive, member, "has an absolute path")
    normalized = posixpath.normpath(name)
    if ".." in pathlib.PurePosixPath(name).parts or normalized.startswith(".."):
        raise _refusal(archive, member, "contains '..'")
    parts = tuple(part for part in normalized.split("/") if part not in ("", "."))
    if any(len(os.fsencode(part)) > name_max for part in parts):
        raise _refusal(archive, member, f"has a name component over {name_max} bytes")
    if base + len(os.fsencode(normalized)) >= path_max:
        raise _refusal(archive, member, f"unpacks to a path over {path_max} bytes")
    return parts


def _refusal(archive: pathlib.Path, member: tarfile.TarInfo, why: str) -> CheckpointError:
    return CheckpointError(
        f"{archive}: member {member.name!r} {why}; refused, nothing unpacked (an official "
        "release holds only regular files and folders, inside its own folder)"
    )


def _limits(target: pathlib.Path) -> tuple[int, int]:
    """PATH_MAX and NAME_MAX where `target` is (4096 and 255 where they cannot be asked)."""
    where = target if target.exists() else target.parent
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        return os.pathconf(where, "PC_PATH_MAX"), os.pathconf(where, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 4096, 255


def _check_target(target: pathlib.Path) -> None:
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise CheckpointError(
            f"{target} is not a folder: give a new or empty folder to unpack into"
        )
    if target.is_dir() and any(target.iterdir()):
        raise CheckpointError(f"{target} holds files: give a new or empty folder to unpack into")


def _write_members(tar: tarfile.TarFile, plan: list, target: pathlib.Path) -> None:
    """Writes the planned members; on any error removes what it wrote, then raises."""
    made_target = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True)
        root = os.open(target, _FOLDER_FLAGS & ~os.O_NOFOLLOW)  # the caller's own folder
    except OSError as error:
        raise _WriteFailed(error, target) from None
    written: list[tuple[tuple[str, ...], bool]] = []  # (parts, is_folder), in creation order
    try:
        for member, parts in plan:
            if member.isdir():
                os.close(_open_folder(root, parts, written, target))
            else:
                parent = _open_folder(root, parts[:-1], written, target)
                try:
                    _write_file(tar, member, parent, parts, written, target)
                finally:
                    os.close(parent)
    except BaseException:
        _remove_written(target, written, made_target)
        raise
    finally:
        os.close(root)


def _open_folder(root: int, parts: tuple[str, ...], written: list, target: pathlib.Path) -> int:
    """An fd of `parts` under `root`, making each missing folder; never follows a link."""
    fd = os.dup(root)
    for i, part in enumerate(parts):
        try:
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
                written.append((parts[: i + 1], True))
            except FileExistsError:
                pass  # made for an earlier member; opened below without following links
            child = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
        except OSError as error:
            raise _WriteFailed(error, target.joinpath(*parts[: i + 1])) from None
        finally:
            os.close(fd)
        fd = child
    return fd


def _write_file(tar, member, parent: int, parts: tuple[str, ...], written: list, target) -> None:
    """Copies `member`'s bytes into a new file `parts[-1]` under the folder fd `parent`."""
    source = tar.extractfile(member)
    path = target.joinpath(*parts)
    try:
        fd = os.open(parts[-1], _FILE_FLAGS, 0o644, dir_fd=parent)
    except OSError as error:
        raise _WriteFailed(error, path) from None
    written.append((parts, False))
    copied = 0
    try:
        while chunk := source.read(_CHUNK):
            view = memoryview(chunk)
            while view:  # os.write may write less than it is given
                view = view[_write_some(fd, view, path) :]
            copied += len(chunk)
    finally:
        os.close(fd)
    if copied != member.size:
        raise tarfile.ReadError(
            f"member {member.name!r} ends after {copied} of {member.size} bytes"
        )


def _write_some(fd: int, data: memoryview, path: pathlib.Path) -> int:
    try:
        return os.write(fd, data)
    except OSError as error:
        raise _WriteFailed(error, path) from None


def _remove_written(target: pathlib.Path, written: list, made_target: bool) -> None:
    for parts, is_folder in reversed(written):
        path = target.joinpath(*parts)
        try:
            os.rmdir(path) if is_folder else os.unlink(path)
        except OSError:
            pass  # best effort: the error being raised is the one to report
    if made_target:
        try:
            target.rmdir()
        except OSError:
            pass
