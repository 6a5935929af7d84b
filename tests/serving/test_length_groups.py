"""Served logits computed per group of similar lengths, padding cut off, [CLS] alone in the
last block: the same numbers as the model on the padded inputs."""

import keras
import numpy as np
import tensorflow as tf

from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.serving.length_groups import (
    INPUT_NAMES,
    classifier_logits,
    logits_by_length,
    row_counts,
)


def packed(lengths, width, seed=0):
    """Packed inputs with rows of `lengths` real tokens, padded to `width`."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, 50, (len(lengths), width)).astype("int32")
    padding_mask = (np.arange(width)[None, :] < np.array(lengths)[:, None]).astype("int32")
    segment_ids = (np.arange(width)[None, :] >= np.array(lengths)[:, None] // 2) * padding_mask
    return {
        "token_ids": token_ids * padding_mask,
        "segment_ids": segment_ids.astype("int32"),
        "padding_mask": padding_mask,
    }


def test_groups_are_sorted_by_length_and_cut_to_their_longest_row():
    calls = []

    def spy(group):  # each row's first token (its identity) and the width it was given
        calls.append(tuple(group["token_ids"].shape))
        width = tf.fill([tf.shape(group["token_ids"])[0]], tf.shape(group["token_ids"])[1])
        return tf.cast(tf.stack([group["token_ids"][:, 0], width], axis=1), tf.float32)

    lengths = [5, 2, 7, 3, 2]
    inputs = {name: tf.constant(value) for name, value in packed(lengths, 9).items()}
    inputs["token_ids"] = tf.concat([tf.range(100, 105)[:, None], inputs["token_ids"][:, 1:]], 1)
    logits = logits_by_length(spy, inputs, 2, rows_per_group=2, width_multiple=1).numpy()
    # Sorted (stable): rows 1, 4 (2 tokens), 3 (3), 0 (5), 2 (7); groups of two.
    assert calls == [(2, 2), (2, 5), (1, 7)]
    assert logits[:, 0].tolist() == [100, 101, 102, 103, 104]  # back in the rows' order
    assert logits[:, 1].tolist() == [5, 2, 7, 5, 2]
    calls.clear()  # widths rounded up to a multiple, at most the padded 9
    logits_by_length(spy, inputs, 2, rows_per_group=2, width_multiple=4)
    logits_by_length(spy, inputs, 2, rows_per_group=2)  # default multiple 16: all at 9
    assert calls == [(2, 4), (2, 8), (1, 8), (2, 9), (2, 9), (1, 9)]


def test_a_short_group_runs_at_the_next_power_of_two_rows():
    calls = []

    def spy(group):  # each row's first token (its identity)
        calls.append(tuple(group["token_ids"].shape))
        return tf.cast(group["token_ids"][:, :1], tf.float32)

    lengths = [4, 2, 6, 3, 5, 2, 7, 4, 3, 5, 6]  # 11 rows: groups of 8 and 3 (run at 4)
    inputs = {name: tf.constant(value) for name, value in packed(lengths, 8).items()}
    inputs["token_ids"] = tf.concat([tf.range(100, 111)[:, None], inputs["token_ids"][:, 1:]], 1)
    logits = logits_by_length(spy, inputs, 1, rows_per_group=8, width_multiple=1).numpy()
    assert calls == [(8, 5), (4, 7)]  # the 3 longest rows, the last repeated once
    assert logits[:, 0].tolist() == list(range(100, 111))
    assert row_counts(16) == [1, 2, 4, 8, 16] and row_counts(6) == [1, 2, 4, 6]


def test_an_empty_batch_gives_no_rows():
    inputs = {name: tf.zeros([0, 6], tf.int32) for name in INPUT_NAMES}
    graph = tf.function(lambda x: logits_by_length(lambda g: tf.ones([1, 3]), x, 3))
    assert graph(inputs).shape == (0, 3)


def test_grouped_cls_logits_equal_the_model_on_padded_inputs():
    keras.utils.set_random_seed(5)
    backbone = AlbertBackbone(
        vocabulary_size=50,
        num_layers=3,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=24,
    )
    model = AlbertClassifier(backbone, num_classes=3, dropout=0.1)
    lengths = np.random.default_rng(1).integers(3, 25, 37)
    lengths[5] = 24  # one row at the full length
    inputs = packed(lengths.tolist(), 24, seed=2)
    expected = keras.ops.convert_to_numpy(model(inputs, training=False))
    np.testing.assert_allclose(classifier_logits(model)(inputs), expected, atol=1e-5)
    signature = [{name: tf.TensorSpec([None, None], tf.int32) for name in INPUT_NAMES}]
    served = tf.function(
        lambda x: logits_by_length(classifier_logits(model), x, 3, 16, width_multiple=8),
        input_signature=signature,
    )
    np.testing.assert_allclose(served(inputs), expected, atol=1e-5)
    assert np.abs(expected - expected.mean(0)).max() > 1e-3  # rows differ: the order matters
