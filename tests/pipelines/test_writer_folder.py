"""The data writer's output folder (`pipelines.writer_folder`): one run at a time, never into a
user's or another command's folder, `--overwrite` removes only the writer's own files, and a run
that fails on bad input leaves nothing behind, locally and with the Beam runner alike."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

from albert_keras_contracts.output_folder import MANIFEST, OutputFolder, OutputFolderError
from pipelines import pretraining_data
from pipelines.pretraining_data import main
from pipelines.record_writer import read_progress
from pipelines.writer_folder import writer_folder

SPM = "vocab/30k-clean.reconstructed.model"
BOOK = "corpus/gutenberg/1342-0.txt"
REPO = os.path.dirname(os.path.dirname(pretraining_data.__file__))


@pytest.fixture
def small_book(shared_data, tmp_path):
    path = tmp_path / "book.txt"
    path.write_bytes((shared_data / BOOK).read_bytes()[:60_000])
    return path


def _arguments(book, spm, out, *extra):
    return [
        "--input", str(book), "--spm_model", str(spm), "--output_dir", str(out),
        "--max_seq_length", "64", "--dupe_factor", "1", "--num_shards", "2", "--quiet", *extra,
    ]  # fmt: skip


def _refused(arguments, capsys) -> str:
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith("pretraining_data: error: ") and error.count("\n") == 1
    return error


def _checksums(folder):
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in pathlib.Path(folder).rglob("*")
        if path.is_file()
    }


# The first run, slowed down so that it is still writing when the second one starts.
SLOW_RUN = """
import sys, time
import pipelines.pretraining_data, pipelines.shard_worker as worker
make_records = worker.make_records
def slow(*args):
    time.sleep(3)
    return make_records(*args)
