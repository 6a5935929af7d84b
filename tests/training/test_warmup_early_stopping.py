"""Early stopping on the dev score never ends a fine-tuning run inside its warmup, and the last
line says when a run stopped early."""

import keras
import numpy as np
import pytest

from albert_keras.training.warmup_early_stopping import WarmupEarlyStopping, early_stop_note


def run(scores, patience, warmup_steps, steps_per_evaluation=2):
    """Fits a tiny model, one evaluation per epoch with the given dev scores; returns the
    callback and the steps trained."""
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    scores = iter(scores)
    dev = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: logs.update(val_accuracy=next(scores))
    )
    stop = WarmupEarlyStopping("val_accuracy", patience, warmup_steps)
    data = np.zeros((steps_per_evaluation, 1))
    model.fit(data, data, batch_size=1, epochs=20, callbacks=[dev, stop], verbose=0)
    return stop, int(model.optimizer.iterations.numpy())


def test_no_stopping_inside_the_warmup():
    # SST-2's case in small: patience 5 x 2 steps = 10 steps, a warmup of 25 steps. Keras's
    # EarlyStopping ended this run at step 12 (the score peaked at the first evaluation).
    flat = [0.6] + [0.5] * 19
    stop, steps = run(flat, patience=5, warmup_steps=25)
    assert stop.best_step == 2
    # Evaluations at 26, 28, 30, 32, 34 are the first five after the warmup.
    assert stop.stopped_step == steps == 34
    unlimited, steps = run(flat, patience=5, warmup_steps=100)
    assert unlimited.stopped_step is None and steps == 40


def test_improvements_after_the_warmup_reset_the_patience():
    scores = [0.1, 0.2, 0.3, 0.25, 0.4, 0.3, 0.3, 0.3] + [0.0] * 12
    stop, steps = run(scores, patience=2, warmup_steps=0)
    assert (stop.best_step, stop.stopped_step, steps) == (10, 14, 14)
    assert stop.best == pytest.approx(0.4)


def test_nan_scores_count_as_no_improvement_and_patience_0_never_stops():
    stop, steps = run([0.5] + [float("nan")] * 19, patience=1, warmup_steps=0)
    assert (stop.best_step, stop.stopped_step) == (2, 4)
    stop, steps = run([0.5] * 20, patience=0, warmup_steps=0)
    assert stop.stopped_step is None and steps == 40


def test_the_last_line_says_where_the_run_stopped():
    summary = {"stopped_early": True, "steps_trained": 1800, "best_step": 1300,
               "hyperparameters": {"max_steps": 20935, "patience": 5}}  # fmt: skip
    assert early_stop_note(summary) == (
        "; stopped early at step 1800 of 20935 (no better dev score in 5 evaluations after step "
        "1300)"
    )
    assert early_stop_note({**summary, "stopped_early": False}) == ""
