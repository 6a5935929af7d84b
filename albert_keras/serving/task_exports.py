"""SavedModels over raw strings for the token tagger and the multiple-choice model.

As `export_saved_model` (the classifier's): the graph holds the tokenizer (official
normalization + SentencePiece, tf-text's ops), the packing and the model, so TensorFlow alone
(with `import tensorflow_text`) serves it; the folder is written and owned as `albert-keras
export` writes its folders (`write_archive`).
"""

from __future__ import annotations

import pathlib

import keras
import tensorflow as tf

from albert_keras.serving.export_saved_model import TEXT, write_archive


def export_token_classifier(
    model,
    output_dir: str | pathlib.Path,
    preprocessor=None,
    *,
    overwrite: bool = False,
    arguments: dict | None = None,
) -> dict:
    """Writes an `AlbertTokenClassifier` as a SavedModel that tags the words of raw text.

    Signature `serving_default(text)`, a batch of strings: the whitespace-separated words of
    each, padded to the longest (with `""` and -1): `words`, `tags` (a tag name; `""` for a word
    past the sequence length), `starts` / `ends` (character offsets, as `predict` gives them).
    Words are encoded one by one and tagged on their first piece, as in training
    (`albert_keras.preprocessing.word_pieces`).

    Args:
        model: `AlbertTokenClassifier` with `labels`.
        output_dir: str or Path. The SavedModel folder (owned as `export_saved_model`'s).
        preprocessor: `AlbertPreprocessor` (its tokenizer and length), default the model's.
        overwrite: bool. Replace an earlier export made with other `arguments`.
        arguments: dict or None. What the export was made from (the folder's manifest).

    Example:
    >>> from albert_keras.models import AlbertTokenClassifier
    >>> from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    >>> tagger = AlbertTokenClassifier(  # or `albert-keras finetune-tokens`'s model.keras
    ...     keras.saving.load_model("albert.keras").backbone, num_classes=2,
    ...     labels=["O", "B-ANIMAL"], preprocessor=AlbertPreprocessor(AlbertTokenizer("spm.model"), 16))
    >>> export_token_classifier(tagger, "served_ner/")
    {'serving_default': ['words', 'tags', 'starts', 'ends']}
    >>> import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)
    >>> served = tf.saved_model.load("served_ner/").signatures["serving_default"]
    >>> out = served(text=tf.constant(["the  cat sat"]))
    >>> out["words"].numpy().tolist(), out["starts"].numpy().tolist()
    ([[b'the', b'cat', b'sat']], [[0, 5, 9]])
    """
    import tensorflow_text as tf_text

    preprocessor = preprocessor or model.preprocessor
    if preprocessor is None or model.labels is None:
        raise ValueError("export needs the tagger's preprocessor and labels (as fine-tuned)")
    labels = tf.constant(model.labels)

    def tag(text):
        words, byte_starts, byte_ends = tf_text.WhitespaceTokenizer().tokenize_with_offsets(text)
        tags = _word_tags(model, preprocessor, labels, words)
        texts = tf.gather(text, words.value_rowids())  # each word's text

        def padded(values, default):
            return words.with_flat_values(values).to_tensor(default_value=default)

        return {
            "words": padded(words.flat_values, ""),
            "tags": padded(tags, ""),
            "starts": padded(_characters(texts, byte_starts), -1),
            "ends": padded(_characters(texts, byte_ends), -1),
        }

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.track(preprocessor)
    archive.add_endpoint("serving_default", tag, input_signature=[TEXT])
    write_archive(archive, output_dir, arguments, overwrite=overwrite)
    return {"serving_default": ["words", "tags", "starts", "ends"]}


def _word_tags(model, preprocessor, labels, words: tf.RaggedTensor) -> tf.Tensor:
    """The tag of each word of `words` (texts, words), flat: the label of its first piece, or
    `""` for a word whose pieces pass the sequence length. Words are encoded one by one."""
    tokenizer, length = preprocessor.tokenizer, preprocessor.sequence_length
    pieces = _word_pieces(tokenizer, words.flat_values)  # (words, pieces)
    sizes = pieces.row_lengths()
    # Each word's first piece: 1 ([CLS]) + the pieces of the words before it, in its text.
    before = tf.concat([[0], tf.cumsum(sizes)], axis=0)
    row_of_word = words.value_rowids()
    first = 1 + before[:-1] - tf.gather(before, tf.gather(words.row_starts(), row_of_word))
    fits = first + sizes <= length - 1  # [CLS] pieces [SEP]
    by_text = tf.RaggedTensor.from_row_splits(pieces, words.row_splits).merge_dims(1, 2)
    inputs = preprocessor.pack(by_text[:, : length - 2])
    logits = model(inputs, training=False)
    where = tf.stack([row_of_word, tf.minimum(first, length - 1)], axis=1)
    ids = tf.argmax(tf.gather_nd(logits, where), axis=-1)
    return tf.where(fits, tf.gather(labels, ids), "")