worker.make_records = slow
sys.exit(pipelines.pretraining_data.main(sys.argv[1:]))
"""


def test_a_second_run_while_the_first_writes_is_refused_naming_it(
    small_book, shared_data, tmp_path, capsys
):
    # The case: two runs into one folder, seeds 9 and 10, started 0.5 s apart.
    out = tmp_path / "records"
    arguments = _arguments(small_book, shared_data / SPM, out, "--num_workers", "1")
    first = subprocess.Popen([sys.executable, "-c", SLOW_RUN, *arguments, "--seed", "9"], cwd=REPO)
    deadline = time.monotonic() + 60
    while not (out / ".albert-keras.lock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    assert first.poll() is None, "the first run ended before the second started"
    error = _refused([*arguments, "--seed", "10"], capsys)
    assert f"{out} is in use: `python -m pipelines.pretraining_data` (pid {first.pid} " in error
    assert first.wait(timeout=300) == 0
    stats = json.loads((out / "stats.json").read_text())
    assert stats["settings"]["seed"] == 9 and len(stats["shards"]) == 2
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["arguments"]["seed"] == 9
    assert not (out / ".albert-keras.lock").exists()
    # Resumed with the same arguments: nothing to do, the shards kept as they are.
    before = _checksums(out)
    assert main([*arguments, "--seed", "9"]) == 0
    after = _checksums(out)
    assert {k: v for k, v in after.items() if "json" not in k} == {
        k: v for k, v in before.items() if "json" not in k
    }


def test_a_users_folder_and_another_commands_folder_are_refused(
    small_book, shared_data, tmp_path, capsys
):
    users = tmp_path / "mine"
    users.mkdir()
    (users / "notes.txt").write_text("my notes\n")
    error = _refused(_arguments(small_book, shared_data / SPM, users), capsys)
    assert f"{users} holds files albert-keras did not write (notes.txt)" in error
    assert sorted(os.listdir(users)) == ["notes.txt"]
    other = tmp_path / "run"
    with OutputFolder(other, "albert-keras pretrain", {"seed": 1}) as folder:
        pathlib.Path(folder.claim("model.keras")).write_text("model")
    before = _checksums(other)
    error = _refused(_arguments(small_book, shared_data / SPM, other), capsys)
    assert "holds the output of `albert-keras pretrain`" in error
    assert _checksums(other) == before


def test_overwrite_removes_only_what_the_writer_wrote(small_book, shared_data, tmp_path, capsys):
    out = tmp_path / "records"
    assert main(_arguments(small_book, shared_data / SPM, out, "--seed", "1")) == 0
    (out / "README.txt").write_text("a user's note, dropped in later\n")
    error = _refused(_arguments(small_book, shared_data / SPM, out, "--seed", "2"), capsys)
    assert "(seed: 1 before, 2 now)" in error and "--overwrite" in error
    assert main(_arguments(small_book, shared_data / SPM, out, "--seed", "2", "--overwrite")) == 0
    assert (out / "README.txt").read_text() == "a user's note, dropped in later\n"
    assert json.loads((out / "stats.json").read_text())["settings"]["seed"] == 2
    reference = tmp_path / "reference"
    assert main(_arguments(small_book, shared_data / SPM, reference, "--seed", "2")) == 0
    names = [f"pretraining-0000{s}-of-00002.tfrecord" for s in range(2)]
    assert [(out / n).read_bytes() for n in names] == [(reference / n).read_bytes() for n in names]


def _bad_input(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir(parents=True)
    (bad / "binary.txt").write_bytes(b"\x00\x01\x02 binary")
    (bad / "empty.txt").write_bytes(b"")
    return bad / "*.txt"


@pytest.mark.parametrize("runner", [None, "DirectRunner"])
def test_bad_input_leaves_nothing_locally_and_on_beam(runner, shared_data, tmp_path, capsys):
    out = tmp_path / "records"
    extra = ["--runner", runner] if runner else []
    error = _refused(_arguments(_bad_input(tmp_path), shared_data / SPM, out, *extra), capsys)
    assert "no document could be read" in error
    assert not out.exists()
    # Into a folder the user made (empty): it stays, empty.
    out.mkdir()
    _refused(_arguments(_bad_input(tmp_path / "again"), shared_data / SPM, out, *extra), capsys)
    assert os.listdir(out) == []


def test_beam_runs_follow_the_same_rule(small_book, shared_data, tmp_path, capsys):
    out = tmp_path / "records"
    local = _arguments(small_book, shared_data / SPM, out)
    assert main(local) == 0
    error = _refused([*local, "--runner", "DirectRunner"], capsys)
    assert "(runner: None before, 'DirectRunner' now)" in error
    users = tmp_path / "mine"
    users.mkdir()
    (users / "notes.txt").write_text("mine\n")
    error = _refused(
        [*_arguments(small_book, shared_data / SPM, users), "--runner", "DirectRunner"], capsys
    )
    assert "holds files albert-keras did not write (notes.txt)" in error


def test_tasks_hold_their_own_locks(shared_data, tmp_path):
    settings = {"num_shards": 4, "seed": 1}
    spm = str(shared_data / SPM)
    task_0 = writer_folder(str(tmp_path), settings, [], spm, num_tasks=2, task_index=0)
    task_1 = writer_folder(str(tmp_path), settings, [], spm, num_tasks=2, task_index=1)
    try:
        with pytest.raises(OutputFolderError, match="is in use: .* holds .albert-keras.task-00001"):
            writer_folder(str(tmp_path), settings, [], spm, num_tasks=2, task_index=1)
    finally:
        task_0.close()
        task_1.close()
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert "stats-task-00001-of-00002.json" in manifest["files"]
    assert "pretraining-00003-of-00004.tfrecord" in manifest["files"]


@pytest.mark.parametrize("runner", [None, "DirectRunner"])
def test_a_folder_as_the_vocabulary_is_one_true_line(runner, small_book, tmp_path, capsys):
    extra = ["--runner", runner] if runner else []
    error = _refused(_arguments(small_book, tmp_path, tmp_path / "out", *extra), capsys)
    assert f"SentencePiece model '{tmp_path}' is a folder: give the .model file" in error
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("num_workers", ["1", "2"])
def test_a_full_disk_is_one_line_naming_the_folder(num_workers, shared_data, tmp_path):
    sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
    from full_disk import full_disk

    with full_disk(tmp_path, size_mb=1) as disk:
        if disk.kind == "fake":
            disk.fill()  # no room from the start; a 1 MB tmpfs fills up while shards are written
        out = disk.root / "records"
        arguments = [
            "--input", str(shared_data / BOOK), "--spm_model", str(shared_data / SPM),
            "--output_dir", str(out), "--max_seq_length", "128", "--dupe_factor", "6",
            "--num_shards", "2", "--num_workers", num_workers, "--quiet",
        ]  # fmt: skip
        result = subprocess.run(
            [sys.executable, "-m", "pipelines.pretraining_data", *arguments],
            capture_output=True,
            text=True,
            check=False,
            env=disk.env,
            cwd=REPO,
        )
        left = sorted(os.listdir(disk.root))
        finished = [read_progress(str(p)) for p in out.glob("*.tfrecord")] if left else []
    assert result.returncode == 2, result.stderr
    # The folder named (the fake names the file that failed in it), in one line.
    assert result.stderr.startswith(f"pretraining_data: error: {out}")
    assert result.stderr.endswith(": no space left on the device; free some space and rerun\n")
    assert result.stderr.count("\n") == 1
    # Nothing left, or (two workers on a real disk) a shard finished before the disk filled,
    # kept for the rerun to resume from: never a half shard under its final name.
    assert left in ([], ["records"])
    assert all(progress["complete"] for progress in finished)


def test_a_folder_written_before_manifests_still_resumes(small_book, shared_data, tmp_path):
    out = tmp_path / "records"
    arguments = _arguments(small_book, shared_data / SPM, out)
    assert main(arguments) == 0
    before = _checksums(out)
    (out / MANIFEST).unlink()  # as the writer left its folders before the output-folder rule
    assert main(arguments) == 0  # adopted: a resume, shards kept
    after = _checksums(out)
    timed = (MANIFEST, "stats.json")  # stats.json holds the run's seconds
    assert {k: v for k, v in after.items() if k not in timed} == {
        k: v for k, v in before.items() if k not in timed
    }
    assert json.loads((out / MANIFEST).read_text())["command"] == (
        "python -m pipelines.pretraining_data"
    )
    # Made with other settings, it is not adopted: refused as files albert-keras did not write.
    (out / MANIFEST).unlink()
    assert main([*arguments, "--seed", "5"]) == 2
    assert MANIFEST not in os.listdir(out)
