"""SquadFeatures -> a batched `tf.data.Dataset` for `fit` / `predict` (TPU-friendly shapes)."""

from __future__ import annotations

import tensorflow as tf

from albert_keras.squad.squad_features import SquadFeatures
from albert_keras_contracts.autotune_off import autotune_off
from pipelines.seeded_passes import seeded_passes


def squad_dataset(
    features: SquadFeatures,
    batch_size: int,
    *,
    training: bool = False,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Batches SQuAD features: `(inputs, labels)` for training, `inputs` for prediction.

    Training batches come endlessly, each pass over all features shuffled in its own order (a
    pure function of `seed` and the pass: `seeded_passes`); they have a fixed size (each pass's
    last partial batch is dropped, as TPUs need); their inputs also carry `start_positions`,
    which the v2 head conditions its end logits on. Prediction keeps every feature, in order.

    Args:
        features: SquadFeatures (from `make_squad_features`, `is_training=True` for training).
        batch_size: int.
        training: bool.
        seed: int or None. The shuffle's seed; required when `training`.

    Returns:
        tf.data.Dataset.

    Example:
    >>> from albert_keras.squad import make_squad_features, read_squad_json
    >>> train = read_squad_json("squad-dev.json", is_training=True, first_answer_only=True)
    >>> features = make_squad_features(train[:16], "30k-clean.model", max_seq_length=128,
    ...                                is_training=True)
    >>> inputs, targets = next(iter(squad_dataset(features, 8, training=True, seed=1)))
    >>> tuple(inputs["token_ids"].shape), sorted(targets)
    ((8, 128), ['end_positions', 'is_impossible', 'start_positions'])
    """
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be positive")
    inputs = dict(features.inputs)
    if not training:
        return autotune_off(
            tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size).prefetch(2)
        )
    if seed is None:
        raise ValueError("squad_dataset(training=True) needs a seed (no unseeded shuffles)")
    if len(features) < batch_size:
        raise ValueError(f"{len(features)} training features make no full batch of {batch_size}")
    inputs["start_positions"] = features.labels["start_positions"]
    data = tf.data.Dataset.from_tensor_slices((inputs, dict(features.labels)))

    def batched(shuffled, _):
        return shuffled.batch(batch_size, drop_remainder=True)  # a pass's batches, full only

    return autotune_off(seeded_passes(data, len(features), seed, each_pass=batched).prefetch(2))
