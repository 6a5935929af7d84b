"""AlbertTokenizer: the official text normalization, then SentencePiece, as a Keras layer."""

import functools
import hashlib
import itertools
import re
import types

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from albert_keras_contracts import special_tokens
from albert_keras_contracts.piece_split import split_table
from albert_keras_contracts.text_normalization import preprocess_text_tensor
from albert_keras_contracts.text_path import TEXT_PATH, UNRECORDED_TEXT_PATH

# keras-hub's attribute names (`cls_token_id`, ...) for ALBERT's special pieces, whose one
# owner is `albert_keras_contracts.special_tokens`. Their ids are read from the vocabulary itself.
SPECIAL_TOKENS = {
    name: special_tokens.SPECIAL_PIECES[token_id]
    for name, token_id in (
        ("pad", special_tokens.PAD_ID),
        ("unk", special_tokens.UNK_ID),
        ("cls", special_tokens.CLS_ID),
        ("sep", special_tokens.SEP_ID),
        ("mask", special_tokens.MASK_ID),
    )
}


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTokenizer(keras_hub.tokenizers.SentencePieceTokenizer):
    """Strings -> ALBERT SentencePiece ids, with the official `preprocess_text` in the graph.

    keras-hub's `AlbertTokenizer` hands text to SentencePiece as it comes; the official ALBERT
    code first collapses whitespace, strips accents (NFKD, combining marks dropped) and
    lower-cases for an uncased vocabulary, and after SentencePiece re-splits a piece ending in
    a digit and a comma (`▁1994,` -> `▁1994` `,`). This layer does the same in TensorFlow ops
    (the project's one definition: `albert_keras_contracts.text_normalization` and
    `albert_keras_contracts.piece_split`, whose ids for each split piece are looked up in one
    ragged gather), so it runs in `tf.data`, in a compiled graph and in an exported
    SavedModel: "Héllo,  my dog" and "hello, my dog" give the same ids, as they do in the
    official code.

    Its ids equal the official code's but on exact SentencePiece ties (docs/text_path.md):
    tf-text's op bundles its own build of SentencePiece, whose unigram Viterbi can pick the
    other of two segmentations whose float32 scores are equal (or equal after rounding) where
    Python SentencePiece picks the first; the split pieces' ids come from Python SentencePiece
    (the table is made once per vocabulary), so they have no such ties.

    The output is always computed by TensorFlow (tf-text's SentencePiece op): called eagerly
    it runs a `tf.function` and returns a `tf.RaggedTensor` for a batch of strings (a dense
    tensor with `sequence_length`), a 1-D tensor for one string.

    Args:
        proto: str, bytes or None. A SentencePiece `.model` file or its bytes, holding the
            special pieces `<pad>`, `<unk>`, `[CLS]`, `[SEP]`, `[MASK]`. Saved inside a
            `.keras` file as an asset (keras-hub's `vocabulary.spm`).
        lowercase: bool or None. Lower-case the text; `None` decides from the vocabulary:
            lower-case when no ordinary piece holds a capital letter A-Z (ALBERT's release).
        sequence_length: int or None. Pad / cut the ids to this length (keras-hub's argument).
        vocabulary_sha256: str or None. The sha256 of the `.model` file this tokenizer was
            saved with (its config holds it, so the vocabulary's identity travels in every
            saved model; `albert_keras_contracts.vocabulary_identity`). When given, a vocabulary whose bytes
            hash otherwise is refused; None: taken from the vocabulary.
        text_path: str or None. The version of the text path (`albert_keras_contracts.text_path`)
            the model holding this tokenizer was trained with, which its config records; None:
            today's. A config without one (saved before it was recorded) is version 1. The
            layer always computes today's ids: jobs compare this with today's and refuse an
            older one unless told to accept it.
        **kwargs: passed to `keras_hub.tokenizers.SentencePieceTokenizer`.

    Example:
    >>> tokenizer = AlbertTokenizer("30k-clean.model")
    >>> tokenizer(["Hello, my  dog is cute"]).to_list()
    [[10975, 15, 51, 1952, 25, 10901]]
    """

    def __init__(
        self,
        proto=None,
        lowercase=None,
        sequence_length=None,
        vocabulary_sha256=None,
        text_path=None,
        **kwargs,
    ):
        self.lowercase = lowercase
        self._recorded_sha256 = vocabulary_sha256
        self.text_path = text_path or TEXT_PATH
        super().__init__(proto=proto, sequence_length=sequence_length, **kwargs)

    def __setattr__(self, name, value):
        if _is_string_table(value):
            # Written by hand: Keras has no public switch for it. A layer tracks each element
            # of a list or dict set on it (looking for layers and variables to own), and
            # TensorFlow wraps it again for checkpoints: for keras-hub's vocabulary list and
            # piece -> id map (30k strings each) that took 0.12 s of every tokenizer built
            # (every model loaded, every preprocessor made), a tenth of some tests. Strings are
            # neither layers nor variables, so such a table is set as it is.
            object.__setattr__(self, name, value)
            return
        super().__setattr__(name, value)

    @property
    def vocabulary_sha256(self):
        """The sha256 of the SentencePiece `.model` bytes (None before a vocabulary is set)."""
        if self.proto is None:
            return self._recorded_sha256
        return hashlib.sha256(self.proto).hexdigest()

    def set_proto(self, proto):
        super().set_proto(proto)
        # The eager calls' tf.functions, traced anew for each vocabulary. In a plain namespace:
        # a dict or a tf.function set on a layer is tracked, and a SavedModel of a model holding
        # this layer would refuse the dict's int keys (or save the functions with the model).
        self._graphs = types.SimpleNamespace(by_rank={}, offsets=None, splits={}, expand=None)
        if self.proto is None:
            return
        recorded = self._recorded_sha256
        if recorded and recorded != self.vocabulary_sha256:
            # A .keras file whose config and vocabulary asset disagree (edited, or mixed up).
            raise ValueError(
                f"the SentencePiece model's sha256 {self.vocabulary_sha256[:12]} is not the "
                f"{recorded[:12]} this tokenizer was saved with"
            )
        vocabulary = self.get_vocabulary()
        missing = [token for token in SPECIAL_TOKENS.values() if token not in vocabulary]
        if missing:
            raise ValueError(
                f"the SentencePiece model has no {', '.join(missing)} piece: not an ALBERT "
                "vocabulary (train one with `python -m pipelines.train_vocab`)"
            )
        for name, token in SPECIAL_TOKENS.items():
            setattr(self, f"{name}_token_id", vocabulary.index(token))
        # keras-hub's names for the ids that open and close a packed sequence.
        self.start_token_id, self.end_token_id = self.cls_token_id, self.sep_token_id
        self.lowercases = (
            not _has_capitals(vocabulary) if self.lowercase is None else bool(self.lowercase)
        )
        self._graphs.splits, self._graphs.expand = _split_rows(self.proto)

    @property
    def digit_comma_splits(self) -> dict:
        """`albert_keras_contracts.piece_split.split_table` of this vocabulary: `{id: ids}`."""
        return dict(self._graphs.splits)

    def tokenize(self, inputs):
        if tf.inside_function():
            return self._tokenize_in_graph(inputs)
        # Eagerly, keras-hub would take its pure-Python path, which skips our TensorFlow
        # normalization: run the graph one instead (traced once per input rank).
        inputs = tf.convert_to_tensor(inputs, tf.string)
        rank = inputs.shape.rank
        if rank not in self._graphs.by_rank:
            spec = tf.TensorSpec([None] * rank, tf.string)
            self._graphs.by_rank[rank] = tf.function(
                self._tokenize_in_graph, input_signature=[spec]
            )
        return self._graphs.by_rank[rank](inputs)

    def _tokenize_in_graph(self, inputs):
        if self.proto is None:
            raise ValueError("the AlbertTokenizer has no vocabulary: pass proto=")
        text = preprocess_text_tensor(tf.convert_to_tensor(inputs, tf.string), self.lowercases)
        # keras-hub's `tokenize` would capture the op it made in `set_proto`: see `_sentencepiece`.
        # On the CPU, as keras-hub's (the op has no other kernel).
        with tf.device("cpu"):
            unbatched = text.shape.rank == 0
            sentencepiece = self._sentencepiece(self.compute_dtype)
            ids = self._split_digit_commas(
                sentencepiece.tokenize(text[None] if unbatched else text)
            )
            if self.sequence_length:  # as keras-hub's `tokenize`: <pad> after the pieces, or cut
                shape = ids.shape.as_list()[:-1] + [self.sequence_length]
                ids = ids.to_tensor(shape=shape, default_value=self.pad_token_id)
            return tf.squeeze(ids, 0) if unbatched else ids

    def _split_digit_commas(self, ids):
        """The official digit-comma split of ragged ids: each id's row of `_split_rows` (itself,
        or the ids replacing it), gathered and merged back into the texts' rows."""
        if self._graphs.expand is None:
            return ids
        values, row_splits = self._graphs.expand
        table = tf.RaggedTensor.from_row_splits(
            tf.constant(values, ids.dtype), tf.constant(row_splits, tf.int64), validate=False
        )
        rows = tf.gather(table, ids.flat_values)
        return tf.RaggedTensor.from_row_splits(
            rows.values, tf.gather(rows.row_splits, ids.row_splits), validate=False
        )

    def detokenize(self, inputs):
        if not tf.inside_function():
            return super().detokenize(inputs)  # eagerly keras-hub decodes in Python
        # In a graph keras-hub would run the op it made in `set_proto`: see `_sentencepiece`.
        ids = inputs if isinstance(inputs, tf.RaggedTensor) else tf.convert_to_tensor(inputs)
        unbatched = ids.shape.rank == 1
        ids = ids[None] if unbatched else ids
        if isinstance(ids, tf.Tensor):  # as keras-hub: every id decoded, <pad> to nothing
            ids = tf.RaggedTensor.from_tensor(ids)
        with tf.device("cpu"):
            text = self._sentencepiece(tf.int32).detokenize(tf.cast(ids, tf.int32))
        return tf.squeeze(text, 0) if unbatched else text

    def _sentencepiece(self, out_type):
        """tf-text's SentencePiece op of this vocabulary, made in the graph being traced.

        Not captured from outside it (keras-hub's, made eagerly in `set_proto`): the op keeps
        its model in a resource that its kernel owns (tf-text's TODO b/318839908), and an
        eager kernel lives in TensorFlow's kernel cache, which `keras.utils.set_random_seed`,
        `tf.random.set_seed` and `keras.backend.clear_session` empty. The resource goes with
        it, and every graph that captured its handle then fails with "Resource ...
        SentencepieceOp ... does not exist" (tensorflow/text#570 and #802, keras-hub#1573:
        a tokenizer made before seeding, or a tf.data pipeline before `clear_session`). Made
        here, the op belongs to the traced function, whose kernels TensorFlow makes again
        after such a clear, and the op loads the model again (once per function instance: a
        tf.data pipeline's every new iterator pays ~0.1 CPU-s for the 30k release vocabulary;
        a call after that only looks the resource up). A SavedModel keeps the model bytes in
        each function that tokenizes (+3.3 MB on a classifier's export).
        """
        import tensorflow_text as tf_text

        return tf_text.SentencepieceTokenizer(
            model=self.proto, out_type=out_type, add_bos=self.add_bos, add_eos=self.add_eos
        )

    def encode_normalized_with_offsets(self, texts):
        """SentencePiece ids of texts already normalized, with each piece's byte span.

        For SQuAD, which maps answers back to the original characters: it normalizes in Python
        keeping offsets (`albert_keras.squad.context_pieces.normalize_with_offsets`, equal to
        this layer's normalization), then encodes here with the same SentencePiece op and
        vocabulary as `tokenize` (tests/squad compare the two on every shared SQuAD text).

        Args:
            texts: list of str. Normalized texts.

        Returns:
            list of `(ids, begins, ends)` int NumPy arrays, one per text: the pieces' ids and
            the byte range `[begin, end)` of each in the text's UTF-8 (a piece that starts a
            word covers the space before it).

        Example:
        >>> tokenizer = AlbertTokenizer("30k-clean.model")
        >>> ids, begins, ends = tokenizer.encode_normalized_with_offsets(["hello, my dog"])[0]
        >>> ids.tolist(), begins.tolist(), ends.tolist()
        ([10975, 15, 51, 1952], [0, 5, 6, 9], [5, 6, 9, 13])
        """
        if self.proto is None:
            raise ValueError("the AlbertTokenizer has no vocabulary: pass proto=")
        if not texts:
            return []
        if self._graphs.offsets is None:
            # The op `tokenize` runs, made in a graph for the same reason (`_sentencepiece`).
            self._graphs.offsets = tf.function(
                lambda texts: self._sentencepiece(tf.int32).tokenize_with_offsets(texts),
                input_signature=[tf.TensorSpec([None], tf.string)],
            )
        ids, begins, ends = self._graphs.offsets(tf.constant(list(texts)))
        rows = ids.row_splits.numpy()
        ids, begins, ends = (t.flat_values.numpy() for t in (ids, begins, ends))
        return [
            (ids[a:b], begins[a:b].astype("int64"), ends[a:b].astype("int64"))
            for a, b in itertools.pairwise(rows)
        ]

    def get_config(self):
        config = super().get_config()
        config["lowercase"] = self.lowercase
        config["vocabulary_sha256"] = self.vocabulary_sha256
        config["text_path"] = self.text_path
        return config

    @classmethod
    def from_config(cls, config):
        # Saved before the text path was recorded: version 1 (not today's, as a new one is).
        return super().from_config({"text_path": UNRECORDED_TEXT_PATH, **config})


