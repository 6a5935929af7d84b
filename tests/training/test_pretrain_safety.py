"""`albert-keras pretrain` never loses a run: a second run with other arguments is refused
(unless --overwrite), a full disk and Ctrl-C end in one line with the last checkpoint whole, and
what a `kill -9` left half-written is cleaned up by the next run (issue 29)."""

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from full_disk import full_disk
from synthetic_records import SEQ_LENGTH

from albert_keras.jobs import pretrain
from albert_keras_cli.main import main
from albert_keras_contracts.atomic_write import process_token

TINY = {"vocabulary_size": 100, "num_layers": 1, "num_heads": 2, "embedding_dim": 16,
        "hidden_dim": 16, "intermediate_dim": 32, "max_sequence_length": SEQ_LENGTH}  # fmt: skip


def _argv(records, output_dir, *extra, max_steps=2, checkpoint_every=1, seed=1):
    return [
        "pretrain", "--records", records, "--output_dir", str(output_dir),
        *[f"--config={k}={v}" for k, v in TINY.items()],
        "--batch_size=8", f"--max_steps={max_steps}", f"--checkpoint_every={checkpoint_every}",
        f"--seed={seed}", "--jit_compile=false", *extra,
    ]  # fmt: skip


def _checksums(folder):
    return {
        os.path.relpath(os.path.join(root, name), folder): hashlib.sha256(
            open(os.path.join(root, name), "rb").read()
        ).hexdigest()
        for root, _, names in os.walk(folder)
        for name in names
    }


def _error_lines(stderr: str) -> list[str]:
    """The command's own lines (TensorFlow's C++ log lines aside)."""
    return [line for line in stderr.splitlines() if line.startswith("albert-keras")]


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_a_second_run_with_another_seed_is_refused_then_overwrite_replaces_it(
    tiny_records, tmp_path, capsys
):
    out = tmp_path / "run"

    def argv(seed, *extra):
        return _argv(
            tiny_records["train"], out, *extra, max_steps=20, checkpoint_every=10, seed=seed
        )

    first = _start(argv(1))
    _wait_for(out / ".albert-keras.lock", first)
    # While the first runs: refused, naming it (both used to train, then overwrite each other).
    assert main(argv(2)) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1, error
    assert f"is in use: `albert-keras pretrain` (pid {first.pid} on host " in error[0]
    _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    before = _checksums(out)

    # After it: refused too, with the way out.
    assert main(argv(2)) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1, error
    assert (
        "earlier `albert-keras pretrain` run with other arguments (seed: 1 before, 2 now)"
        in (error[0])
    )
    assert "--overwrite" in error[0]
    assert _checksums(out) == before  # not a byte changed

    assert main(argv(2, "--overwrite")) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["seed"] == 2 and summary["steps"]["resumed_from"] == 0
    manifest = json.loads((out / ".albert-keras.json").read_text())
    assert manifest["arguments"]["seed"] == 2
    assert sorted(manifest["files"]) == [
        "backbone.keras", "checkpoints", "logs", "model.keras", "summary.json",
    ]  # fmt: skip
    # The same arguments again: a resume at the end, as before the rule.
    assert main(argv(2)) == 0
    again = json.loads((out / "summary.json").read_text())
    assert again["steps"] == {"total": 20, "resumed_from": 20, "run": 0}


