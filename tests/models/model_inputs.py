"""Tiny inputs in the backbone's and the TFRecords' layouts, for the model tests."""

import numpy as np


def make_backbone_inputs(seed=0, batch_size=4, length=12, vocabulary_size=100):
    """Backbone inputs with a different amount of padding in each row."""
    rng = np.random.default_rng(seed)
    lengths = np.linspace(length, 3, batch_size).astype(int)
    padding_mask = (np.arange(length)[None, :] < lengths[:, None]).astype("int32")
    segment_ids = (np.arange(length)[None, :] >= lengths[:, None] // 2).astype("int32")
    return {
        "token_ids": rng.integers(1, vocabulary_size, (batch_size, length)).astype("int32")
        * padding_mask,
        "segment_ids": segment_ids * padding_mask,
        "padding_mask": padding_mask,
    }


def make_pretraining_batch(seed=0, batch_size=4, length=12, predictions=3, vocabulary_size=100):
    """One batch of TFRecord features (int64 as the records store them)."""
    rng = np.random.default_rng(seed)
    inputs = make_backbone_inputs(seed, batch_size, length, vocabulary_size)
    weights = np.ones((batch_size, predictions), "float32")
    weights[-1, -1] = 0.0  # a padded prediction slot, as when a sequence has few tokens
    return {
        "input_ids": inputs["token_ids"].astype("int64"),
        "input_mask": inputs["padding_mask"].astype("int64"),
        "segment_ids": inputs["segment_ids"].astype("int64"),
        "token_boundary": np.ones((batch_size, length), "int64"),
        "masked_lm_positions": np.tile(np.arange(1, predictions + 1), (batch_size, 1)).astype(
            "int64"
        ),
        "masked_lm_ids": rng.integers(1, vocabulary_size, (batch_size, predictions)).astype(
            "int64"
        ),
        "masked_lm_weights": weights,
        "next_sentence_labels": rng.integers(0, 2, (batch_size, 1)).astype("int64"),
    }
