"""Unpacking release archives (`albert_base_v2.tar.gz`) without letting any path escape."""

from __future__ import annotations

import pathlib
import posixpath
import tarfile

from albert_keras.convert.official_format import CheckpointError


def safe_extract_tar(archive: str | pathlib.Path, target_dir: str | pathlib.Path) -> pathlib.Path:
    """Extracts a tar archive (any compression) into `target_dir`, refusing unsafe members.

    Every member is checked before anything is written: absolute names, `..` components,
    links whose target leaves the folder, and device files are refused with an error naming the
    archive and the member. Extraction then runs under tarfile's own "data" filter as a second
    guard (it also drops setuid bits and odd permissions).

    Args:
        archive: str or Path. The `.tar`, `.tar.gz`, `.tgz` or `.tar.bz2` file.
        target_dir: str or Path. The folder to unpack into (created if absent).

    Returns:
        The target folder.

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
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for member in members:
                _check_member(archive, member)
            target.mkdir(parents=True, exist_ok=True)
            tar.extractall(target, members=members, filter="data")
    except (tarfile.TarError, EOFError, OSError) as error:
        if isinstance(error, FileNotFoundError) and not archive.exists():
            raise FileNotFoundError(f"{archive}: no such file") from error
        raise CheckpointError(f"{archive}: not a readable tar archive ({error})") from error
    return target


def _check_member(archive: pathlib.Path, member: tarfile.TarInfo) -> None:
    name = member.name
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise CheckpointError(f"{archive}: member {name!r} is a device or fifo; refused")
    if _is_absolute(name):
        raise CheckpointError(f"{archive}: member {name!r} has an absolute path; refused")
    if ".." in pathlib.PurePosixPath(name).parts:
        raise CheckpointError(f"{archive}: member {name!r} contains '..'; refused")
    if member.issym() or member.islnk():
        # A symlink's target is relative to the folder holding it; a hard link's to the root.
        base = posixpath.dirname(name) if member.issym() else ""
        resolved = posixpath.normpath(posixpath.join(base, member.linkname))
        if _is_absolute(member.linkname) or resolved == ".." or resolved.startswith("../"):
            raise CheckpointError(
                f"{archive}: link {name!r} -> {member.linkname!r} points outside the target "
                "folder; refused"
            )


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":")
