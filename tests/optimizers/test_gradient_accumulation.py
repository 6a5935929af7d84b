"""Gradient accumulation: N updates at batch B x k steps == N updates at batch k*B, for the
official LAMB (trust ratio on the accumulated gradient) and AdamWeightDecay."""

import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone, AlbertPretrainer
from albert_keras.optimizers import (
    AdamWeightDecay,
    Lamb,
    PerUpdateSchedule,
    WarmupLinearDecay,
    micro_batch_size,
)

UPDATES, MICRO, STEPS = 3, 4, 2  # 3 updates of a batch of 8 = 2 accumulation steps of 4
VOCABULARY, LENGTH, PREDICTIONS = 60, 12, 3


def batches(seed=0):
    """Pretraining examples with the same number of weighted masked positions in each, so the
    MLM loss of a batch is the mean of its halves' (the official loss normalizes per batch)."""
    rng = np.random.default_rng(seed)
    n = UPDATES * MICRO * STEPS
    mask = np.ones((n, LENGTH), "int32")
    mask[::3, -4:] = 0  # some padding
    return {
        "input_ids": rng.integers(5, VOCABULARY, (n, LENGTH)).astype("int32"),
        "input_mask": mask,
        "segment_ids": (np.arange(LENGTH) >= LENGTH // 2).astype("int32")[None].repeat(n, 0),
        "masked_lm_positions": rng.integers(1, LENGTH - 4, (n, PREDICTIONS)).astype("int32"),
        "masked_lm_ids": rng.integers(5, VOCABULARY, (n, PREDICTIONS)).astype("int32"),
        "masked_lm_weights": np.ones((n, PREDICTIONS), "float32"),
        "next_sentence_labels": rng.integers(0, 2, (n, 1)).astype("int32"),
    }


TINY = {
    "vocabulary_size": VOCABULARY,
    "num_layers": 2,
    "num_heads": 2,
    "embedding_dim": 8,
    "hidden_dim": 16,
    "intermediate_dim": 32,
    "max_sequence_length": LENGTH,
}


def trained_weights(make_optimizer, batch_size, initial):
    # No dropout: its masks would differ between the two batchings.
    backbone = AlbertBackbone(**TINY, dropout=0.0)
    pretrainer = AlbertPretrainer(backbone)
    pretrainer.set_weights(initial)
    pretrainer.compile(optimizer=make_optimizer())
    pretrainer.fit(batches(), batch_size=batch_size, epochs=1, shuffle=False, verbose=0)
    return pretrainer.get_weights(), int(pretrainer.optimizer.iterations)


@pytest.fixture(scope="module")
def initial_weights():
    keras.utils.set_random_seed(11)
    return AlbertPretrainer(AlbertBackbone(**TINY)).get_weights()


@pytest.mark.parametrize(
    "optimizer_class, learning_rate",
    [
        (Lamb, lambda: 0.05),
        (AdamWeightDecay, lambda: 0.01),
        (Lamb, lambda: WarmupLinearDecay(0.05, warmup_steps=2, total_steps=UPDATES)),
    ],
    ids=["lamb", "adam_weight_decay", "lamb_warmup_linear_decay"],
)
def test_accumulated_updates_equal_the_big_batch(optimizer_class, learning_rate, initial_weights):
    big, big_updates = trained_weights(
        lambda: optimizer_class(learning_rate=learning_rate()), MICRO * STEPS, initial_weights
    )
    accumulated, accumulated_updates = trained_weights(
        lambda: optimizer_class(
            learning_rate=PerUpdateSchedule(learning_rate(), STEPS),
            gradient_accumulation_steps=STEPS,
        ),
        MICRO,
        initial_weights,
    )
    assert big_updates == accumulated_updates == UPDATES
    moved = max(np.abs(a - b).max() for a, b in zip(big, initial_weights))
    assert moved > 1e-3  # the updates did something
    for a, b in zip(big, accumulated):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def test_without_the_schedule_wrapper_a_schedule_runs_ahead():
    """Keras evaluates schedules on micro-batch iterations: why PerUpdateSchedule exists."""
    schedule = WarmupLinearDecay(1.0, warmup_steps=4, total_steps=8)
    wrapped = PerUpdateSchedule(schedule, 2)
    # Update n is applied at iteration 2n + 1.
    assert [float(wrapped(2 * n + 1)) for n in range(4)] == [float(schedule(n)) for n in range(4)]
    assert float(schedule(3)) != float(schedule(1))
    restored = PerUpdateSchedule.from_config(wrapped.get_config())
    assert float(restored(5)) == float(wrapped(5))


def test_micro_batch_size():
    assert micro_batch_size(4096, 16) == 256
    with pytest.raises(ValueError, match="does not split into 3 accumulation steps"):
        micro_batch_size(32, 3)
    with pytest.raises(ValueError, match="must be >= 1"):
        micro_batch_size(32, 0)
