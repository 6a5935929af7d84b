"""Which files a records glob names, and how many records they hold, checked file by file.

`list_record_files` expands globs (`gs://` too) to the TFRecord shards they match, leaving out
what sits beside shards and is not one: folders, hidden or `_`-prefixed names (the writer's
`.albert_progress/`, Spark's `_SUCCESS`), `stats.json`, temporary files, and any other file whose
first 12 bytes are not a TFRecord header. `out/records/*` and `out/records/*.tfrecord*` then
read the same shards as `out/records/*.tfrecord`; what was left out is named in one line.

`count_records` counts every file's records and checks that its bytes are whole records: a
flipped or missing byte fails here, before training, with the file named.

TensorFlow is imported inside the functions (`pipelines` is importable without it).
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import struct
import sys
from collections.abc import Sequence

from albert_keras_contracts import writer_stats
from albert_keras_contracts.record_format import INPUT_IDS, MASKED_LM_IDS, MASKED_LM_POSITIONS
from pipelines.record_writer import masked_crc

# Names that are never record shards (no read needed).
_NOT_RECORD_SUFFIXES = (".json", ".partial", ".txt", ".md", ".model", ".vocab", ".log", ".lock")
# Names that say "I am a shard": such a file with a bad header is an error, not skipped.
_SHARD_NAME = re.compile(r"tfrecord|-\d+-of-\d+$", re.IGNORECASE)
# `albert_keras_contracts.output_folder`'s manifest and lock files (`.albert-keras.json`, `...lock`).
_OUTPUT_FOLDER_NAMES = ".albert-keras"
_HEADER_BYTES = 12  # uint64 length + masked CRC-32C of those 8 bytes
_MAX_LISTED = 5


def list_record_files(
    patterns: str | Sequence[str], flag: str = "file_pattern", *, verbose: bool = True
) -> list[str]:
    """Expands record globs to the sorted list of TFRecord shards they match.

    A name given without glob characters is taken as it is (and must be a record file). Among
    glob matches, files that are not shards are left out and named on stderr in one line; a
    match whose name says it is a shard (`*tfrecord*`, `*-00001-of-00008`) but whose header is
    not a TFRecord's is an error. Where the writer's `stats.json` sits beside the matches, only
    the shards it lists are read (`albert_keras_contracts.writer_stats`: others are left out, named; a
    missing or empty listed shard is an error).

    Args:
        patterns: str or list of str. Globs (or names) of TFRecord files, a string may hold
            several separated by commas; `gs://` works.
        flag: str. How errors and the skipped line name the input (e.g. `"--records"`).
        verbose: bool. Print the one line naming what was left out.

    Returns:
        The shards, sorted, without duplicates.

    Raises:
        FileNotFoundError: a pattern matches nothing (or no shard), or a listed shard is gone.
        ValueError: a named or shard-named file is not a TFRecord file; a listed shard is empty
            and the shards hold fewer records than their `stats.json` says.

    Example:
    >>> list_record_files("records/*")  # stats.json and .albert_progress/ left out
    ['records/pretraining-00000-of-00002.tfrecord', 'records/pretraining-00001-of-00002.tfrecord']
    """
    import tensorflow as tf

    patterns = _split_patterns(patterns, flag)
    files = set(_named_files([p for p in patterns if not _has_glob_characters(p)], flag))
    skipped, unlisted = [], []
    for pattern in patterns:
        if not _has_glob_characters(pattern):
            continue
        matched = tf.io.gfile.glob(pattern)
        if not matched:
            raise FileNotFoundError(f"{flag} {pattern!r}: no file matches")
        shards = _shards_among(matched, flag, skipped)
        if not shards:
            raise FileNotFoundError(
                f"{flag} {pattern!r}: no TFRecord shard among the {len(matched)} match(es) "
                f"({_names(matched)})"
            )
        files.update(writer_stats.listed_shards(pattern, shards, flag, unlisted))
    if verbose:
        _say_left_out(flag, skipped, unlisted)
    files = sorted(files)
    writer_stats.check_empty_shards(files, flag, count_records)
    return files


def _split_patterns(patterns: str | Sequence[str], flag: str) -> list[str]:
    """The patterns as a list: several globs in one string, comma-separated (as `--input`),
    unless it names a file."""
    import tensorflow as tf

    patterns = [patterns] if isinstance(patterns, str) else list(patterns)
    patterns = [
        part.strip()
        for pattern in patterns
        for part in (
            pattern.split(",") if "," in pattern and not tf.io.gfile.exists(pattern) else [pattern]
        )
        if part.strip()
    ]
    if not patterns:
        raise ValueError(f"{flag} is empty: give a glob such as 'out/records/*.tfrecord'")
    return patterns


def _named_files(names: list[str], flag: str) -> list[str]:
    """`names` (given without glob characters), each checked to be a record file."""
    import tensorflow as tf

    for name, kind in zip(names, _kinds(names)):
        if kind == "folder":
            raise ValueError(
                f"{flag} {name!r} is a folder; give a glob such as '{name.rstrip('/')}/*.tfrecord'"
            )
        if kind != "records":
            if not tf.io.gfile.exists(name):
                raise FileNotFoundError(f"{flag} {name!r}: no such file")
            raise ValueError(_not_records(name, flag))
    return names


def _say_left_out(flag: str, skipped: list[str], unlisted: list[str]) -> None:
    """One line on stderr for the matches that are not shards, one for the shards the writer's
    stats.json does not list (none where there are none)."""
    if skipped:
        print(
            f"{flag}: skipped {len(skipped)} match(es) that are not record shards: "
            f"{_names(sorted(skipped))}",
            file=sys.stderr,
            flush=True,
        )
    if unlisted:
        print(
            f"{flag}: ignored {len(unlisted)} file(s) that the writer's {writer_stats.STATS_FILE} "
            f"beside them does not list: {_names(sorted(unlisted))}",
            file=sys.stderr,
            flush=True,
        )


def count_records(files: Sequence[str], flag: str = "file_pattern") -> int:
    """Counts the records of `files`, checking that each file is whole TFRecord data.

    Every record's length and data checksums are verified (TensorFlow's reader) and the bytes
    of each file must add up to its records: a file cut inside a record header (which
    TensorFlow reads as a clean end) is refused too.

    Args:
        files: list of str. TFRecord files (e.g. from `list_record_files`).
        flag: str. How errors name the input.

    Returns:
        The number of records in all files.

    Raises:
        ValueError: naming the first corrupt or truncated file; or, where every shard a writer's
            `stats.json` lists is counted, records that do not add up to its `examples`.

    Example:
    >>> count_records(list_record_files("records/*.tfrecord"))
    102
    """
    import tensorflow as tf

    from albert_keras_contracts.autotune_off import autotune_off

    if not files:
        return 0
    files = list(files)

    def count_one(name):
        # (records, data bytes) of one file: with 16 framing bytes per record, the file's size.
        return tf.data.TFRecordDataset(name).reduce(
            (tf.constant(0, tf.int64), tf.constant(0, tf.int64)),
            lambda acc, record: (acc[0] + 1, acc[1] + tf.cast(tf.strings.length(record), tf.int64)),
        )

    try:
        counts = list(
            autotune_off(
                tf.data.Dataset.from_tensor_slices(files).map(
                    count_one, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
                )
            ).as_numpy_iterator()
        )
    except (tf.errors.DataLossError, tf.errors.InvalidArgumentError):
        counts = None  # the error names no file: find it below
    if counts is None:
        counts = []
        for name in files:
            try:
                counts.append(tuple(int(v) for v in count_one(name)))
            except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
                reason = re.sub(r"\s*\[Op:.*$", "", error.message.strip().splitlines()[0])
                raise ValueError(
                    f"{flag}: {name} is corrupt ({reason.split('}}')[-1].strip()}); "
                    "rewrite it or leave it out"
                ) from None
    total, per_file = 0, {}
    for name, (records, data_bytes) in zip(files, counts):
        size = tf.io.gfile.stat(name).length
        whole = int(records) * 16 + int(data_bytes)
        if size != whole:
            raise ValueError(
                f"{flag}: {name} is truncated or padded: {size - whole} byte(s) after its "
                f"{int(records)} whole record(s); rewrite it or leave it out"
            )
        total += int(records)
        per_file[name] = int(records)
    writer_stats.check_counts(per_file, flag)
    return total


def check_token_ids(
    files: Sequence[str],
    vocabulary_size: int,
    flag: str = "file_pattern",
    source: str = "the vocabulary",
    records_per_file: int = 256,
) -> None:
    """Refuses records holding token ids the vocabulary does not have.

    Reads the first `records_per_file` records of each file (records written with another
    vocabulary show it at once), so that a mismatch is one line naming the file and the
    vocabulary before training starts, not an embedding lookup failing mid-run.

    Args:
        files: list of str. TFRecord files (already checked by `count_records`).
        vocabulary_size: int. The model's vocabulary: ids must be below it.
        flag: str. How the error names the records.
        source: str. Where `vocabulary_size` came from (e.g. `"--spm_model out/spm.model"`).
        records_per_file: int. Records read from the start of each file.

    Raises:
        ValueError: naming the first file with an id >= `vocabulary_size` or below 0.

    Example:
    >>> files = list_record_files("records/*.tfrecord")
    >>> check_token_ids(files, 50, "--records", "--spm_model spm.model")  # ids fit: no error
    >>> check_token_ids(files, 20, "--records", "--spm_model small.model")
    Traceback (most recent call last):
    ValueError: --records: records/pretraining-00000-of-00002.tfrecord holds token id 49, but ...
    """
    import tensorflow as tf

    spec = {name: tf.io.VarLenFeature(tf.int64) for name in (INPUT_IDS, MASKED_LM_IDS)}

    def id_range(name):
        batch = tf.data.TFRecordDataset(name).take(records_per_file).batch(records_per_file)
        smallest, largest = tf.constant(0, tf.int64), tf.constant(-1, tf.int64)
        for serialized in batch:
            parsed = tf.io.parse_example(serialized, spec)
            for value in parsed.values():
                values = tf.concat([value.values, [0]], axis=0)  # 0 (padding): no id at all
                smallest = tf.minimum(smallest, tf.reduce_min(values))
                largest = tf.maximum(largest, tf.reduce_max(values))
        return int(smallest), int(largest)

    for name in files:
        smallest, largest = id_range(name)
        if smallest < 0:
            raise ValueError(
                f"{flag}: {name} holds token id {smallest}: ids are never negative, the file "
                "was not written by an ALBERT vocabulary (write it again)"
            )
        if largest >= vocabulary_size:
            raise ValueError(
                f"{flag}: {name} holds token id {largest}, but {source} has only "
                f"{vocabulary_size} ids: the records were written with another vocabulary "
                "(give the one they were made with)"
            )


def record_lengths(
    path: str,
    max_seq_length: int | None = None,
    max_predictions_per_seq: int | None = None,
) -> tuple[int, int]:
    """Reads the first record of `path`: checks it has every training feature, returns its lengths.

    The pretraining and distillation jobs call it before any model is built, so records of the
    wrong kind or length fail in a second with the file named.

    Args:
        path: str. A TFRecord file of pretraining examples (`albert_keras_contracts.record_format`).
        max_seq_length: int. If given, the records must have this sequence length.
        max_predictions_per_seq: int. If given, the records must have this many MLM slots.

    Returns:
        `(max_seq_length, max_predictions_per_seq)` of the records.

    Raises:
        ValueError: naming `path`, when it is unreadable, empty, lacks a feature or has other
            lengths than asked.
    """
    import tensorflow as tf
    from google.protobuf.message import DecodeError

    from albert_keras_contracts import record_format

    try:
        first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
    except tf.errors.OpError as error:
        raise ValueError(f"{path}: not a readable TFRecord file ({error.message})") from None
    if first is None:
        raise ValueError(f"{path}: holds no record")
    try:
        features = tf.train.Example.FromString(first.numpy()).features.feature
    except DecodeError as error:
        raise ValueError(f"{path}: record 0 is not a tf.train.Example ({error})") from None
    missing = [name for name in record_format.TRAINING_FEATURES if name not in features]
    if missing:
        raise ValueError(f"{path}: record 0 lacks feature(s) {', '.join(missing)}")
    seq_length = len(features[INPUT_IDS].int64_list.value)
    num_predictions = len(features[MASKED_LM_POSITIONS].int64_list.value)
    for name, want, got in (
        ("max_seq_length", max_seq_length, seq_length),
        ("max_predictions_per_seq", max_predictions_per_seq, num_predictions),
    ):
        if want is not None and want != got:
            raise ValueError(f"{path}: record 0 has {name} {got}, expected {want}")
    return seq_length, num_predictions


def _has_glob_characters(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _shards_among(paths: list[str], flag: str, skipped: list[str]) -> list[str]:
    """The record shards among glob matches; the others' names are appended to `skipped`.

    Names first (no I/O), then one 12-byte read per remaining match (in threads: a TPU run
    may glob thousands of shards on GCS).
    """
    candidates = []
    for path in paths:
        name = os.path.basename(path.rstrip("/"))
        if name.startswith(_OUTPUT_FOLDER_NAMES):
            continue  # the folder's own manifest and lock: not worth a word
        if name.startswith((".", "_")) or name.endswith(_NOT_RECORD_SUFFIXES) or ".tmp" in name:
            skipped.append(name)
        else:
            candidates.append(path)
    shards = []
    for path, kind in zip(candidates, _kinds(candidates)):
        name = os.path.basename(path.rstrip("/"))
        if kind == "records":
            shards.append(path)
        elif kind == "folder":
            skipped.append(name + "/")
        elif _SHARD_NAME.search(name):
            # Named as a shard but not one: a broken shard, not a file to leave out.
            raise ValueError(_not_records(path, flag))
        else:
            skipped.append(name)
    return shards


def _kinds(paths: list[str]) -> list[str]:
    """`_kind` of each path, read in threads (on GCS each read is a round trip)."""
    if len(paths) < 2:
        return [_kind(path) for path in paths]
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(_kind, paths))


def _kind(path: str) -> str:
    """`"records"` (an empty file, or the first 12 bytes are a TFRecord length and its
    checksum), `"folder"` or `"other"`."""
    import tensorflow as tf

    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            header = f.read(_HEADER_BYTES)
    except (tf.errors.OpError, OSError):
        return "folder" if tf.io.gfile.isdir(path) else "other"
    if not header:
        return "records"  # a shard with no records (the reader says so, by name)
    if len(header) < _HEADER_BYTES:
        return "other"
    length_bytes, (stored_crc,) = header[:8], struct.unpack("<I", header[8:])
    return "records" if masked_crc(length_bytes) == stored_crc else "other"


def _not_records(path: str, flag: str) -> str:
    return f"{flag} {path}: not a readable TFRecord file (its first record's header is invalid)"


def _names(paths: list[str]) -> str:
    names = [os.path.basename(p.rstrip("/")) + ("/" if p.endswith("/") else "") for p in paths]
    shown = ", ".join(names[:_MAX_LISTED])
    return shown + (f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else "")