def _word_pieces(tokenizer, words: tf.Tensor) -> tf.RaggedTensor:
    """The pieces of each of `words` (words, pieces); a word with no piece (a lone accent) is
    one <unk>, as `encode_words` makes it."""
    pieces = tokenizer(words)
    empty = tf.cast(pieces.row_lengths() == 0, tf.int64)
    unk = tf.fill([tf.reduce_sum(empty)], tf.cast(tokenizer.unk_token_id, pieces.dtype))
    return tf.concat([pieces, tf.RaggedTensor.from_row_lengths(unk, empty)], axis=1)


def _characters(texts: tf.Tensor, byte_offsets: tf.RaggedTensor) -> tf.Tensor:
    """UTF-8 byte offsets into `texts` (one text per offset) -> character offsets, as Python's."""
    ends = tf.cast(byte_offsets.flat_values, tf.int32)
    prefix = tf.strings.substr(texts, tf.zeros_like(ends), ends)
    return tf.cast(tf.strings.length(prefix, unit="UTF8_CHAR"), tf.int64)


def export_multiple_choice(
    model,
    output_dir: str | pathlib.Path,
    preprocessor=None,
    *,
    overwrite: bool = False,
    arguments: dict | None = None,
) -> dict:
    """Writes an `AlbertMultipleChoice` as a SavedModel that chooses among options of text.

    Signature `serving_default(context, options)`: `context` a batch of strings, `options`
    (batch, options) strings (each the second segment of its pair, as `predict` takes them);
    returns `probabilities` (batch, options) and `choice` (batch,), the chosen option's index.

    Args:
        model: `AlbertMultipleChoice`.
        output_dir: str or Path. The SavedModel folder (owned as `export_saved_model`'s).
        preprocessor: `AlbertPreprocessor`, default the model's.
        overwrite: bool. Replace an earlier export made with other `arguments`.
        arguments: dict or None. What the export was made from (the folder's manifest).

    Example:
    >>> from albert_keras.models import AlbertMultipleChoice
    >>> from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    >>> chooser = AlbertMultipleChoice(  # or `albert-keras finetune-choice`'s model.keras
    ...     keras.saving.load_model("albert.keras").backbone,
    ...     preprocessor=AlbertPreprocessor(AlbertTokenizer("spm.model"), 16))
    >>> export_multiple_choice(chooser, "served_swag/")
    {'serving_default': ['probabilities', 'choice']}
    >>> import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)
    >>> served = tf.saved_model.load("served_swag/").signatures["serving_default"]
    >>> out = served(context=tf.constant(["The cat sat"]),
    ...              options=tf.constant([["on the mat.", "in the sky.", "at sea."]]))
    >>> out["probabilities"].shape.as_list(), out["choice"].shape.as_list()
    ([1, 3], [1])
    """
    preprocessor = preprocessor or model.preprocessor
    if preprocessor is None:
        raise ValueError("export needs the model's preprocessor (as fine-tuned)")

    def choose(context, options):
        count = tf.shape(options)[1]
        firsts = tf.repeat(context, count)
        packed = preprocessor((firsts, tf.reshape(options, [-1])))
        shaped = {
            name: tf.reshape(value, [-1, count, preprocessor.sequence_length])
            for name, value in packed.items()
        }
        probabilities = tf.nn.softmax(model(shaped, training=False), axis=-1)
        return {"probabilities": probabilities, "choice": tf.argmax(probabilities, axis=-1)}

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.track(preprocessor)
    options = tf.TensorSpec([None, None], tf.string)
    archive.add_endpoint("serving_default", choose, input_signature=[TEXT, options])
    write_archive(archive, output_dir, arguments, overwrite=overwrite)
    return {"serving_default": ["probabilities", "choice"]}