@functools.lru_cache(maxsize=8)
def _split_rows(proto: bytes):
    """The digit-comma `split_table` of a vocabulary, and the same as one ragged row per id
    (`(values, row_splits)`, NumPy, read-only; None when no piece splits) for
    `_split_digit_commas`.

    Made by Python SentencePiece, as the official code's (one batch call over the few hundred
    split pieces; tf-text's op could break a tie otherwise). Kept for the last few vocabularies:
    a process builds many tokenizers of one vocabulary (each model it loads, each preprocessor),
    and loading SentencePiece again for each took 45 ms."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_proto=proto)
    vocabulary = processor.id_to_piece(list(range(processor.get_piece_size())))
    splits = split_table(vocabulary, processor.encode, processor.piece_to_id(","))
    if not splits:
        return splits, None
    lengths = np.ones(len(vocabulary), np.int64)
    lengths[list(splits)] = [len(ids) for ids in splits.values()]
    row_splits = np.concatenate([[0], np.cumsum(lengths)])
    values = np.repeat(np.arange(len(vocabulary), dtype=np.int64), lengths)
    for i, ids in splits.items():
        values[row_splits[i] : row_splits[i + 1]] = ids
    values.flags.writeable = row_splits.flags.writeable = False  # shared by every tokenizer
    return splits, (values, row_splits)


def _has_capitals(vocabulary: list[str]) -> bool:
    """Whether an ordinary piece (not `<pad>`, `[CLS]`, ...) holds a letter A-Z."""
    specials = set(SPECIAL_TOKENS.values())
    ordinary = "\n".join(piece for piece in vocabulary if piece not in specials)
    return re.search("[A-Z]", ordinary) is not None


def _is_string_table(value) -> bool:
    """A long plain list of strings, or dict keyed by strings: a vocabulary, nothing to track."""
    if type(value) is list:
        keys = value
    elif type(value) is dict:
        keys = value.keys()
    else:
        return False
    return len(keys) >= 256 and set(map(type, keys)) == {str}
