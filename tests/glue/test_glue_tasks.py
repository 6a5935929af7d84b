"""The task registry: names, label spaces and the official run_glue.sh defaults."""

import numpy as np
import pytest

from albert_keras.glue import GLUE_TASKS, get_glue_task

# google-research/albert run_glue.sh: `run_task TASK warmup lr steps save_every batch`
# (WNLI is not in it: the README's table).
RUN_GLUE_SH = """
SST-2 1256 1e-5 20935 100 32
MNLI 1000 3e-5 10000 100 128
CoLA 320 1e-5 5336 100 16
QNLI 1986 1e-5 33112 200 32
QQP 1000 5e-5 14000 100 128
RTE 200 3e-5 800 100 32
STS-B 214 2e-5 3598 100 16
MRPC 200 2e-5 800 100 32
WNLI 250 2e-5 2000 100 16
"""


def test_registry_holds_the_nine_tasks_and_ax():
    assert list(GLUE_TASKS) == [
        "CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE", "WNLI", "AX",
    ]  # fmt: skip
    assert [t.name for t in GLUE_TASKS.values() if not t.trainable] == ["AX"]
    assert [t.name for t in GLUE_TASKS.values() if t.is_regression] == ["STS-B"]
    assert {t.name for t in GLUE_TASKS.values() if not t.is_pair} == {"CoLA", "SST-2"}
    submission_files = sorted(s for t in GLUE_TASKS.values() for s in t.test_splits.values())
    assert submission_files == sorted(
        ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI-m", "MNLI-mm", "QNLI", "RTE", "WNLI", "AX"]
    )


@pytest.mark.parametrize("line", RUN_GLUE_SH.split("\n")[1:-1])
def test_defaults_are_the_official_script(line):
    name, warmup, lr, steps, every, batch = line.split()
    task = get_glue_task(name)
    assert (task.warmup_steps, task.learning_rate, task.train_steps) == (
        int(warmup),
        float(lr),
        int(steps),
    )
    assert (task.eval_every, task.batch_size, task.max_seq_length) == (int(every), int(batch), 512)


def test_names_are_case_insensitive_with_common_aliases():
    assert get_glue_task("sst-2") is get_glue_task("sst2") is GLUE_TASKS["SST-2"]
    assert get_glue_task("STSB").name == "STS-B"
    assert get_glue_task("mnli-mm").name == "MNLI"
    with pytest.raises(ValueError, match=r"unknown GLUE task 'squad'; choose from CoLA, SST-2"):
        get_glue_task("squad")


def test_predictions_and_submission_labels():
    mnli, stsb = get_glue_task("MNLI"), get_glue_task("STS-B")
    logits = np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 0.0], [0.0, 0.0, 9.0]])
    assert mnli.predictions(logits).tolist() == [1, 0, 2]
    assert mnli.submission_labels([1, 0, 2]) == ["entailment", "contradiction", "neutral"]
    scores = stsb.predictions(np.array([[5.7], [-0.2], [2.34567]]))
    assert scores.shape == (3,) and scores.dtype == np.float32
    assert stsb.submission_labels(scores) == ["5.000", "0.000", "2.346"]  # clipped to [0, 5]
