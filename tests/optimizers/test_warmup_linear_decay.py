import keras
import numpy as np
import pytest

from albert_keras.optimizers import WarmupLinearDecay


def official_rate(step, peak, warmup, total):
    """The official create_optimizer's rate, written out in NumPy."""
    decayed = peak * (1.0 - min(step, total) / total)
    return peak * step / warmup if warmup and step < warmup else decayed


@pytest.mark.parametrize("warmup", [0, 1, 7, 40])
def test_matches_the_official_formula_at_every_step(warmup):
    schedule = WarmupLinearDecay(2e-3, warmup_steps=warmup, total_steps=40)
    got = np.array([float(schedule(step)) for step in range(45)])
    want = np.array([official_rate(step, 2e-3, warmup, 40) for step in range(45)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)


def test_shape_of_the_curve():
    schedule = WarmupLinearDecay(1.0, warmup_steps=10, total_steps=100)
    rates = np.array([float(schedule(step)) for step in range(120)])
    assert rates[0] == 0.0
    assert np.all(np.diff(rates[:10]) > 0), "warmup must rise"
    assert rates.argmax() == 9 and rates.max() == pytest.approx(0.9)
    assert np.all(np.diff(rates[10:101]) < 0), "decay must fall"
    assert np.all(rates[100:] == 0.0)


def test_official_defaults():
    schedule = WarmupLinearDecay()
    assert (schedule.peak_learning_rate, schedule.warmup_steps, schedule.total_steps) == (
        0.00176,
        3125,
        125_000,
    )
    assert float(schedule(3124)) == pytest.approx(0.00176 * 3124 / 3125)


def test_serialization_round_trip_and_use_in_an_optimizer():
    schedule = WarmupLinearDecay(1e-3, warmup_steps=3, total_steps=9)
    restored = keras.optimizers.schedules.deserialize(
        keras.optimizers.schedules.serialize(schedule)
    )
    assert isinstance(restored, WarmupLinearDecay)
    assert restored.get_config() == schedule.get_config()
    optimizer = keras.optimizers.Adam(learning_rate=schedule)
    clone = keras.optimizers.Adam.from_config(optimizer.get_config())
    assert float(clone.learning_rate) == 0.0  # iterations 0: start of warmup


@pytest.mark.parametrize(
    "args, message",
    [
        ((1e-3, 5, 0), "total_steps=0"),
        ((1e-3, 11, 10), "warmup_steps=11"),
        ((-1.0, 1, 10), "peak_learning_rate"),
    ],
)
def test_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        WarmupLinearDecay(*args)
