"""The data-safety suite's own machinery can fail: a careless command is caught, the fakes and
mounts refuse writes, and the runner reports exit status, stderr and timeouts as they are."""

import errno
import pathlib

import pytest
from safety_folders import read_only, restore_writable, tree_digest, unmount, user_folder


def test_a_command_that_empties_the_folder_is_caught(tmp_path, run_command):
    folder = user_folder(tmp_path / "user")
    before = tree_digest(tmp_path)
    result = run_command("careless_writer", [folder], cwd=tmp_path)
    after = tree_digest(tmp_path)
    assert result.rc == 0 and not result.timed_out
    changed = sorted(key for key in before if after.get(key) != before[key])
    assert "user/model.keras" in changed and "user/notes.txt" in changed
    assert after["user/model.keras"] != before["user/model.keras"]


def test_the_runner_reports_status_stderr_and_timeouts(tmp_path, run_command):
    failed = run_command("pipelines.train_vocab", ["--input", tmp_path / "none*.txt",
                         "--output_prefix", tmp_path / "spm"], cwd=tmp_path)  # fmt: skip
    assert failed.rc == 2 and failed.stderr.count("\n") == 1 and "none*.txt" in failed.stderr
    crashed = run_command("pipelines.train_vocab", ["--vocab_size", "x"], cwd=tmp_path)
    assert crashed.rc == 2 and "usage:" in crashed.stderr  # argparse's own exit 2
    slow = run_command("careless_writer_sleeps", [], cwd=tmp_path, timeout=1)
    assert slow.timed_out and slow.rc == -9


@pytest.mark.parametrize("mount", [True, False], ids=["tmpfs", "fallback"])
def test_the_read_only_folder_refuses_writes(tmp_path, run_command, mount_allowed, mount):
    if mount and not mount_allowed:
        pytest.skip("a tmpfs cannot be mounted here")
    folder = tmp_path / "ro"
    fake = read_only(folder, mount)
    try:
        result = run_command("careless_writer", [folder / "run"], cwd=tmp_path, fake=fake)
    finally:
        unmount(folder) if mount else restore_writable(folder)
    assert result.rc == 1 and "Traceback" in result.stderr
    assert f"[Errno {errno.EROFS}]" in result.stderr or f"[Errno {errno.EACCES}]" in result.stderr
    assert not pathlib.Path(folder / "run" / "model.keras").exists()
