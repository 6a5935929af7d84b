import io
import tarfile

import pytest

from albert_keras.convert.official_format import CheckpointError
from albert_keras.convert.safe_tar import safe_extract_tar


def make_tar(path, files=(), symlinks=(), hardlinks=()):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for kind, pairs in ((tarfile.SYMTYPE, symlinks), (tarfile.LNKTYPE, hardlinks)):
            for name, target in pairs:
                info = tarfile.TarInfo(name)
                info.type = kind
                info.linkname = target
                tar.addfile(info)
    return path


def test_extracts_a_release_layout(tmp_path):
    archive = make_tar(
        tmp_path / "albert_base.tar.gz",
        files=[("albert_base/albert_config.json", b"{}"), ("albert_base/30k-clean.model", b"x")],
        symlinks=[("albert_base/spiece.model", "30k-clean.model")],
    )
    target = safe_extract_tar(archive, tmp_path / "out")
    assert (target / "albert_base" / "albert_config.json").read_bytes() == b"{}"
    assert (target / "albert_base" / "spiece.model").read_bytes() == b"x"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"files": [("../evil.txt", b"x")]}, "contains '..'"),
        ({"files": [("a/../../evil.txt", b"x")]}, "contains '..'"),
        ({"files": [("/etc/evil.txt", b"x")]}, "absolute path"),
        ({"symlinks": [("a/link", "../../outside")]}, "points outside"),
        ({"symlinks": [("link", "/etc/passwd")]}, "points outside"),
        ({"hardlinks": [("link", "../outside")]}, "points outside"),
    ],
)
def test_refuses_members_that_leave_the_folder(tmp_path, kwargs, message):
    archive = make_tar(tmp_path / "bad.tar.gz", **kwargs)
    with pytest.raises(CheckpointError, match=message) as error:
        safe_extract_tar(archive, tmp_path / "out")
    assert "bad.tar.gz" in str(error.value)
    # Checked before anything is written.
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "evil.txt").exists()


def test_truncated_archive_is_a_clear_error(tmp_path):
    archive = make_tar(tmp_path / "ok.tar.gz", files=[("a.bin", bytes(range(256)) * 400)])
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="ok.tar.gz: not a readable tar archive"):
        safe_extract_tar(archive, tmp_path / "out")


def test_missing_archive(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.tar.gz"):
        safe_extract_tar(tmp_path / "nope.tar.gz", tmp_path / "out")
