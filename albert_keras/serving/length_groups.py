"""A classifier's logits over packed inputs, computed at the lengths the texts need.

The preprocessor pads every text to its `sequence_length` (what `tokenize` returns and the
model was fine-tuned at), but a served request is rarely that long: on the held-out book a
paragraph takes 52 of 128 pieces at the median. Padding is masked out of every attention
(an additive -1e9 before the softmax: its weight is exactly 0 in float32) and ALBERT's
positions are absolute, so cutting the padding off the end changes no real token's output
beyond float round-off; the work then follows the texts' lengths, not the padded length.

A batch is sorted by length and cut into groups of `rows_per_group` rows, each cut to its
longest row, so one long text does not make 63 short ones pay for 128 positions. A group of
fewer rows (a batch's last) runs at the next power of two rows (1, 2, 4, 8, 16: its last row
repeated, the copies' logits dropped), so the model meets 5 row counts per width, not 16: each
new shape costs a first call that builds kernels, which the export's warm-up requests pay once
per shape at load (`warmup_requests.py`). And a
classifier reads only [CLS] (the pooler's input): its last transformer block computes that row
alone (`AlbertBackbone.outputs_at`); every earlier block still runs in full, as keys and values.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from albert_keras.models import AlbertClassifier

ROWS_PER_GROUP = 16  # on 2 cores, H256: fewer groups pad more, more groups add per-call overhead
# Widths are rounded up to a multiple of this: each new shape costs oneDNN a new kernel
# (measured: batch-1 requests of ever new lengths ran 2-3x slower than at the padded length).
WIDTH_MULTIPLE = 16
INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")


def row_counts(rows_per_group: int = ROWS_PER_GROUP) -> list[int]:
    """The row counts a group runs at: the powers of two below `rows_per_group`, and it.

    Args:
        rows_per_group: int. The most rows a group holds.

    Returns:
        list of int, ascending.

    Example:
    >>> row_counts(16), row_counts(12)
    ([1, 2, 4, 8, 16], [1, 2, 4, 8, 12])
    """
    return sorted({min(2**k, rows_per_group) for k in range(rows_per_group.bit_length() + 1)})


def classifier_logits(model) -> Callable[[dict], tf.Tensor]:
    """`inputs -> float32 logits` of `model`, reading only [CLS] in the last block.

    Args:
        model: `AlbertClassifier` (any other Keras model is called whole).

    Returns:
        A function from the backbone's input dict to (batch, num_classes) float32 logits,
        equal to `model(inputs, training=False)` up to float round-off.

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=50, num_layers=2, num_heads=2, embedding_dim=8,
    ...                           hidden_dim=16, intermediate_dim=32, max_sequence_length=8)
    >>> model = AlbertClassifier(backbone, num_classes=3)
    >>> inputs = {"token_ids": np.array([[2, 7, 9, 3, 0]], "int32"),
    ...           "segment_ids": np.zeros((1, 5), "int32"),
    ...           "padding_mask": np.array([[1, 1, 1, 1, 0]], "int32")}
    >>> bool(np.allclose(classifier_logits(model)(inputs), model(inputs), atol=1e-6))
    True
    """
    if not isinstance(model, AlbertClassifier):
        return lambda inputs: tf.cast(model(inputs, training=False), tf.float32)

    def logits(inputs):
        cls_rows = tf.zeros_like(tf.convert_to_tensor(inputs["token_ids"])[:, :1])
        pooled = model.backbone.outputs_at(inputs, cls_rows, training=False)["pooled_output"]
        # The head as the functional model runs it: Dropout (identity here), then Dense.
        return tf.cast(model.output_dense(pooled), tf.float32)

    return logits


def logits_by_length(
    logits_of: Callable[[dict], tf.Tensor],
    inputs: dict,
    num_classes: int,
    rows_per_group: int = ROWS_PER_GROUP,
    width_multiple: int = WIDTH_MULTIPLE,
) -> tf.Tensor:
    """`logits_of(inputs)` computed per group of similar lengths, padding cut off.

    Args:
        logits_of: function from an input dict (batch, time) to float32 (batch, num_classes).
        inputs: dict of int32 (batch, time) `token_ids`, `segment_ids`, `padding_mask`, each
            row's real tokens first (as the preprocessor packs them).
        num_classes: int. The logits' width.
        rows_per_group: int. Rows per call of `logits_of` (the last group may hold fewer; it
            runs at the next of `row_counts(rows_per_group)`, its last row repeated).
        width_multiple: int. A group's width is its longest row rounded up to a multiple of
            this (at most the padded width), so few distinct shapes come.

    Returns:
        float32 (batch, num_classes), in the rows' order.

    Example:
    >>> inputs = {name: tf.constant([[2, 5, 6, 3], [2, 3, 0, 0], [2, 5, 3, 0]])
    ...           for name in INPUT_NAMES}
    >>> width_seen = lambda x: tf.cast(tf.fill([tf.shape(x["token_ids"])[0], 1],
    ...                                        tf.shape(x["token_ids"])[1]), tf.float32)
    >>> logits_by_length(width_seen, inputs, 1, rows_per_group=2, width_multiple=1
    ...                  ).numpy().ravel().tolist()
    [4.0, 3.0, 3.0]
    """
    lengths = tf.reduce_sum(tf.cast(inputs["padding_mask"] != 0, tf.int32), axis=1)
    order = tf.argsort(lengths, stable=True)
    sorted_inputs = {name: tf.gather(inputs[name], order) for name in INPUT_NAMES}
    sorted_lengths = tf.gather(lengths, order)
    batch, padded_width = tf.shape(lengths)[0], tf.shape(inputs["padding_mask"])[1]
    num_groups = (batch + rows_per_group - 1) // rows_per_group
    groups = tf.TensorArray(
        tf.float32, size=num_groups, infer_shape=False, element_shape=[None, num_classes]
    )
    counts = tf.constant(row_counts(rows_per_group))

    def group_logits(i, groups):
        start = i * rows_per_group
        end = tf.minimum(start + rows_per_group, batch)
        longest = tf.maximum(sorted_lengths[end - 1], 1)
        width = tf.minimum(-(-longest // width_multiple) * width_multiple, padded_width)
        rows = tf.gather(counts, tf.searchsorted(counts, [end - start])[0])
        index = tf.minimum(tf.range(start, start + rows), end - 1)  # the last row repeated
        group = {name: tf.gather(value, index)[:, :width] for name, value in sorted_inputs.items()}
        return i + 1, groups.write(i, logits_of(group)[: end - start])

    # A while loop, not Python's: the batch size is known only when a request comes.
    _, groups = tf.while_loop(lambda i, _: i < num_groups, group_logits, (0, groups))
    return tf.gather(groups.concat(), tf.math.invert_permutation(order))
