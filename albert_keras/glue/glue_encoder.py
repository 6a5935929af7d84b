"""Text -> the backbone's input dict for GLUE: the serving path's `AlbertPreprocessor`, traced."""

from __future__ import annotations

import os

import tensorflow as tf

from albert_keras.preprocessing.albert_preprocessor import AlbertPreprocessor
from albert_keras.preprocessing.albert_tokenizer import AlbertTokenizer
from albert_keras_contracts.text_normalization import preprocess_text_tensor


class GlueEncoder:
    """Encodes batches of GLUE sentences (or sentence pairs) into the backbone's inputs, in graph.

    A thin wrapper around exactly the layers a saved classifier serves with: an
    `AlbertTokenizer` (the official `preprocess_text`, then SentencePiece) and an
    `AlbertPreprocessor` (`[CLS] a [SEP] b [SEP]`, the official longest-first truncation,
    `<pad>`), as the official `classifier_utils.convert_single_example`. Fine-tuning encodes
    through `preprocessor`, and `finetune_glue` saves that same layer inside the classifier,
    so the ids a model was trained on are the ids it predicts and exports with
    (`tests/glue/test_one_text_path.py`). What this class adds is speed: the preprocessor is
    traced once per encoder and reused by every tf.data pipeline built on it (tracing
    keras-hub's tokenizer and packer costs seconds; each dataset's map would redo it).

    Runs in TensorFlow (tf.data), whatever the Keras backend of the model; seeding after the
    encoder is made is fine (the tokenizer's SentencePiece op outlives TensorFlow's kernel
    cache: `AlbertTokenizer._sentencepiece`).

    Args:
        spm_model: str, path or bytes. The SentencePiece model the backbone was trained with.
        sequence_length: int. The packed length (the official max_seq_length).
        lowercase: bool. Lower-case before SentencePiece (ALBERT's release vocabulary is
            uncased: its `.model` does not lower-case by itself). Saved in the tokenizer.

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
            self.tokenizer = AlbertTokenizer(proto=proto, lowercase=bool(lowercase))
        except (tf.errors.OpError, RuntimeError, OSError, ValueError) as error:  # a bad proto
            raise ValueError(f"{spm_model}: not a usable ALBERT SentencePiece model ({error})")
        self.preprocessor = AlbertPreprocessor(self.tokenizer, sequence_length)
        self.sequence_length = int(sequence_length)
        self.lowercase = bool(lowercase)
        self.pad_id = self.tokenizer.pad_token_id
        texts = tf.TensorSpec([None], tf.string)
        self._encode_single = tf.function(self._encode, input_signature=[texts])
        self._encode_pair = tf.function(self._encode, input_signature=[texts, texts])

    @property
    def vocabulary_size(self) -> int:
        return self.tokenizer.vocabulary_size()

    def normalize(self, text: tf.Tensor) -> tf.Tensor:
        """The tokenizer's first step: the official `preprocess_text`, in TensorFlow ops."""
        return preprocess_text_tensor(text, lower_case=self.tokenizer.lowercases)

    def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
        """A batch of strings -> ragged SentencePiece ids (the tokenizer's, normalization
        included)."""
        return self.tokenizer(text)

    def pack(self, ids_a: tf.RaggedTensor, ids_b: tf.RaggedTensor | None = None) -> dict:
        """Ragged ids of one or two segments -> `{"token_ids", "segment_ids", "padding_mask"}`
        (the preprocessor's packing step)."""
        return self.preprocessor.pack(*((ids_a,) if ids_b is None else (ids_a, ids_b)))

    def __call__(self, text_a, text_b=None) -> dict:
        """A batch (1-D) of sentences, and of second sentences for pair tasks -> the backbone's
        input dict of int32 (batch, sequence_length) tensors."""
        if text_b is None:
            return self._encode_single(text_a)
        return self._encode_pair(text_a, text_b)

    def _encode(self, text_a: tf.Tensor, text_b: tf.Tensor | None = None) -> dict:
        # The preprocessor's own steps, not its `Layer.__call__`: on the JAX backend that
        # converts its inputs to JAX arrays, which strings inside `tf.data` cannot become.
        segments = (text_a,) if text_b is None else (text_a, text_b)
        return self.preprocessor.pack(*(self.preprocessor.tokenizer(s) for s in segments))
