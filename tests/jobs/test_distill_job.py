"""The distill job: outputs, summary, exact resume after kill -9, bad input."""

import json
import os
import sys

import keras
import numpy as np
import pytest

import albert_keras as ak
from albert_keras.jobs import distill
from albert_keras_cli.main import main


def command(teacher, records, output_dir, steps, *extra):
    return [
        sys.executable, "-m", "albert_keras_cli", "distill",
        "--teacher", teacher, "--records", records, "--output_dir", str(output_dir),
        "--config", "num_layers=2", "--batch_size", "16", "--max_steps", str(steps),
        "--checkpoint_every", "10", "--learning_rate", "0.01", "--seed", "7", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def run(teacher_path, distill_records, tmp_path_factory):
    output_dir = tmp_path_factory.mktemp("distilled")
    summary = distill(
        teacher=teacher_path,
        records=distill_records["train"],
        output_dir=str(output_dir),
        config={"num_layers": 2},
        batch_size=16,
        max_steps=20,
        learning_rate=0.01,
        checkpoint_every=10,
        eval_records=distill_records["eval"],
        eval_steps=0,
        verbose=0,
    )
    return summary, output_dir


def test_outputs_and_summary(run, teacher_path):
    summary, output_dir = run
    student = keras.saving.load_model(output_dir / "model.keras")
    assert isinstance(student, ak.AlbertPretrainer) and student.sentence_head is None
    assert student.backbone.num_layers == 2
    backbone = keras.saving.load_model(output_dir / "backbone.keras")
    assert isinstance(backbone, ak.AlbertBackbone)
    assert summary == json.loads((output_dir / "summary.json").read_text())
    assert summary["config"]["student_init"] == "teacher"  # same width: warm start
    assert summary["warm_started_variables"] == 26
    assert [period["step"] for period in summary["history"]] == [10, 20]
    assert summary["eval_examples"] == 64
    assert os.listdir(output_dir / "logs")  # TensorBoard
    teacher = keras.saving.load_model(teacher_path)
    assert summary["parameters"] == {
        "teacher": teacher.backbone.count_params(),
        "student": backbone.count_params(),
    }
    # A shared teacher's warm-started student before training is the teacher run 2 times
    # instead of 4; the teacher's own accuracy is the same number before and after.
    before, after = summary["eval_before"], summary["eval"]
    assert before["teacher_mlm_accuracy"] == after["teacher_mlm_accuracy"]
    assert set(before) == set(after) >= {"soft_target_loss", "mlm_accuracy", "cosine_loss"}


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_kill_9_and_resume_ends_with_the_same_student(
    teacher_path, distill_records, tmp_path, kill_at_first_checkpoint
):
    killed = tmp_path / "killed"
    argv = command(teacher_path, distill_records["train"], killed, 60)
    saved_step = kill_at_first_checkpoint(argv, killed)
    assert 0 < saved_step < 60, "the job was not killed mid-run"

    assert main(argv[3:]) == 0  # the same command again
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["steps"]["resumed_from"] == saved_step

    reference = tmp_path / "uninterrupted"
    assert main(command(teacher_path, distill_records["train"], reference, 60)[3:]) == 0
    got = np.load(killed / "checkpoints" / "ckpt-60.npz")
    want = np.load(reference / "checkpoints" / "ckpt-60.npz")
    assert got.files == want.files  # teacher, student and optimizer variables
    for name in want.files:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    student = keras.saving.load_model(killed / "model.keras")
    uninterrupted = keras.saving.load_model(reference / "model.keras")
    for a, b in zip(student.weights, uninterrupted.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--student_init", "teacher", "--config", "hidden_dim=8"], "hidden_dim: student 8"),
        (["--student", "bert_nano"], "--student 'bert_nano': neither"),
        (["--config", "num_layer=2"], "num_layer: not a backbone argument"),
        (["--config", "vocabulary_size=50"], "vocabulary_size=50 differs"),
        (["--max_steps", "0"], "--max_steps=0 must be a positive integer"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    extra, message, teacher_path, distill_records, tmp_path, capsys
):
    argv = command(teacher_path, distill_records["train"], tmp_path / "out", 10, *extra)[3:]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("albert-keras distill: error:") and message in err
    assert "\n" not in err


def test_a_teacher_without_mlm_head_is_refused(distill_records, tmp_path, capsys):
    backbone_path = tmp_path / "backbone.keras"
    ak.AlbertBackbone(
        vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=32,
    ).save(backbone_path)  # fmt: skip
    argv = command(str(backbone_path), distill_records["train"], tmp_path / "out", 10)[3:]
    assert main(argv) == 2
    assert "holds AlbertBackbone, not AlbertPretrainer" in capsys.readouterr().err
