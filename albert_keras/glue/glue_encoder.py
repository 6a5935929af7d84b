"""Text -> the backbone's input dict: normalize, SentencePiece, pack `[CLS] a [SEP] b [SEP]`."""

from __future__ import annotations

import os

import keras_hub
import tensorflow as tf

from pipelines.text_normalization import preprocess_text_tensor


class GlueEncoder:
    """Encodes batches of GLUE sentences (or sentence pairs) into the backbone's inputs, in graph.

    Three steps, as the official `classifier_utils.convert_single_example`:
    1. the official `tokenization.preprocess_text(lower=True)`: collapse whitespace, ``` `` ```
       and `''` to `"`, NFKD, drop combining marks (accents), lower-case
       (`pipelines.text_normalization`, in TensorFlow ops);
    2. SentencePiece ids with the model's `.model` proto (`keras_hub.tokenizers.AlbertTokenizer`);
    3. `keras_hub.layers.MultiSegmentPacker` with `truncate="round_robin"`: `[CLS] a [SEP]`
       (segment 0) `b [SEP]` (segment 1), padded with `<pad>` to `sequence_length`. Round-robin
       trimming keeps the same tokens as the official `_truncate_seq_pair` (pop from the longer
       segment, from b on a tie): the shorter segment is kept whole if it fits in half the
       budget, else both get half, a the odd token; `tests/glue/test_glue_encoder.py` checks it
       against that loop.

    Runs in TensorFlow (tf.data), whatever the Keras backend of the model. Make the encoder
    after any `keras.utils.set_random_seed` / `tf.random.set_seed`: seeding clears TensorFlow's
    kernel cache, and with it the SentencePiece op's resource ("Resource ... SentencepieceOp
    ... does not exist" at the first batch).

    Args:
        spm_model: str, path or bytes. The SentencePiece model the backbone was trained with.
        sequence_length: int. The packed length (the official max_seq_length).
        lowercase: bool. Lower-case before SentencePiece (ALBERT's release vocabulary is
            uncased: its `.model` does not lower-case by itself).

    Example:
    >>> encoder = GlueEncoder("30k-clean.model", sequence_length=8)
    >>> inputs = encoder(tf.constant(["Hello, my dog"]), tf.constant(["is cute"]))
    >>> inputs["token_ids"].numpy().tolist()  # "dog" is cut: a keeps 3 of 4, b 2 of 2
    [[2, 10975, 15, 51, 3, 25, 10901, 3]]
    """

    def __init__(
        self, spm_model: str | os.PathLike | bytes, sequence_length: int, lowercase: bool = True
    ):
        if sequence_length < 3:
            raise ValueError(f"sequence_length={sequence_length} leaves no room for [CLS] a [SEP]")
        proto = spm_model if isinstance(spm_model, bytes) else os.fspath(spm_model)
        if isinstance(proto, str) and not os.path.isfile(proto):
            raise FileNotFoundError(f"{proto}: SentencePiece model not found")
        try:
            self.tokenizer = keras_hub.tokenizers.AlbertTokenizer(proto=proto)
        except (tf.errors.OpError, RuntimeError, OSError, ValueError) as error:  # a bad proto
            raise ValueError(f"{spm_model}: not a usable ALBERT SentencePiece model ({error})")
        self.sequence_length = int(sequence_length)
        self.lowercase = lowercase
        self.pad_id = self.tokenizer.pad_token_id
        self.packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=self.sequence_length,
            start_value=self.tokenizer.cls_token_id,
            end_value=self.tokenizer.sep_token_id,
            pad_value=self.pad_id,
            truncate="round_robin",
        )
        # Traced once per encoder, then reused by every tf.data pipeline built on it (tracing
        # keras-hub's tokenizer and packer costs seconds; a dataset's map would redo it).
        texts = tf.TensorSpec([None], tf.string)
        self._encode_single = tf.function(self._encode, input_signature=[texts])
        self._encode_pair = tf.function(self._encode, input_signature=[texts, texts])

    @property
    def vocabulary_size(self) -> int:
        return self.tokenizer.vocabulary_size()

    def normalize(self, text: tf.Tensor) -> tf.Tensor:
        """The official `preprocess_text(remove_space=True, lower=True)`, in TensorFlow ops."""
        return preprocess_text_tensor(text, lower_case=self.lowercase)

    def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
        """A batch of strings -> ragged SentencePiece ids (in a graph; called eagerly, keras-hub
        hands back Python lists, which `pack` takes too)."""
        return self.tokenizer(self.normalize(text))

    def pack(self, ids_a: tf.RaggedTensor, ids_b: tf.RaggedTensor | None = None) -> dict:
        """Ragged ids of one or two segments -> `{"token_ids", "segment_ids", "padding_mask"}`."""
        segments = (ids_a,) if ids_b is None else (ids_a, ids_b)
        token_ids, segment_ids = self.packer(segments)
        return {
            "token_ids": tf.cast(token_ids, "int32"),
            "segment_ids": tf.cast(segment_ids, "int32"),
            "padding_mask": tf.cast(token_ids != self.pad_id, "int32"),
        }

    def __call__(self, text_a, text_b=None) -> dict:
        """A batch (1-D) of sentences, and of second sentences for pair tasks -> the backbone's
        input dict of int32 (batch, sequence_length) tensors."""
        if text_b is None:
            return self._encode_single(text_a)
        return self._encode_pair(text_a, text_b)

    def _encode(self, text_a: tf.Tensor, text_b: tf.Tensor | None = None) -> dict:
        ids_b = None if text_b is None else self.tokenize(text_b)
        return self.pack(self.tokenize(text_a), ids_b)
