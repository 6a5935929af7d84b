"""`albert-keras pretrain --strategy multi_worker` as two processes on localhost (TF_CONFIG, free
ports): the chief alone owns --output_dir, the run equals a one-process run with the same global
batch, a kill -9 of one worker stops the other in one line naming it, and rerunning both resumes.

Each test starts real processes (about a minute each on 2 loaded cores: TensorFlow's start-up
twice, gRPC collectives per step), so they are marked slow."""

import json
import os
import sys
import time

import keras
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from workers import Workers, tf_configs

import albert_keras  # also registers the classes model.keras names
from albert_keras_contracts.output_folder import MANIFEST

TINY = {"vocabulary_size": 100, "num_layers": 1, "num_heads": 2, "embedding_dim": 16,
        "hidden_dim": 16, "intermediate_dim": 32, "max_sequence_length": 32}  # fmt: skip
# Every run here asks for float32: `auto` picks mixed_bfloat16 on CPUs with AVX512_BF16 or AMX,
# where each worker rounds its half of a gradient sum to bfloat16 before the all-reduce, so two
# workers then agree with one process only to bfloat16's ~4e-3 (CI, 30 November).
FLOAT32 = "--mixed_precision=float32"
# Two processes' float32 sums in another order than one process's: the weights agree to ~1e-6.
TOLERANCE = 1e-5
# distill's cosine loss is 1 - cos: near 0 it keeps float32's absolute error (an ulp of 1.0,
# 6e-8), not its relative one, so losses also agree within a few ulps of 1.
LOSS_ATOL = 1e-6
# A lost peer is found by the collective's abort or the coordination service's heartbeat.
LOST_WORKER_SECONDS = 90


def _argv(records, output_dir, strategy, max_steps, eval_records=None):
    return [
        "-m", "albert_keras_cli", "pretrain", "--records", records, "--output_dir",
        str(output_dir), *[f"--config={k}={v}" for k, v in TINY.items()], "--batch_size=8",
        f"--max_steps={max_steps}", "--checkpoint_every=2", "--seed=1", "--jit_compile=false",
        f"--strategy={strategy}", FLOAT32,
        *([f"--eval_records={eval_records}", "--eval_steps=2"] if eval_records else []),
    ]  # fmt: skip


def _two_workers(argv, tmp_path, name):
    logs = tmp_path / name
    logs.mkdir()
    worker_tmp = tmp_path / f"{name}-tmp"  # where the non-chief's own folder goes
    worker_tmp.mkdir()
    envs = [{"TF_CONFIG": config, "TMPDIR": str(worker_tmp)} for config in tf_configs(2)]
    return Workers(argv, envs, str(logs)), worker_tmp


def _one_process(argv, tmp_path, name):
    logs = tmp_path / name
    logs.mkdir()
    with Workers(argv, [{}], str(logs)) as one:
        assert one.wait(300) == [0], one.log(0)[-3000:]


def _weights(folder):
    return keras.saving.load_model(folder / "model.keras", compile=False).get_weights()


def _assert_same_run(one, two):
    a, b = (json.loads((folder / "summary.json").read_text()) for folder in (one, two))
    assert [h["step"] for h in a["history"]] == [h["step"] for h in b["history"]]
    for x, y in zip(a["history"], b["history"]):
        for name in x:
            np.testing.assert_allclose(y[name], x[name], TOLERANCE, LOSS_ATOL, err_msg=name)
    for name in a["eval"]:
        np.testing.assert_allclose(b["eval"][name], a["eval"][name], TOLERANCE, LOSS_ATOL)
    assert b["distribution"]["strategy"] == "MultiWorkerStrategy"
    assert b["distribution"]["replicas"] == 2
    for x, y in zip(_weights(one), _weights(two), strict=True):
        np.testing.assert_allclose(y, x, atol=TOLERANCE)


