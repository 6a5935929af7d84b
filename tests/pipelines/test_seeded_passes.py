"""`seeded_passes`: each pass a permutation fixed by (seed, pass), the same under any
`tf.distribute` strategy, resumable at any pass, and traceable under global seed 0."""

import keras
import numpy as np
import tensorflow as tf

from pipelines.seeded_passes import seeded_passes


def _passes(stream, size, count):
    values = [int(x) for x in stream.take(size * count)]
    return [values[i * size : (i + 1) * size] for i in range(count)]


def test_each_pass_is_its_own_permutation_fixed_by_seed_and_pass():
    data = tf.data.Dataset.range(10)
    passes = _passes(seeded_passes(data, 10, seed=3), 10, 3)
    assert all(sorted(p) == list(range(10)) for p in passes)
    assert len({tuple(p) for p in passes}) == 3  # each pass in another order
    assert passes == _passes(seeded_passes(data, 10, seed=3), 10, 3)  # a pure function
    assert passes != _passes(seeded_passes(data, 10, seed=4), 10, 3)
    # A resumed run starts at its pass and reads what an uninterrupted one read there.
    assert _passes(seeded_passes(data, 10, seed=3, first_pass=2), 10, 1) == passes[2:]


def test_each_pass_applies_within_a_pass_with_its_seed():
    seen = []

    def batched(shuffled, pass_seed):
        seen.append(pass_seed)
        return shuffled.batch(4, drop_remainder=True)

    stream = seeded_passes(tf.data.Dataset.range(10), 10, seed=1, each_pass=batched)
    batches = [b.numpy().tolist() for b in stream.take(4)]
    assert [len(b) for b in batches] == [4, 4, 4, 4]  # two full batches a pass, none across
    assert len(set(batches[0] + batches[1])) == 8 and len(seen) == 1  # traced once


def _fit_order(strategy) -> list[int]:
    """The first example of each batch a Keras `fit` reads, under `strategy`."""
    seen = []

    class Recorder(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

        def train_step(self, x):
            tf.py_function(lambda v: seen.append(int(v[0, 0])), [x], [])
            return {"loss": tf.constant(0.0)}

    with strategy.scope():
        model = Recorder()
        model.compile()
    data = seeded_passes(tf.data.Dataset.range(8), 8, seed=1).batch(2)
    model.fit(
        data.map(lambda b: tf.cast(b, "float32")[:, None]),
        steps_per_epoch=8,
        shuffle=False,
        verbose=0,
    )
    return seen


def test_the_same_batches_under_the_default_strategy_and_one_device():
    # With `reshuffle_each_iteration=True` these two read different orders.
    default = _fit_order(tf.distribute.get_strategy())
    assert default == _fit_order(tf.distribute.OneDeviceStrategy("/cpu:0"))
    expected = [p[i] for p in _passes(seeded_passes(tf.data.Dataset.range(8), 8, 1), 8, 2)
                for i in range(0, 8, 2)]  # fmt: skip
    assert default == expected


def test_global_seed_zero_traces_and_is_restored():
    tf.random.set_seed(0)  # as `keras.utils.set_random_seed(0)` or `--seed 0` set it
    try:
        first = _passes(seeded_passes(tf.data.Dataset.range(6), 6, seed=2), 6, 2)
        assert tf.compat.v1.get_seed(1)[0] == 0  # set back after tracing
        assert first == _passes(seeded_passes(tf.data.Dataset.range(6), 6, seed=2), 6, 2)
        assert np.array_equal(sorted(first[1]), np.arange(6))
    finally:
        tf.random.set_seed(None)  # a fresh process's state
