"""`read_pretraining_records`: pretraining TFRecords -> a `tf.data.Dataset` of feature batches.

The records are the official google-research/albert ones (`albert_keras_contracts.record_format`); a batch is a dict with the
same feature names, int64 cast to int32 (half the host memory and the transfer, and what TPUs
take), ready for `AlbertPretrainer.fit`. The pipeline, in order: files (sharded per input
pipeline, shuffled) -> parallel interleave -> example shuffle -> repeat -> batch -> one
vectorized `tf.io.parse_example` per batch -> optional dynamic masking -> prefetch.

With `start_step`, the batches are instead a pure function of (seed, step), so a resumed run sees
the same ones: the files are only parsed (in a fixed order), every pass over the data is
shuffled with its own seed (`pipelines.seeded_passes`, which says why a reshuffling dataset
cannot give that), and dynamic masks are drawn from (seed, pass, batch in pass): nothing depends
on iterator history.
"""

import dataclasses
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from albert_keras_contracts import record_format
from albert_keras_contracts.autotune_off import autotune_off
from albert_keras_contracts.writer_stats import recorded_vocabulary_size
from pipelines.dynamic_masking import remask_batch
from pipelines.masking_settings import MaskingSettings
from pipelines.record_checks import (
    bad_record_line,  # noqa: F401  (re-exported: training imports it here)
    check_first_records,
    check_values,
    value_limits,
)
from pipelines.record_files import count_records, list_record_files
from pipelines.seeded_passes import seeded_passes

# Examples in the shuffle buffer.
SHUFFLE_BUFFER_SIZE = 10_000
# Files read at once; fixed (not AUTOTUNE) so a seeded order does not depend on the machine's
# core count.
CYCLE_LENGTH = 16


def _list_files(file_pattern: str | Sequence[str]) -> list[str]:
    # Non-shards beside the shards (stats.json, the writer's bookkeeping) are left out, named.
    return list_record_files(file_pattern, "file_pattern")


def _parse_batch(batch, lengths: dict[str, int], limits=()) -> dict[str, tf.Tensor]:
    """Parses a batch of `(file names, record indices, serialized records)`; checks the values
    of `limits` (`check_values`)."""
    names, indices, serialized = batch
    spec = {
        name: tf.io.FixedLenFeature([length], tf.as_dtype(record_format.BY_NAME[name].dtype))
        for name, length in lengths.items()
    }
    features = tf.io.parse_example(serialized, spec)
    with tf.control_dependencies(check_values(features, names, indices, limits)):
        return {
            name: tf.identity(value) if value.dtype == tf.float32 else tf.cast(value, tf.int32)
            for name, value in features.items()
        }


