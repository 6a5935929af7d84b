"""The pretraining records' format: feature names, dtypes and lengths, in one place.

The official google-research/albert `create_pretraining_data.py` features (docs/design.md), in
the order the writer serializes them:

| feature | dtype | length |
|---|---|---|
| `input_ids` | int64 | T = max_seq_length |
| `input_mask` | int64 | T |
| `segment_ids` | int64 | T |
| `token_boundary` | int64 | T |
| `masked_lm_positions` | int64 | P = max_predictions_per_seq |
| `masked_lm_ids` | int64 | P |
| `masked_lm_weights` | float32 | P |
| `next_sentence_labels` | int64 | 1 |

The writer (`pipelines.pretraining_examples`), the reader (`pipelines.read_pretraining_records`),
dynamic masking, the pretrainer, the distiller and the benchmarks import the names from here,
and the record -> model-input mapping (`MODEL_INPUTS`). The format is versioned: the writer
records `VERSION` in `stats.json` (`VERSION_KEY`), and the readers refuse shards of another
version in one line naming both (`check_version`); a `stats.json` without one is version 1, the
format before it was versioned. A change of a name, dtype or length is a new version.
Pure Python (no TensorFlow import).
"""

from __future__ import annotations

import dataclasses

# The format's version, written to the writer's stats.json under `VERSION_KEY`.
VERSION = 1
VERSION_KEY = "record_format_version"
UNVERSIONED = 1  # what a stats.json written before versions was

# The feature names, each spelled once (docs/design.md's table).
INPUT_IDS = "input_ids"
INPUT_MASK = "input_mask"
SEGMENT_IDS = "segment_ids"
TOKEN_BOUNDARY = "token_boundary"
MASKED_LM_POSITIONS = "masked_lm_positions"
MASKED_LM_IDS = "masked_lm_ids"
MASKED_LM_WEIGHTS = "masked_lm_weights"
SENTENCE_LABELS = "next_sentence_labels"  # SOP or NSP labels: the official name for both


@dataclasses.dataclass(frozen=True)
class RecordFeature:
    """One feature of a pretraining record.

    Args:
        name: str. The `tf.train.Example` feature name.
        dtype: str. `"int64"` (an `Int64List`) or `"float32"` (a `FloatList`).
        length: str. What sets its length: `"max_seq_length"`, `"max_predictions_per_seq"`, or
            `"one"` (a single value).
    """

    name: str
    dtype: str
    length: str


FEATURES = (
    RecordFeature(INPUT_IDS, "int64", "max_seq_length"),
    RecordFeature(INPUT_MASK, "int64", "max_seq_length"),
    RecordFeature(SEGMENT_IDS, "int64", "max_seq_length"),
    RecordFeature(TOKEN_BOUNDARY, "int64", "max_seq_length"),
    RecordFeature(MASKED_LM_POSITIONS, "int64", "max_predictions_per_seq"),
    RecordFeature(MASKED_LM_IDS, "int64", "max_predictions_per_seq"),
    RecordFeature(MASKED_LM_WEIGHTS, "float32", "max_predictions_per_seq"),
    RecordFeature(SENTENCE_LABELS, "int64", "one"),
)
FEATURE_NAMES = tuple(feature.name for feature in FEATURES)
BY_NAME = {feature.name: feature for feature in FEATURES}
# What the pretrainer needs; `token_boundary` (whole-word starts, for dynamic masking) is ours,
# not the official script's, and optional for training.
TRAINING_FEATURES = tuple(name for name in FEATURE_NAMES if name != TOKEN_BOUNDARY)
# The backbone's input names -> the record features that feed them (the pretrainer, the
# distiller and the demo read records through `AlbertPretrainer`'s `backbone_inputs`).
MODEL_INPUTS = {"token_ids": INPUT_IDS, "segment_ids": SEGMENT_IDS, "padding_mask": INPUT_MASK}


def feature_lengths(max_seq_length: int, max_predictions_per_seq: int) -> dict[str, int]:
    """Each feature's number of values, in the writer's order.

    Example:
    >>> feature_lengths(128, 20)["masked_lm_ids"], feature_lengths(128, 20)["input_ids"]
    (20, 128)
    """
    sizes = {"max_seq_length": max_seq_length, "max_predictions_per_seq": max_predictions_per_seq}
    return {feature.name: sizes.get(feature.length, 1) for feature in FEATURES}


def check_feature_names(names) -> None:
    """Raises `ValueError` unless `names` are `FEATURE_NAMES` in order (the writer's check).

    Example:
    >>> check_feature_names(["input_ids"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: record features ['input_ids'] are not the record format's ...
    """
    if tuple(names) != FEATURE_NAMES:
        raise ValueError(
            f"record features {list(names)} are not the record format's {list(FEATURE_NAMES)}"
        )


def stats_version(stats: dict) -> object:
    """The record format version a writer's `stats.json` content records (1 when it has none:
    stats written before the format was versioned).

    Example:
    >>> stats_version({"shards": []}), stats_version({"record_format_version": 2})
    (1, 2)
    """
    return stats.get(VERSION_KEY, UNVERSIONED)


def check_version(stats: dict, where: str) -> None:
    """Raises `ValueError` (one line naming `where` and both versions) unless the stats'
    records are of this format's `VERSION`.

    Args:
        stats: dict. A writer's `stats.json` content.
        where: str. What the message names (the flag and the stats' path).

    Example:
    >>> check_version({"record_format_version": 1}, "records/stats.json")
    >>> check_version({"record_format_version": 2}, "records/stats.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: records/stats.json: records of format version 2, but this albert-keras reads ...
    """
    version = stats_version(stats)
    if version != VERSION:
        raise ValueError(
            f"{where}: records of format version {version}, but this albert-keras reads "
            f"version {VERSION}: write them again with this version's pretraining_data, or read "
            f"them with the albert-keras that wrote them"
        )
