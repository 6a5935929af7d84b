"""`seeded_passes`: an endless training stream whose order is a pure function of (seed, pass).

The one owner of how training data is shuffled, for pretraining records and for every
fine-tuning set. `dataset.shuffle(seed=..., reshuffle_each_iteration=True)` draws each pass's
order from a seed generator that tf.data shares between all iterators of a dataset, and
`tf.distribute` builds its iterators its own way (`experimental_distribute_dataset`, an extra
iterator to peek at the first batch), so one seeded run read other batches under
`OneDeviceStrategy` than under TensorFlow's default strategy, and a resumed run others than an
uninterrupted one. Here pass p is shuffled with its own seed and
`reshuffle_each_iteration=False`: the same batches under any strategy, on one worker or several,
from the start or resumed at pass p.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import tensorflow as tf

# Passes are numbered up to here: "forever" for any real run.
MAX_PASSES = 2**40
# Pass p of seed s is shuffled with seed s * PASS_SEED_STRIDE + p (a prime, so (s, p) pairs of
# any real run do not collide).
PASS_SEED_STRIDE = 1_000_003


@contextlib.contextmanager
def _nonzero_global_seed():
    """Traces the passes under global seed 1 where the global seed is 0.

    TensorFlow pairs a shuffle's tensor seed with the global seed and compares the pair with
    (0, 0) as a Python bool, which fails while tracing when the global seed is 0
    (`keras.utils.set_random_seed(0)`, `albert-keras pretrain --seed 0`). No library call
    takes the pair directly, so for that one global seed the passes are traced under 1 (a fixed
    choice: such runs stay reproducible) and the global seed is set back to 0 afterwards.
    """
    if tf.compat.v1.get_seed(1)[0] != 0:
        yield
        return
    tf.random.set_seed(1)
    try:
        yield
    finally:
        tf.random.set_seed(0)


def seeded_passes(
    dataset: tf.data.Dataset,
    buffer_size: int,
    seed: int,
    *,
    first_pass: int = 0,
    each_pass: Callable[[tf.data.Dataset, tf.Tensor], tf.data.Dataset] | None = None,
) -> tf.data.Dataset:
    """Endless passes over `dataset`, pass p shuffled with its own seed, from `first_pass` on.

    Args:
        dataset: tf.data.Dataset. One pass of the data, in a fixed order.
        buffer_size: int. The shuffle buffer (the dataset's size shuffles it whole).
        seed: int. The run's seed; with the pass number it fixes each pass's order.
        first_pass: int. The pass to start at (a resumed run skips the passes it read).
        each_pass: callable or None. `(shuffled pass, pass seed) -> dataset`, applied within
            each pass (batching that never crosses a pass, masks drawn from the pass seed).

    Returns:
        tf.data.Dataset.

    Example:
    >>> import tensorflow as tf
    >>> stream = seeded_passes(tf.data.Dataset.range(4), 4, seed=1)
    >>> sorted(int(x) for x in stream.take(4)), sorted(int(x) for x in stream.skip(4).take(4))
    ([0, 1, 2, 3], [0, 1, 2, 3])
    """

    def one_pass(pass_index):
        pass_seed = tf.constant(seed, tf.int64) * PASS_SEED_STRIDE + pass_index
        shuffled = dataset.shuffle(buffer_size, seed=pass_seed, reshuffle_each_iteration=False)
        return shuffled if each_pass is None else each_pass(shuffled, pass_seed)

    with _nonzero_global_seed():
        return tf.data.Dataset.range(first_pass, MAX_PASSES).flat_map(one_pass)