@pytest.mark.slow
def test_two_workers_equal_one_process_and_the_chief_alone_writes(tiny_records, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    _one_process(_argv(tiny_records["train"], one, "cpu", 6, tiny_records["eval"]), tmp_path, "1")
    argv = _argv(tiny_records["train"], two, "multi_worker", 6, tiny_records["eval"])
    workers, worker_tmp = _two_workers(argv, tmp_path, "2")
    with workers:
        codes = workers.wait(300)
        assert codes == [0, 0], workers.log(0)[-3000:] + workers.log(1)[-3000:]
    assert (
        sorted(os.listdir(two))
        == sorted(os.listdir(one))
        == [MANIFEST, "backbone.keras", "checkpoints", "logs", "model.keras", "summary.json"]
    )
    manifest = json.loads((two / MANIFEST).read_text())
    assert sorted(manifest["files"]) == ["backbone.keras", "checkpoints", "logs",
                                         "model.keras", "summary.json"]  # fmt: skip
    assert os.listdir(worker_tmp) == []  # the non-chief's own folder is gone
    _assert_same_run(one, two)


@pytest.mark.slow
def test_a_killed_worker_stops_the_other_and_both_resume(tiny_records, tmp_path):
    steps = 40
    one, two = tmp_path / "one", tmp_path / "two"
    _one_process(_argv(tiny_records["train"], one, "cpu", steps), tmp_path, "1")
    argv = _argv(tiny_records["train"], two, "multi_worker", steps)
    workers, _ = _two_workers(argv, tmp_path, "killed")
    state = two / "checkpoints" / "checkpoint.json"
    with workers:
        deadline = time.monotonic() + 300
        while not state.exists() and time.monotonic() < deadline:
            assert workers.wait(0.05) == [None, None], workers.log(0)[-3000:]
        workers.kill(1)
        killed_at = time.monotonic()
        code = workers.wait(LOST_WORKER_SECONDS)[0]
        waited = time.monotonic() - killed_at
        chief_log = workers.log(0)
    saved = json.loads(state.read_text())["step"]
    assert code == 2, chief_log[-3000:]
    assert waited < LOST_WORKER_SECONDS
    errors = [line for line in chief_log.splitlines() if "error:" in line]
    assert len(errors) == 1 and errors[0].startswith(
        "albert-keras pretrain: error: lost worker 1 (localhost:"
    ), chief_log[-3000:]
    assert 2 <= saved < steps
    workers, _ = _two_workers(argv, tmp_path, "resumed")
    with workers:
        assert workers.wait(300) == [0, 0], workers.log(0)[-3000:] + workers.log(1)[-3000:]
        assert f"pretraining steps {saved + 1}..{steps}" in workers.log(1)
    summary = json.loads((two / "summary.json").read_text())
    assert summary["steps"]["resumed_from"] >= saved
    _assert_same_run(one, two)


@pytest.mark.slow
def test_distill_shares_the_skeleton(teacher_path, distill_records, tmp_path):
    """`distill` goes through the same `JobRun` and `PeriodicTraining` as `pretrain`: the
    chief alone writes, and two workers equal one process."""

    def argv(output_dir, strategy):
        return [
            "-m", "albert_keras_cli", "distill", "--teacher", teacher_path, "--records",
            distill_records["train"], "--eval_records", distill_records["eval"],
            "--eval_steps=2", "--output_dir", str(output_dir), "--config", "num_layers=1",
            "--batch_size=8", "--max_steps=4", "--checkpoint_every=2", "--seed=1",
            "--jit_compile=false", f"--strategy={strategy}", FLOAT32,
        ]  # fmt: skip

    one, two = tmp_path / "one", tmp_path / "two"
    _one_process(argv(one, "cpu"), tmp_path, "1")
    workers, worker_tmp = _two_workers(argv(two, "multi_worker"), tmp_path, "2")
    with workers:
        assert workers.wait(300) == [0, 0], workers.log(0)[-3000:] + workers.log(1)[-3000:]
    assert sorted(os.listdir(two)) == sorted(os.listdir(one))
    assert os.listdir(worker_tmp) == []
    _assert_same_run(one, two)


@pytest.mark.slow
def test_finetune_glue_on_two_workers_equals_one_process(shared_data, tmp_path):
    """`finetune-glue` goes through the same `JobRun` and takes its rows of each global batch
    as pretraining does: both workers exit 0, only the chief writes --output_dir, and with
    `--dropout 0` (each replica draws its own masks) and `--deterministic` the scores and
    weights are a one-process run's. (Without op determinism, some of TensorFlow's CPU kernels
    sum in an order that varies with thread timing; Adam on this two-sentence task turns those
    last-bit differences into 4e-5 to 7e-5 in the weights: 6 of 8 runs, 29 November.)"""
    sentences = ["a gorgeous , witty , seductive movie .", "dull and lifeless ."]
    glue = tmp_path / "glue"
    (glue / "SST-2").mkdir(parents=True)
    for split, rows in (("train", 32), ("dev", 16)):
        lines = [f"{sentences[i % 3 % 2]}\t{i % 3 % 2}" for i in range(rows)]
        (glue / "SST-2" / f"{split}.tsv").write_text("sentence\tlabel\n" + "\n".join(lines) + "\n")
    model = tmp_path / "model"
    model.mkdir()
    albert_keras.AlbertBackbone(
        vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=16, hidden_dim=32,
        intermediate_dim=64, max_sequence_length=32,
    ).save(model / "backbone.keras")  # fmt: skip
    spm = shared_data / "vocab" / "30k-clean.reconstructed.model"
    (model / "spm.model").write_bytes(spm.read_bytes())

    def argv(output_dir, strategy):
        return [
            "-m", "albert_keras_cli", "finetune-glue", "--task", "SST-2", "--glue_dir",
            str(glue), "--model", str(model / "backbone.keras"), "--output_dir", str(output_dir),
            "--max_steps=4", "--batch_size=8", "--max_seq_length=32", "--eval_every=2",
            "--dropout=0", "--seed=1", "--learning_rate=1e-3", "--warmup_steps=0",
            "--deterministic", f"--strategy={strategy}", FLOAT32,
        ]  # fmt: skip

    one, two = tmp_path / "one", tmp_path / "two"
    _one_process(argv(one, "cpu"), tmp_path, "1")
    workers, worker_tmp = _two_workers(argv(two, "multi_worker"), tmp_path, "2")
    with workers:
        assert workers.wait(300) == [0, 0], workers.log(0)[-3000:] + workers.log(1)[-3000:]
    assert sorted(os.listdir(two)) == sorted(os.listdir(one))
    assert MANIFEST in os.listdir(two) and "model.keras" in os.listdir(two)
    assert os.listdir(worker_tmp) == []
    a, b = (json.loads((folder / "metrics.json").read_text()) for folder in (one, two))
    assert [h["step"] for h in b["history"]] == [h["step"] for h in a["history"]] == [2, 4]
    assert b["distribution"]["replicas"] == 2 and a["distribution"]["replicas"] == 1
    assert b["hyperparameters"]["classifier_dropout"] == 0
    for x, y in zip(a["history"], b["history"]):
        np.testing.assert_allclose(y["accuracy"], x["accuracy"], rtol=TOLERANCE)
    for x, y in zip(_weights(one), _weights(two), strict=True):
        np.testing.assert_allclose(y, x, atol=TOLERANCE)
    # Not equal for want of training: the four steps moved the backbone.
    start = keras.saving.load_model(model / "backbone.keras").get_weights()
    trained = keras.saving.load_model(two / "model.keras", compile=False).backbone.get_weights()
    assert max(float(np.max(np.abs(x - y))) for x, y in zip(start, trained, strict=True)) > 1e-4