def read_pretraining_records(
    file_pattern: str | Sequence[str],
    batch_size: int,
    *,
    max_seq_length: int = 512,
    max_predictions_per_seq: int = 20,
    shuffle: bool = True,
    repeat: bool = True,
    seed: int | None = None,
    dynamic_masking: bool | MaskingSettings = False,
    input_context: tf.distribute.InputContext | None = None,
    drop_remainder: bool = True,
    start_step: int | None = None,
    num_examples: int | None = None,
) -> tf.data.Dataset:
    """Reads pretraining TFRecords into batches of feature dicts.

    Args:
        file_pattern: str or list of str. Glob(s) of TFRecord files.
        batch_size: int. The global batch size; with `input_context`, each replica gets
            `input_context.get_per_replica_batch_size(batch_size)` examples per batch.
        max_seq_length, max_predictions_per_seq: int. T and P, as the records were written.
        shuffle: bool. Shuffle files and examples (reshuffled every epoch).
        repeat: bool. Repeat forever (epochs run into each other inside a batch).
        seed: int or None. Makes the order and the dynamic masks reproducible.
        dynamic_masking: bool or `MaskingSettings`. Re-mask every batch on the fly (n-gram
            whole-word masking from `token_boundary`, `pipelines.dynamic_masking`), so each epoch
            sees new masks: True with the default settings, or these settings. A `vocabulary_size`
            of None is read from the writer's `stats.json` beside the records.
        input_context: `tf.distribute.InputContext` from
            `strategy.distribute_datasets_from_function`: pipeline i of k reads files i, i + k, ...
        drop_remainder: bool. Drop a last partial batch, so the batch dimension is static.
        start_step: int or None. For an exact resume: an endless dataset of full batches, the
            k-th fixed by `seed` and k alone (see the module docstring), from batch `start_step`.
            Needs `seed`; always shuffles and repeats; not with `input_context`. Set TensorFlow's
            global seed first (`keras.utils.set_random_seed`): tf.data mixes it into shuffles.
        num_examples: int. With `start_step`: the records in the files (counted if not given).

    Returns:
        A `tf.data.Dataset` of dicts: `input_ids`, `input_mask`, `segment_ids`, `token_boundary`
        int32 (B, T); `masked_lm_positions`, `masked_lm_ids` int32 (B, P); `masked_lm_weights`
        float32 (B, P); `next_sentence_labels` int32 (B, 1).

    Example:
    >>> shapes = {"max_seq_length": 32, "max_predictions_per_seq": 5}
    >>> batch = next(iter(read_pretraining_records("records/*.tfrecord", 8, **shapes, seed=1)))
    >>> tuple(batch["input_ids"].shape), tuple(batch["masked_lm_positions"].shape)
    ((8, 32), (8, 5))
    >>> run = read_pretraining_records("records/*.tfrecord", 8, **shapes, seed=1, start_step=0)
    >>> resumed = read_pretraining_records("records/*.tfrecord", 8, **shapes, seed=1, start_step=3)
    >>> batch_3 = list(run.take(4))[3]  # resumed starts with it
    >>> bool(tf.reduce_all(batch_3["input_ids"] == next(iter(resumed))["input_ids"]))
    True
    """
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be at least 1")
    files = _list_files(file_pattern)
    masking = _masking_settings(files, dynamic_masking)
    lengths = record_format.feature_lengths(max_seq_length, max_predictions_per_seq)
    check_first_records(files, lengths)
    limits = value_limits(lengths, recorded_vocabulary_size(files))
    if start_step is not None:
        if seed is None:
            raise ValueError("start_step needs a seed (the batches are a function of both)")
        if input_context is not None:
            raise ValueError("start_step does not go with input_context")
        examples = _parsed_in_order(files, lengths, batch_size, limits)
        num_examples = count_records(files) if num_examples is None else num_examples
        return _resumable_batches(examples, batch_size, num_examples=num_examples, seed=seed,
                                  start_step=start_step, masking=masking)  # fmt: skip
    return _streamed(files, lengths, batch_size, shuffle=shuffle, repeat=repeat, seed=seed,
                     masking=masking, input_context=input_context,
                     drop_remainder=drop_remainder, limits=limits)  # fmt: skip


def _streamed(files, lengths, batch_size, *, shuffle, repeat, seed, masking, input_context,
              drop_remainder, limits=()) -> tf.data.Dataset:  # fmt: skip
    """The batches of a run that is not resumed: shuffled (or not), repeated (or not)."""
    keep_order = seed is not None or not shuffle
    if seed is None:
        # No global RNG: fresh entropy from the OS, drawn once here.
        seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
    if input_context is not None:
        files, batch_size, seed = _this_pipeline(files, batch_size, seed, input_context)
    dataset = _serialized_batches(
        files,
        batch_size,
        shuffle_seed=seed if shuffle else None,
        repeat=repeat,
        drop_remainder=drop_remainder,
    )
    dataset = _parsed_batches(dataset, lengths, masking, seed, limits)
    options = tf.data.Options()
    # A seeded or unshuffled pipeline keeps its order; otherwise let fast workers go first.
    options.deterministic = keep_order
    dataset = dataset.with_options(options)
    return autotune_off(dataset.prefetch(tf.data.AUTOTUNE))


def _masking_settings(
    files: list[str], dynamic_masking: bool | MaskingSettings
) -> MaskingSettings | None:
    """The settings `remask_batch` takes (None: the static masks are kept), with the
    `vocabulary_size` by default from the writer's `stats.json` beside the records."""
    if dynamic_masking is False:
        return None
    masking = MaskingSettings() if dynamic_masking is True else dynamic_masking
    if masking.vocabulary_size is not None:
        return masking
    vocabulary_size = recorded_vocabulary_size(files)
    if vocabulary_size is None:
        what = "dynamic_masking=True" if dynamic_masking is True else "MaskingSettings"
        raise ValueError(
            f"{what} needs vocabulary_size (random replacements' range): give "
            "it, or read records with their writer's stats.json beside them"
        )
    return dataclasses.replace(masking, vocabulary_size=vocabulary_size)


