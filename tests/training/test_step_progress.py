"""StepProgress: progress in optimizer steps, and the jobs print it instead of Keras epochs."""

import keras
import numpy as np
import pytest

from albert_keras.training.step_progress import StepProgress, progress_callbacks
from albert_keras_cli.main import main

# A one-layer model on the synthetic records (as in test_pretrain_job.py).
FAST_FLAGS = [
    f"--config={key}={value}"
    for key, value in {
        "num_layers": 1,
        "embedding_dim": 32,
        "hidden_dim": 32,
        "intermediate_dim": 64,
        "num_heads": 2,
        "max_sequence_length": 32,
    }.items()
]


def _fit(callback, *, epochs=3, initial_epoch=0, steps_per_epoch=2):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="sgd", metrics=["mae"])
    data = (np.ones((64, 2), "float32"), np.zeros((64, 1), "float32"))
    model.fit(
        *data,
        batch_size=4,
        epochs=epochs,
        initial_epoch=initial_epoch,
        steps_per_epoch=steps_per_epoch,
        callbacks=[callback],
        verbose=0,
    )


def test_counts_steps_across_periods_and_from_a_resumed_epoch():
    lines = []
    _fit(StepProgress(6, every_seconds=0, print_fn=lines.append), initial_epoch=1)
    assert [line.split()[1] for line in lines] == ["3/6", "4/6", "5/6", "6/6"]
    assert lines[-1].startswith("step 6/6 (100%)")
    assert " loss " in lines[-1] and "steps/s" in lines[-1] and "0 s left" in lines[-1]
    assert "mae" not in lines[-1]  # only losses and accuracies


def test_accumulated_batches_count_as_one_step_and_lines_are_rate_limited():
    lines = []
    _fit(StepProgress(3, batches_per_step=2, every_seconds=0, print_fn=lines.append))
    assert [line.split()[1] for line in lines] == ["0/3", "1/3", "1/3", "2/3", "2/3", "3/3"]
    lines = []
    _fit(StepProgress(6, every_seconds=3600, print_fn=lines.append))
    assert [line.split()[1] for line in lines] == ["6/6"]  # only the last step


def test_verbose_zero_is_silent():
    assert progress_callbacks(0, 10) == (0, [])
    verbose, callbacks = progress_callbacks("auto", 10, 4)
    assert verbose == 0 and callbacks[0].batches_per_step == 4


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_pretrain_command_prints_steps_not_epochs(tiny_records, tmp_path, capsys):
    argv = ["pretrain", "--records", tiny_records["train"], "--output_dir", str(tmp_path)]
    argv += ["--batch_size", "16", "--max_steps", "6", "--checkpoint_every", "2"]
    argv += ["--config", "vocabulary_size=100", *FAST_FLAGS]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Epoch" not in out
    assert "step 6/6 (100%)" in out
    assert "mlm_loss" in out
