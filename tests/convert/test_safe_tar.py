"""safe_extract_tar unpacks regular files and folders only, and refuses anything else before
writing a byte: every link, device and FIFO member, names leaving the target, and the symlink
chains that get past tarfile's own "data" filter on CPython before 3.11.13 (CVE-2025-4517)."""

import errno
import hashlib
import io
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest
from release_tarball import write_release_tarball

from albert_keras.convert.official_format import CheckpointError
from albert_keras.convert.safe_tar import safe_extract_tar

# The CVE's component count: 16 symlinked folders whose expansion overflows PATH_MAX.
STEPS = "abcdefghijklmnop"


def tree_digest(root: pathlib.Path) -> dict[str, str]:
    """Every entry under `root`: files by sha256, links by their target, folders by name."""
    digest = {}
    for folder, names, files in os.walk(root):
        for name in names + files:
            path = pathlib.Path(folder, name)
            key = str(path.relative_to(root))
            if path.is_symlink():
                digest[key] = "link:" + os.readlink(path)
            elif path.is_dir():
                digest[key] = "folder"
            else:
                digest[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


class Archive:
    """Writes tar members one by one with tarfile, as a crafted archive would hold them."""

    def __init__(self, path: pathlib.Path, mode: str = "w:gz"):
        self.path = path
        self.tar = tarfile.open(path, mode, format=tarfile.PAX_FORMAT)  # noqa: SIM115 (close())

    def file(self, name, data=b"x"):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        self.tar.addfile(info, io.BytesIO(data))

    def member(self, name, kind, linkname=""):
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = linkname
        info.mode = 0o777 if kind == tarfile.DIRTYPE else 0o644
        self.tar.addfile(info)

    def close(self):
        self.tar.close()
        return self.path


def assert_refused_untouched(tmp_path, archive, target, match):
    """Refused in one line naming the archive; nothing anywhere under tmp_path changed."""
    before = tree_digest(tmp_path)
    with pytest.raises(CheckpointError, match=match) as error:
        safe_extract_tar(archive, target)
    message = str(error.value)
    assert str(archive) in message and "\n" not in message
    assert tree_digest(tmp_path) == before
    assert not os.path.lexists(target)
    return message


def test_a_release_layout_unpacks_byte_for_byte(tmp_path):
    def write_checkpoint(folder):
        (folder / "albert_config.json").write_text('{"hidden_size": 16}')
        (folder / "model.ckpt-best.index").write_bytes(bytes(range(256)) * 3)
        (folder / "model.ckpt-best.data-00000-of-00001").write_bytes(os.urandom(300_000))

    spm = tmp_path / "spm.model"
    spm.write_bytes(b"sentencepiece")
    archive = write_release_tarball(tmp_path / "albert_tiny.tar.gz", write_checkpoint, spm)
    staging = tmp_path / "albert_tiny.tar.gz.staging"
    target = safe_extract_tar(archive, tmp_path / "out")
    assert target == tmp_path / "out"
    assert tree_digest(target) == tree_digest(staging)
    assert sorted(os.listdir(target / "albert_tiny")) == [
        "30k-clean.model",
        "albert_config.json",
        "model.ckpt-best.data-00000-of-00001",
        "model.ckpt-best.index",
    ]
    mode = os.stat(target / "albert_tiny" / "albert_config.json").st_mode
    assert mode & 0o7000 == 0  # no setuid, setgid or sticky bit


@pytest.mark.skipif(shutil.which("tar") is None, reason="needs the tar command")
def test_an_archive_made_by_gnu_tar_with_dot_entries_unpacks(tmp_path):
    staging = tmp_path / "staging"
    (staging / "albert_base" / "empty").mkdir(parents=True)
    (staging / "albert_base" / "30k-clean.model").write_bytes(b"spm")
    archive = tmp_path / "release.tar.gz"
    subprocess.run(["tar", "-czf", archive, "-C", staging, "."], check=True)
    target = safe_extract_tar(archive, tmp_path / "out")
    assert tree_digest(target) == tree_digest(staging)


KINDS = [
    (tarfile.SYMTYPE, "30k-clean.model", "is a symbolic link to '30k-clean.model'"),
    (tarfile.SYMTYPE, "../../outside", "is a symbolic link to '../../outside'"),
    (tarfile.SYMTYPE, "/etc/passwd", "is a symbolic link to '/etc/passwd'"),
    (tarfile.LNKTYPE, "albert/30k-clean.model", "is a hard link to"),
    (tarfile.LNKTYPE, "/etc/passwd", "is a hard link to '/etc/passwd'"),
    (tarfile.CHRTYPE, "", "is a character device"),
    (tarfile.BLKTYPE, "", "is a block device"),
    (tarfile.FIFOTYPE, "", "is a FIFO"),
    (b"Z", "", "is of type b'Z'"),
]


@pytest.mark.parametrize("kind, linkname, match", KINDS, ids=lambda x: repr(x)[:20])
def test_every_member_type_but_files_and_folders_is_refused(tmp_path, kind, linkname, match):
    archive = Archive(tmp_path / "bad.tar.gz")
    archive.file("albert/30k-clean.model", b"spm")  # a good member first: still not written
    archive.member("albert/odd", kind, linkname)
    archive.file("albert/albert_config.json", b"{}")
    message = assert_refused_untouched(
        tmp_path, archive.close(), tmp_path / "out", "member 'albert/odd' " + match
    )
    assert message.endswith("refused, nothing unpacked " + MESSAGE_TAIL)


MESSAGE_TAIL = "(an official release holds only regular files and folders, inside its own folder)"


@pytest.mark.parametrize(
    "names, match",
    [
        (["../evil.txt"], "member '../evil.txt' contains '..'"),
        (["a/../../evil.txt"], "contains '..'"),
        (["a/b/../c"], "contains '..'"),  # stays inside, but no release needs '..'
        (["/tmp/evil.txt"], "member '/tmp/evil.txt' has an absolute path"),
        (["C:/evil.txt"], "has an absolute path"),
        (["a/x.txt", "a/x.txt"], "member 'a/x.txt' is given twice"),
        (["a", "a/x.txt"], "member 'a/x.txt' is given twice, or as both a file and a folder"),
        (["n" * 256], "has a name component over 255 bytes"),
    ],
)
def test_names_that_leave_or_clash_are_refused(tmp_path, names, match):
    archive = Archive(tmp_path / "bad.tar")
    for name in names:
        archive.file(name)
    assert_refused_untouched(tmp_path, archive.close(), tmp_path / "out", match)


def test_a_symlink_chain_that_passes_a_textual_check_is_refused(tmp_path):
    # "e" -> "d/up/.." reads as "d", but d/up -> ".." makes it the target's parent: the old
    # check let it through and only tarfile's filter stopped "e/evil.txt".
    archive = Archive(tmp_path / "chain.tar.gz")
    archive.member("d", tarfile.DIRTYPE)
    archive.member("d/up", tarfile.SYMTYPE, "..")
    archive.member("e", tarfile.SYMTYPE, "d/up/..")
    archive.file("e/evil.txt", b"outside")
    outer = tmp_path / "outer"
    outer.mkdir()
    assert_refused_untouched(
        tmp_path, archive.close(), outer / "out", "member 'd/up' is a symbolic"
    )
    assert not (outer / "evil.txt").exists()


def path_max_attack(archive_path: pathlib.Path, destination: pathlib.Path) -> pathlib.Path:
    """The CVE-2025-4517 archive, as CPython's own regression test builds it.

    16 folders of ~247 characters, each reached through a one-letter symlink, so the unexpanded
    name fits in PATH_MAX but its expansion does not; os.path.realpath then stops resolving and
    the filter's check is made on a path that is not the one written. The last link climbs 16
    levels out of `destination`; a hard link through it then overwrites `flag` beside it.
    """
    path_max = os.pathconf(destination.parent, "PC_PATH_MAX")
    component = "d" * ((path_max - len(str(destination)) - 1) // (len(STEPS) + 1))
    archive = Archive(archive_path)
    path = ""
    for step in STEPS:
        archive.member(os.path.join(path, component), tarfile.DIRTYPE)
        archive.member(os.path.join(path, step), tarfile.SYMTYPE, component)
        path = os.path.join(path, component)
    link = os.path.join(*STEPS, "l" * 254)
    archive.member(link, tarfile.SYMTYPE, os.path.join(*[".."] * len(STEPS)))
    archive.member("escape", tarfile.SYMTYPE, os.path.join(link, ".."))
    archive.member("flaglink", tarfile.LNKTYPE, os.path.join("escape", "flag"))
    archive.file("flaglink", b"overwrite")
    archive.file("escape/newfile", b"new")
    return archive.close()


def test_the_path_max_symlink_chain_is_refused_before_anything_is_written(tmp_path):
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "flag").write_text("the user's file")
    target = outer / "dest"
    archive = path_max_attack(tmp_path / "cve-2025-4517.tar.gz", target)
    assert_refused_untouched(tmp_path, archive, target, "member 'a' is a symbolic link to 'ddd")
    assert (outer / "flag").read_text() == "the user's file"
    assert not (outer / "newfile").exists()


@pytest.mark.skipif(
    sys.version_info >= (3, 11, 13), reason="the interpreter's filter is fixed from 3.11.13"
)
def test_the_path_max_archive_gets_past_this_interpreters_own_filter(tmp_path):
    # Why safe_extract_tar writes the files itself: on this Python (CI's too), tarfile's
    # filter="data" writes outside the target for the archive refused above.
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "flag").write_text("the user's file")
    target = outer / "dest"
    archive = path_max_attack(tmp_path / "cve-2025-4517.tar.gz", target)
    target.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    assert (outer / "flag").read_text() == "overwrite"
    assert (outer / "newfile").read_text() == "new"


