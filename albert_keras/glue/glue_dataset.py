"""A tf.data pipeline over `GlueExamples`: shuffle, batch, then tokenize and pack in the graph."""

from __future__ import annotations

import tensorflow as tf

from albert_keras.glue.glue_encoder import GlueEncoder
from albert_keras.glue.glue_examples import GlueExamples
from albert_keras_contracts.autotune_off import autotune_off
from pipelines.seeded_passes import seeded_passes


def glue_dataset(
    examples: GlueExamples,
    encoder: GlueEncoder,
    batch_size: int,
    *,
    training: bool = False,
    seed: int | None = None,
    with_labels: bool = True,
) -> tf.data.Dataset:
    """Batches of `(inputs, labels)` (or `inputs` alone) for a classifier.

    Encoding happens after batching, so SentencePiece and the packer run once per batch, through
    the encoder's `AlbertPreprocessor`: the layer a fine-tuned classifier is saved and exported
    with, so training and serving see the same ids.

    Args:
        examples: GlueExamples.
        encoder: GlueEncoder. Sets the packed length.
        batch_size: int.
        training: bool. Shuffle over the whole split (each pass in its own order, a pure
            function of `seed` and the pass: `seeded_passes`), repeat forever and drop the
            last partial batch (fixed shapes), as the official training input. Otherwise one
            pass in file order, the last batch kept.
        seed: int or None. The shuffle seed; required when `training`.
        with_labels: bool. Yield `(inputs, labels)`; `False` (or a split without labels) yields
            `inputs` only, for `predict`.

    Returns:
        tf.data.Dataset of `{"token_ids", "segment_ids", "padding_mask"}` int32 (B, T) dicts,
        with int32 class ids or float32 scores (B,) when labelled.

    Example:
    >>> from albert_keras.glue import GlueEncoder, read_glue_tsv
    >>> train = read_glue_tsv("glue_data", "RTE", "train")
    >>> encoder = GlueEncoder("30k-clean.model", sequence_length=16)
    >>> ds = glue_dataset(train, encoder, 32, training=True, seed=0)
    >>> inputs, labels = next(iter(ds))
    >>> tuple(inputs["token_ids"].shape), tuple(labels.shape)
    ((32, 16), (32,))
    """
    if len(examples) == 0:
        raise ValueError(f"{examples.source}: no examples")
    if training and seed is None:
        raise ValueError("glue_dataset(training=True) needs a seed (no unseeded shuffles)")
    columns = {"text_a": tf.constant(examples.text_a, dtype=tf.string)}
    if examples.text_b is not None:
        columns["text_b"] = tf.constant(examples.text_b, dtype=tf.string)
    labelled = with_labels and examples.has_labels
    if labelled:
        columns["label"] = tf.constant(examples.labels)
    dataset = tf.data.Dataset.from_tensor_slices(columns)
    if training:
        dataset = seeded_passes(dataset, len(examples), seed)
    dataset = dataset.batch(batch_size, drop_remainder=training)

    def encode(batch):
        inputs = encoder(batch["text_a"], batch.get("text_b"))
        return (inputs, batch["label"]) if labelled else inputs

    dataset = dataset.map(encode, num_parallel_calls=tf.data.AUTOTUNE)
    return autotune_off(dataset.prefetch(tf.data.AUTOTUNE))
