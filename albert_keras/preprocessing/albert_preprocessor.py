"""AlbertPreprocessor: one or two raw text segments -> the backbone's input dict."""

import keras
import keras_hub
import tensorflow as tf

from albert_keras.preprocessing.albert_tokenizer import AlbertTokenizer
from albert_keras.preset_registry import get_preset_loader


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertPreprocessor(keras.layers.Layer):
    """Strings (or pairs of strings) -> `token_ids`, `segment_ids`, `padding_mask`.

    As the official `classifier_utils.convert_single_example`: each segment goes through the
    `AlbertTokenizer` (official normalization + SentencePiece), the pair is cut to fit
    (`truncate="round_robin"`: the same tokens as the official `_truncate_seq_pair`, which pops
    from the longer segment, from the second on a tie; see `GlueEncoder`), then packed as
    `[CLS] a [SEP]` (segment 0) `b [SEP]` (segment 1) and padded with `<pad>` to
    `sequence_length`. keras-hub's calling convention: `preprocessor(x, y, sample_weight)`
    returns `(x_dict, y, sample_weight)` (only `x_dict` without labels), so it maps straight
    over a `tf.data.Dataset` of `(text, label)` or `((text_a, text_b), label)`.

    Always computed by TensorFlow ops; called eagerly, it runs a `tf.function`.

    Args:
        tokenizer: `AlbertTokenizer`.
        sequence_length: int. The packed length (the official `max_seq_length`).
        truncate: str. `"round_robin"` (official) or `"waterfall"` (keras-hub's other choice:
            cut the last segment first).
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> preprocessor = AlbertPreprocessor(AlbertTokenizer("30k-clean.model"), 8)
    >>> preprocessor((["Hello, my dog"], ["is cute"]))["token_ids"].numpy().tolist()
    [[2, 10975, 15, 51, 3, 25, 10901, 3]]
    """

    def __init__(self, tokenizer, sequence_length=512, truncate="round_robin", **kwargs):
        if sequence_length < 3:
            raise ValueError(f"sequence_length={sequence_length} leaves no room for [CLS] a [SEP]")
        if truncate not in ("round_robin", "waterfall"):
            raise ValueError(f"truncate={truncate!r} is not 'round_robin' or 'waterfall'")
        super().__init__(**kwargs)
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)
        self.truncate = truncate
        self._packer = None
        self._graphs = {}
        self.built = True  # nothing to build: the packer waits for the vocabulary (below)

    @classmethod
    def from_preset(cls, preset: str, sequence_length: int = 512, **kwargs):
        """The preprocessor of a preset with a vocabulary (a release, `hf://`, a local folder).

        Example:
        >>> from albert_keras.convert import export_model
        >>> _ = export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/",
        ...                  sentencepiece="spm.model")  # or a release: "albert_base_v2"
        >>> preprocessor = AlbertPreprocessor.from_preset("albert_hf/", sequence_length=16)
        >>> tuple(preprocessor(["the cat sat on the mat"])["token_ids"].shape)
        (1, 16)
        """
        spm = get_preset_loader(preset).load_sentencepiece(preset)
        return cls(AlbertTokenizer(spm), sequence_length, **kwargs)

    def _packer_layer(self):
        # Made at the first call, not in __init__: a tokenizer restored from a `.keras` file
        # gets its vocabulary (and so its special ids) only when the assets load.
        if self._packer is None:
            if self.tokenizer.proto is None:
                raise ValueError(
                    "the AlbertTokenizer has no vocabulary yet: pass proto= (a config alone "
                    "holds none; a .keras file restores it from its assets)"
                )
            self._packer = keras_hub.layers.MultiSegmentPacker(
                sequence_length=self.sequence_length,
                start_value=self.tokenizer.cls_token_id,
                end_value=self.tokenizer.sep_token_id,
                pad_value=self.tokenizer.pad_token_id,
                truncate=self.truncate,
            )
        return self._packer

    def __call__(self, x, y=None, sample_weight=None, **kwargs):
        # `dataset.map(preprocessor)` hands over `(x, y)` as one tuple; Keras layers also want
        # tensors, not Python strings, as positional arguments.
        if y is None and isinstance(x, tuple) and len(x) in (2, 3) and _is_labelled(x):
            x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(x)
        if isinstance(x, tuple):
            x = tuple(tf.convert_to_tensor(s, tf.string) for s in x)
            rows = [s.shape[0] if s.shape.rank else 1 for s in x]
            if len(rows) == 2 and None not in rows and rows[0] != rows[1]:
                raise ValueError(f"{_UNEQUAL_PAIRS}: {rows[0]} and {rows[1]}")
        else:
            x = tf.convert_to_tensor(x, tf.string)
        return super().__call__(x, y=y, sample_weight=sample_weight, **kwargs)

    def call(self, x, y=None, sample_weight=None):
        segments = x if isinstance(x, tuple) else (x,)  # a tuple is segments (keras-hub's)
        if not 1 <= len(segments) <= 2:
            raise ValueError(f"AlbertPreprocessor takes one or two segments, got {len(segments)}")
        if tf.inside_function():
            inputs = self._pack(*segments)
        else:
            # Traced once per number of segments; any batch size.
            if any(s.shape.rank == 0 for s in segments):  # one example: a batch of one
                inputs = self.call(tuple(tf.reshape(s, [1]) for s in segments))
                inputs = {name: value[0] for name, value in inputs.items()}
                return keras.utils.pack_x_y_sample_weight(inputs, y, sample_weight)
            if len(segments) not in self._graphs:
                spec = [tf.TensorSpec([None], tf.string)] * len(segments)
                self._graphs[len(segments)] = tf.function(self._pack, input_signature=spec)
            inputs = self._graphs[len(segments)](*segments)
        return keras.utils.pack_x_y_sample_weight(inputs, y, sample_weight)

    def _pack(self, *segments):
        return self.pack(*(self.tokenizer(s) for s in segments))

    def pack(self, *segment_ids):
        """Ragged SentencePiece ids of one or two segments -> the backbone's input dict.

        The packing step alone (truncation, `[CLS] a [SEP] b [SEP]`, padding), for callers
        that hold ids already; `call` is `pack` over the tokenizer's ids.

        Args:
            *segment_ids: `tf.RaggedTensor`s (batch, None) of ids, one per segment.

        Returns:
            dict of int32 (batch, sequence_length) `token_ids`, `segment_ids`, `padding_mask`.

        Example:
        >>> preprocessor = AlbertPreprocessor(AlbertTokenizer("30k-clean.model"), 6)
        >>> ids = tf.ragged.constant([[10975, 15, 51, 1952, 25]])
        >>> preprocessor.pack(ids)["token_ids"].numpy().tolist()  # cut to fit [CLS] a [SEP]
        [[2, 10975, 15, 51, 1952, 3]]
        """
        if len(segment_ids) == 2:
            # keras-hub's packer would pair the rows it has and drop the others, silently.
            rows_a, rows_b = (_rows(ids) for ids in segment_ids)
            tf.debugging.assert_equal(rows_a, rows_b, message=_UNEQUAL_PAIRS)
        token_ids, segment_ids = self._packer_layer()(tuple(segment_ids))
        return {
            "token_ids": tf.cast(token_ids, "int32"),
            "segment_ids": tf.cast(segment_ids, "int32"),
            "padding_mask": tf.cast(token_ids != self.tokenizer.pad_token_id, "int32"),
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
                "sequence_length": self.sequence_length,
                "truncate": self.truncate,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)


_UNEQUAL_PAIRS = "AlbertPreprocessor: text_a and text_b need as many rows (one pair per example)"


def _rows(ids) -> tf.Tensor:
    return ids.nrows() if isinstance(ids, tf.RaggedTensor) else tf.shape(ids)[0]


def _is_labelled(x: tuple) -> bool:
    """Whether a tuple is `(texts, labels[, weights])` rather than two text segments."""
    second = x[1]
    dtype = getattr(second, "dtype", None)
    if dtype is not None:
        return dtype != tf.string and getattr(dtype, "kind", "U") not in "USO"
    return not isinstance(second, (str, bytes)) and not (
        isinstance(second, (list, tuple)) and second and isinstance(second[0], (str, bytes))
    )
