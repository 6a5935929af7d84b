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

The writer (`pipelines.pretraining_examples`), the reader (`pipelines.read_pretraining_records`)
and the pretraining job import the names from here. Pure Python (no TensorFlow import).
"""

from __future__ import annotations

import dataclasses


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
    RecordFeature("input_ids", "int64", "max_seq_length"),
    RecordFeature("input_mask", "int64", "max_seq_length"),
    RecordFeature("segment_ids", "int64", "max_seq_length"),
    RecordFeature("token_boundary", "int64", "max_seq_length"),
    RecordFeature("masked_lm_positions", "int64", "max_predictions_per_seq"),
    RecordFeature("masked_lm_ids", "int64", "max_predictions_per_seq"),
    RecordFeature("masked_lm_weights", "float32", "max_predictions_per_seq"),
    RecordFeature("next_sentence_labels", "int64", "one"),
)
FEATURE_NAMES = tuple(feature.name for feature in FEATURES)
BY_NAME = {feature.name: feature for feature in FEATURES}
# What the pretrainer needs; `token_boundary` (whole-word starts, for dynamic masking) is ours,
# not the official script's, and optional for training.
TRAINING_FEATURES = tuple(name for name in FEATURE_NAMES if name != "token_boundary")


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