def test_a_folder_of_user_files_and_an_init_from_inside_are_refused(tiny_records, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me\n")
    assert main(_argv(tiny_records["train"], mine)) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "holds files albert-keras did not write (notes.txt)" in error[0]
    assert sorted(os.listdir(mine)) == ["notes.txt"]

    out = tmp_path / "run"
    assert main(_argv(tiny_records["train"], out)) == 0
    capsys.readouterr()
    argv = _argv(tiny_records["train"], out, "--init_from", str(out / "model.keras"), seed=4)
    assert main([*argv, "--overwrite"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "--init_from" in error[0] and "lies inside --output_dir" in error[0]
    assert (out / "model.keras").exists()


def test_stale_temporaries_are_removed_and_an_earlier_run_without_manifest_resumes(
    tiny_records, tmp_path
):
    out = tmp_path / "run"
    arguments = {"records": tiny_records["train"], "output_dir": str(out), "config": TINY,
                 "batch_size": 8, "max_steps": 2, "checkpoint_every": 1, "seed": 1,
                 "jit_compile": False, "verbose": 0}  # fmt: skip
    pretrain(**arguments)
    # As a run started before output folders had manifests left it: adopted, not refused.
    os.remove(out / ".albert-keras.json")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead_pid = int(dead.stdout)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        # What `kill -9` in the middle of a save leaves (15 MB each for albert_base), with the
        # token this (in-process) run records; a user's look-alike carries none and stays.
        token = process_token()
        stale = [out / "checkpoints" / f".ckpt-3.tmp-{dead_pid}-{token}.npz",
                 out / f".model.tmp-{dead_pid}-{token}.keras"]  # fmt: skip
        running = out / "checkpoints" / f".ckpt-3.tmp-{live.pid}-{token}.npz"
        users = out / "checkpoints" / f".notes.tmp-{dead_pid}.txt"
        for path in [*stale, running, users]:
            path.write_bytes(b"half a checkpoint")
        again = pretrain(**arguments)
        assert again["steps"]["resumed_from"] == 2  # the resume is unchanged
        manifest = json.loads((out / ".albert-keras.json").read_text())
        assert manifest["files"] == [
            "backbone.keras", "checkpoints", "logs", "model.keras", "summary.json",
        ]  # fmt: skip
        assert not any(path.exists() for path in stale)
        assert running.exists()  # a live writer's file is not ours to remove
        assert users.exists()  # nor a user's file named like a temporary
    finally:
        live.kill()
        live.wait()


def _start(argv, env=None):
    return subprocess.Popen(
        [sys.executable, "-m", "albert_keras_cli", *argv],
        env={**(env or os.environ), "TF_CPP_MIN_LOG_LEVEL": "3"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextlib.contextmanager
def _sigint_not_ignored():
    """The jobs started inside take SIGINT as a user's Ctrl-C, whatever the suite inherited: a
    shell starts `make test-all &` or `nohup ...` with SIGINT ignored, children keep that through
    exec, and Python then raises no KeyboardInterrupt (the job ran to its end, exit 0, 30
    November)."""
    before = signal.getsignal(signal.SIGINT)
    if before == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # exec keeps only SIG_IGN
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _wait_for(path, job, seconds=300):
    deadline = time.monotonic() + seconds
    while not path.exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert path.exists(), job.communicate()


@pytest.mark.slow  # two start-ups of TensorFlow: ~30 s on 2 quiet cores
def test_ctrl_c_is_one_line_naming_the_checkpoint_and_the_rerun_resumes(
    tiny_records, tmp_path, capsys
):
    out = tmp_path / "run"
    argv = _argv(tiny_records["train"], out, max_steps=100, checkpoint_every=5)
    with _sigint_not_ignored():
        job = _start(argv)
    _wait_for(out / "checkpoints" / "checkpoint.json", job)
    job.send_signal(signal.SIGINT)
    _, stderr = job.communicate(timeout=120)
    assert job.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    lines = _error_lines(stderr)
    step = json.loads((out / "checkpoints" / "checkpoint.json").read_text())["step"]
    assert lines == [
        (
            f"albert-keras pretrain: interrupted; the checkpoint of step {step} is kept in "
            f"{out / 'checkpoints'}: rerun the same command to resume from it"
        )
    ]
    assert not (out / ".albert-keras.lock").exists()
    capsys.readouterr()
    assert main(argv) == 0
    assert "(resumed)" in capsys.readouterr().out


@pytest.mark.slow  # two start-ups of TensorFlow and 100 steps
@pytest.mark.parametrize("kind", ["tmpfs", "fake"])
def test_a_full_disk_is_one_line_and_the_last_checkpoint_stays_whole(tiny_records, tmp_path, kind):
    with full_disk(tmp_path, kind=kind) as disk:
        out = disk.root / "run"
        argv = _argv(tiny_records["train"], out, max_steps=100, checkpoint_every=5)
        job = _start(argv, disk.env)
        _wait_for(out / "checkpoints" / "checkpoint.json", job)
        disk.fill()
        _, stderr = job.communicate(timeout=120)
        assert job.returncode == 2, stderr
        assert "Traceback" not in stderr, stderr
        lines = _error_lines(stderr)
        assert len(lines) == 1, stderr
        assert "no space left on the device" in lines[0]
        assert f"{out / 'checkpoints'}{os.sep}ckpt-" in lines[0]  # the file it was writing
        names = [name for _, _, files in os.walk(out) for name in files]
        assert not [name for name in names if ".tmp-" in name], names  # no partial file
        state = json.loads((out / "checkpoints" / "checkpoint.json").read_text())
        with np.load(out / "checkpoints" / state["file"]) as arrays:
            assert len(arrays.files) > 10  # whole: every array reads back
            for name in arrays.files:
                arrays[name]
        disk.free()
        rerun = _start(argv, disk.env)
        stdout, stderr = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, stderr
        assert "(resumed)" in stdout
        summary = json.loads((out / "summary.json").read_text())
        assert summary["steps"]["resumed_from"] == state["step"] > 0
