"""The training batches as a pure function of (seed, step), so a resumed run sees the same ones.

`pipelines.read_pretraining_records(shuffle=True, repeat=True)` reshuffles each epoch from seed
generators that tf.data shares between all iterators of a dataset, and `tf.distribute` opens
an extra iterator to peek at the first batch: the order a run sees then depends on how the
dataset was iterated before, and `dataset.skip(n)` jumps whole repetitions without advancing
those generators. Neither matters for one uninterrupted run; both break an exact resume. So
here the reader only parses (files in a fixed order, no shuffle), and every pass p over the
data is shuffled with its own seed (`reshuffle_each_iteration=False`), and dynamic masks are
drawn from (seed, p, batch in pass): nothing depends on iterator history.
"""

import tensorflow as tf

from pipelines import read_pretraining_records
from pipelines.dynamic_masking import remask_batch
from pipelines.record_files import count_records  # noqa: F401 - one read, every file checked

# Passes are numbered up to here: "forever" for any real run.
MAX_PASSES = 2**40


def pretraining_stream(
    files: list[str],
    batch_size: int,
    *,
    max_seq_length: int,
    max_predictions_per_seq: int,
    num_examples: int,
    seed: int,
    start_step: int = 0,
    dynamic_masking: bool = False,
    vocabulary_size: int | None = None,
    shuffle_buffer_size: int = 10_000,
) -> tf.data.Dataset:
    """An endless dataset of full batches whose k-th element is fixed by `seed` and k alone.

    Args:
        files: list of str. The training TFRecord files.
        batch_size: int. The global batch size.
        max_seq_length, max_predictions_per_seq: int. The records' lengths.
        num_examples: int. Records in `files` (`count_records`); a pass is
            `num_examples // batch_size` batches (the rest of a pass is dropped).
        seed: int. Fixes the order of every pass and the dynamic masks (with TensorFlow's
            global seed, which tf.data mixes into every shuffle: set it first, e.g. with
            `keras.utils.set_random_seed`).
        start_step: int. The first batch to yield (a resumed run's step): whole passes are
            skipped for free, and the batches before it in its pass are read and dropped.
        dynamic_masking: bool. New n-gram whole-word masks for every batch of every pass.
        vocabulary_size: int. Needed with `dynamic_masking` (random replacement ids).
        shuffle_buffer_size: int. Examples in the shuffle buffer.

    Example:
    >>> stream = pretraining_stream(files, 8, max_seq_length=128, max_predictions_per_seq=20,
    ...                             num_examples=count_records(files), seed=1, start_step=100)
    """
    batches_per_pass = num_examples // batch_size
    if batches_per_pass == 0:
        raise ValueError(f"{num_examples} examples make no full batch of {batch_size}")
    if dynamic_masking and vocabulary_size is None:
        raise ValueError("dynamic_masking needs vocabulary_size")
    first_pass, skipped = divmod(start_step, batches_per_pass)
    # Parse in batches (vectorized), then shuffle examples; drop_remainder=False loses none.
    examples = read_pretraining_records(
        files,
        batch_size,
        max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions_per_seq,
        shuffle=False,
        repeat=False,
        drop_remainder=False,
    ).unbatch()

    def one_pass(pass_index):
        pass_seed = tf.constant(seed, tf.int64) * 1_000_003 + pass_index
        batches = examples.shuffle(
            shuffle_buffer_size, seed=pass_seed, reshuffle_each_iteration=False
        ).batch(batch_size, drop_remainder=True)
        if not dynamic_masking:
            return batches

        def remask(index, batch):
            return remask_batch(
                batch, tf.stack([pass_seed, index]), vocabulary_size=vocabulary_size
            )

        return batches.enumerate().map(
            tf.autograph.experimental.do_not_convert(remask),
            num_parallel_calls=tf.data.AUTOTUNE,
        )

    stream = tf.data.Dataset.range(first_pass, MAX_PASSES).flat_map(one_pass)
    options = tf.data.Options()
    options.deterministic = True
    return stream.skip(skipped).with_options(options).prefetch(tf.data.AUTOTUNE)
