"""The checks of the records `read_pretraining_records` reads, each failing with the file named.

`check_first_records` reads the first record of every file before training starts: a
`tf.train.Example` with each feature of the expected type and length (records written with other
flags, the common mistake). `value_limits` and `check_values` then check, batch by batch inside
the pipeline, that every masked position and token id is in range, naming the file, the record and
the value; `bad_record_line` finds that line again in the TensorFlow error it ends up in.
"""

import re

import tensorflow as tf
from google.protobuf.message import DecodeError

from albert_keras_contracts import record_format
from albert_keras_contracts.autotune_off import autotune_off


def check_first_records(files: list[str], lengths: dict[str, int]) -> None:
    """Reads the first record of every file and checks each feature's type and length.

    Catches records written with other flags (the common mistake) before training starts, with
    the file named; a bad record further on still fails in `parse_example`, naming the feature.
    """

    def first_records(names):
        return autotune_off(
            tf.data.Dataset.from_tensor_slices(names).interleave(
                lambda name: tf.data.TFRecordDataset(name).take(1).map(lambda r: (name, r)),
                cycle_length=16,
                num_parallel_calls=tf.data.AUTOTUNE,
                deterministic=True,
            )
        )

    checked = 0
    try:
        for name, record in first_records(files).as_numpy_iterator():
            _check_record(name.decode(), record, lengths)
            checked += 1
    except tf.errors.DataLossError:
        for name in files:  # find which one (the error does not say)
            try:
                list(first_records([name]))
            except tf.errors.DataLossError as error:
                reason = error.message.splitlines()[0]
                raise ValueError(f"{name}: not a TFRecord file ({reason})") from None
        raise
    if not checked:
        others = f" or the {len(files) - 1} other matching files" if len(files) > 1 else ""
        raise ValueError(f"no records in {files[0]}{others}")


def _check_record(file_name: str, record: bytes, lengths: dict[str, int]) -> None:
    try:
        features = tf.train.Example.FromString(record).features.feature
    except DecodeError:
        raise ValueError(f"{file_name}: record 0 is not a tf.train.Example") from None
    for name, length in lengths.items():
        if name not in features:
            raise ValueError(f"{file_name}: record 0 has no feature {name!r}")
        feature = record_format.BY_NAME[name]
        kind = "float_list" if feature.dtype == "float32" else "int64_list"
        if features[name].WhichOneof("kind") != kind:
            raise ValueError(
                f"{file_name}: record 0: feature {name!r} is a "
                f"{features[name].WhichOneof('kind')}, expected {kind}"
            )
        got = len(getattr(features[name], kind).value)
        if got != length:
            flag = "" if feature.length == "one" else f" ({feature.length}={length})"
            raise ValueError(
                f"{file_name}: record 0: feature {name!r} has {got} values, expected {length}{flag}"
            )


# What a failed record check's message starts with (`bad_record_line` finds it in an error).
_CHECK_PREFIX = "records check: "


def value_limits(lengths: dict[str, int], vocabulary_size: int | None) -> tuple:
    """`(feature, limit, what a value beyond it is)` of the features whose values index
    something: a masked position the sequence, an id the vocabulary (when the writer's
    stats.json says its size; otherwise only negative ids are caught here, the jobs'
    `check_token_ids` reads the first records of each file against the model)."""
    length = lengths[record_format.INPUT_IDS]
    ids = (2**62, "a negative id")
    if vocabulary_size is not None:
        ids = (vocabulary_size, f"outside [0, {vocabulary_size}): the stats.json vocabulary")
    return (
        (record_format.MASKED_LM_POSITIONS, length, f"outside [0, {length}): max_seq_length"),
        (record_format.INPUT_IDS, *ids),
        (record_format.MASKED_LM_IDS, *ids),
    )


def check_values(features, names, indices, limits) -> list:
    """One `tf.debugging.Assert` per feature of `limits`: every value in [0, limit), else the
    error names the file, the record (its index in the file) and the value. A few reductions
    per batch, against a position or id out of range failing later as an unnamed "Graph
    execution error" (or, on a GPU, a gather reading zeros silently)."""
    asserts = []
    for name, limit, what in limits:
        values = features[name]
        good = (values >= 0) & (values < limit)
        rows_good = tf.reduce_all(good, axis=1)
        row = tf.argmin(tf.cast(rows_good, tf.int32))  # the first bad row (0 when none)
        value = values[row][tf.argmin(tf.cast(good[row], tf.int32))]
        message = tf.strings.join([
            _CHECK_PREFIX, names[row], ": record ", tf.strings.as_string(indices[row]),
            f": {name} holds ", tf.strings.as_string(value), f", {what}",
        ])  # fmt: skip
        asserts.append(tf.debugging.Assert(tf.reduce_all(rows_good), [message]))
    return asserts


def bad_record_line(error_message: str) -> str | None:
    """The line a failed record check put in a TensorFlow error (`FILE: record N: FEATURE
    holds VALUE, outside [0, LIMIT): ...`), or None for any other error.

    Example:
    >>> bad_record_line("Graph execution error: ... assertion failed: [records check: "
    ...                 "r.tfrecord: record 7: masked_lm_positions holds 200, outside [0, 128): "
    ...                 "max_seq_length]\\n\\t [[{{node Assert}}]]")
    'r.tfrecord: record 7: masked_lm_positions holds 200, outside [0, 128): max_seq_length'
    """
    match = re.search(re.escape(_CHECK_PREFIX) + r"(.*?)\](?:\n|$)", error_message)
    return match.group(1) if match else None