def _this_pipeline(files: list[str], batch_size: int, seed: int,
                   input_context: tf.distribute.InputContext) -> tuple[list[str], int, int]:  # fmt: skip
    """The files, per-replica batch size and seed of input pipeline i of k: files i, i + k, ..."""
    pipelines, pipeline_id = input_context.num_input_pipelines, input_context.input_pipeline_id
    if len(files) < pipelines:
        raise ValueError(
            f"{len(files)} file(s) cannot be split over {pipelines} input pipelines: "
            f"write at least {pipelines} shards"
        )
    # Each pipeline its own shuffles and masks.
    return (
        files[pipeline_id::pipelines],
        input_context.get_per_replica_batch_size(batch_size),
        seed + 1_000_003 * pipeline_id,
    )


def _parsed_batches(
    dataset, lengths, masking: MaskingSettings | None, seed: int, limits=()
) -> tf.data.Dataset:
    """Parses batches of serialized records, and re-masks them when `masking` is given (a fresh
    seed per batch, different every epoch yet fixed by `seed`)."""
    if masking is None:
        return dataset.map(
            lambda *batch: _parse_batch(batch, lengths, limits),
            num_parallel_calls=tf.data.AUTOTUNE,
        )

    # Plain TF ops with explicit loops: skipping AutoGraph's conversion saves seconds; parse and
    # re-mask in one map saves a stage's hand-over per batch.
    @tf.autograph.experimental.do_not_convert
    def parse_and_remask(batch, batch_seed):
        return remask_batch(_parse_batch(batch, lengths, limits), batch_seed, masking)

    seeds = tf.data.Dataset.random(seed=seed + 2, rerandomize_each_iteration=True).batch(2)
    return tf.data.Dataset.zip(dataset, seeds).map(
        parse_and_remask, num_parallel_calls=tf.data.AUTOTUNE
    )


def _serialized_batches(
    files, batch_size, *, shuffle_seed, repeat, drop_remainder
) -> tf.data.Dataset:
    """Batches of `(file name, record index in it, serialized record)`: files (shuffled with
    `shuffle_seed`, else in order) -> parallel interleave -> example shuffle -> repeat ->
    batch. The name and index ride along for the record checks' messages (`check_values`)."""

    def records(name):
        return (
            tf.data.TFRecordDataset(name)
            .enumerate()
            .map(lambda index, record: (name, index, record))
        )

    dataset = tf.data.Dataset.from_tensor_slices(files)
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(files), seed=shuffle_seed)
    dataset = dataset.interleave(
        records,
        cycle_length=min(CYCLE_LENGTH, len(files)),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    if shuffle_seed is not None:
        dataset = dataset.shuffle(SHUFFLE_BUFFER_SIZE, seed=shuffle_seed + 1)
    if repeat:
        dataset = dataset.repeat()
    return dataset.batch(batch_size, drop_remainder=drop_remainder)


def _parsed_in_order(files, lengths, batch_size, limits=()) -> tf.data.Dataset:
    """Every record once, in a fixed order, parsed in batches (vectorized), then unbatched."""
    dataset = _serialized_batches(
        files,
        batch_size,
        shuffle_seed=None,
        repeat=False,
        drop_remainder=False,
    ).map(lambda *batch: _parse_batch(batch, lengths, limits), num_parallel_calls=tf.data.AUTOTUNE)
    options = tf.data.Options()
    options.deterministic = True
    return autotune_off(dataset.with_options(options).prefetch(tf.data.AUTOTUNE).unbatch())


def _resumable_batches(
    examples, batch_size, *, num_examples, seed, start_step, masking
) -> tf.data.Dataset:
    """Endless full batches; pass p shuffled with its own seed, batch k fixed by (seed, k)."""
    batches_per_pass = num_examples // batch_size
    if batches_per_pass == 0:
        raise ValueError(f"{num_examples} examples make no full batch of {batch_size}")
    first_pass, skipped = divmod(start_step, batches_per_pass)

    def batched(shuffled, pass_seed):
        batches = shuffled.batch(batch_size, drop_remainder=True)
        if masking is None:
            return batches

        def remask(index, batch):
            return remask_batch(batch, tf.stack([pass_seed, index]), masking)

        return batches.enumerate().map(
            tf.autograph.experimental.do_not_convert(remask),
            num_parallel_calls=tf.data.AUTOTUNE,
        )

    stream = seeded_passes(
        examples, SHUFFLE_BUFFER_SIZE, seed, first_pass=first_pass, each_pass=batched
    )
    options = tf.data.Options()
    options.deterministic = True
    return autotune_off(stream.skip(skipped).with_options(options).prefetch(tf.data.AUTOTUNE))