def test_a_path_longer_than_path_max_is_refused(tmp_path):
    # Regular folders only, but deeper than PATH_MAX: no caller could open the files by name.
    path_max = os.pathconf(tmp_path, "PC_PATH_MAX")
    deep = "/".join(["d" * 250] * (path_max // 251 + 1))
    archive = Archive(tmp_path / "deep.tar.gz")
    archive.file("albert/30k-clean.model", b"spm")
    archive.file(deep + "/x.bin")
    assert_refused_untouched(
        tmp_path, archive.close(), tmp_path / "out", f"unpacks to a path over {path_max} bytes"
    )


@pytest.mark.parametrize("suffix, mode", [(".tar.gz", "w:gz"), (".tar", "w")])
def test_a_truncated_archive_is_one_line_and_leaves_nothing(tmp_path, suffix, mode):
    archive = Archive(tmp_path / f"cut{suffix}", mode)
    archive.file("albert/a.bin", bytes(range(256)) * 400)
    archive.file("albert/b.bin", os.urandom(200_000))
    path = archive.close()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert_refused_untouched(tmp_path, path, tmp_path / "out", r"cut\.tar.*: not a readable tar")


def test_a_file_that_is_not_a_tarball_is_one_line(tmp_path):
    path = tmp_path / "notes.tar.gz"
    path.write_text("hello\n")
    assert_refused_untouched(tmp_path, path, tmp_path / "out", "not a readable tar archive")


def test_missing_archive(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.tar.gz: no such file"):
        safe_extract_tar(tmp_path / "nope.tar.gz", tmp_path / "out")


def test_a_target_holding_files_is_refused(tmp_path):
    archive = Archive(tmp_path / "ok.tar.gz")
    archive.file("albert/x.bin")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep")
    with pytest.raises(CheckpointError, match="out holds files: give a new or empty folder"):
        safe_extract_tar(archive.close(), tmp_path / "out")
    assert os.listdir(tmp_path / "out") == ["mine.txt"]


def test_a_full_disk_while_writing_is_one_line_and_removes_what_was_written(tmp_path, monkeypatch):
    archive = Archive(tmp_path / "ok.tar.gz")
    archive.file("albert/a.bin", b"a" * 10)
    archive.file("albert/sub/b.bin", b"b" * 10)
    path = archive.close()
    real_write = os.write
    calls = []

    def write(fd, data):
        calls.append(fd)
        if len(calls) == 2:  # the second file's first write
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(CheckpointError) as error:
        safe_extract_tar(path, tmp_path / "out")
    monkeypatch.undo()
    assert str(error.value) == (
        f"{tmp_path / 'out' / 'albert' / 'sub' / 'b.bin'}: no space left on the device; "
        "free some space and rerun"
    )
    assert not (tmp_path / "out").exists()


def test_convert_and_from_preset_refuse_the_attack_in_one_line(tmp_path, capsys):
    # The command line and the preset loader unpack through safe_extract_tar, into a temporary
    # folder of their own: the archive is refused before that folder gets a byte.
    from albert_keras.presets.preset_loader import load_pretrainer
    from albert_keras_cli.main import main

    archive = path_max_attack(tmp_path / "albert_base_v2.tar.gz", tmp_path / "unpacked")
    before = tree_digest(tmp_path)
    argv = ["convert", "--from", "tf1", str(archive), "--output", str(tmp_path / "a.keras")]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(
        f"albert-keras convert: error: {archive}: member 'a' is a symbolic link to 'ddd"
    )
    with pytest.raises(CheckpointError, match=f"{archive}: member 'a' is a symbolic link"):
        load_pretrainer(str(archive))
    assert tree_digest(tmp_path) == before
