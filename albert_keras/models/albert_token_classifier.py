"""AlbertTokenClassifier: a tag for every piece, from the backbone's sequence output."""

import keras
import numpy as np

from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.validation import check_positive, check_rate
from albert_keras.models.albert_task import AlbertTask
from albert_keras.models.unused_pooler import UnusedPooler
from albert_keras.preset_registry import get_preset_loader


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertTokenClassifier(UnusedPooler, AlbertTask, keras.Model):
    """Dropout on the sequence output, then Dense(num_classes): logits (batch, time, classes).

    Hugging Face's `AlbertForTokenClassification` head (named `classifier` there,
    `token_logits` here), for named entities, part-of-speech tags and other per-word labels.
    Its inputs are the backbone's; the head runs in float32. Trained on each word's first
    piece (`albert_keras.preprocessing.word_pieces`): labels equal to `IGNORED_LABEL` (-100,
    HF's) are left out of the loss. The backbone's pooler, which the head does not read (HF's
    model has none), is left out of the trainable weights (`UnusedPooler`).

    With a `preprocessor` (its tokenizer and `sequence_length` are used) and `labels`,
    `predict` on raw strings answers per word: `[{"word", "tag", "start", "end"}, ...]` per
    text, the character offsets of each whitespace-separated word.

    Args:
        backbone: `AlbertBackbone`. The encoder, fine-tuned with the head.
        num_classes: int. The number of tags.
        dropout: float. Dropout on the sequence output (HF's `classifier_dropout_prob`, 0.1).
        labels: list of str or None. The tag names, by id (saved with the model).
        preprocessor: `AlbertPreprocessor` or None. The vocabulary and length for text.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8,
    ...                           hidden_dim=16, intermediate_dim=32, max_sequence_length=32)
    >>> tagger = AlbertTokenClassifier(backbone, num_classes=3, labels=["O", "B-PER", "I-PER"])
    >>> tagger.compile()  # AdamWeightDecay 5e-5, cross-entropy on the labelled pieces
    >>> inputs = {"token_ids": np.ones((2, 8), "int32"), "segment_ids": np.zeros((2, 8), "int32"),
    ...           "padding_mask": np.ones((2, 8), "int32")}
    >>> labels = np.full((2, 8), -100, "int32"); labels[:, 1] = [1, 0]
    >>> history = tagger.fit(inputs, labels, epochs=1, verbose=0)
    >>> tuple(tagger.predict(inputs, verbose=0).shape)
    (2, 8, 3)
    """

    nested_objects = ("backbone", "preprocessor")
    # HF's run_ner.py default.
    default_learning_rate = 5e-5

    def __init__(
        self, backbone, num_classes=2, dropout=0.1, labels=None, preprocessor=None, **kwargs
    ):
        check_positive(num_classes=num_classes)
        check_rate("dropout", dropout)
        if labels is not None and len(labels) != num_classes:
            raise ValueError(f"{len(labels)} labels for num_classes={num_classes}")

        # === Layers ===
        self.backbone = backbone
        self.output_dropout = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.output_dense = keras.layers.Dense(
            num_classes,
            kernel_initializer=albert_initializer(),
            dtype="float32",
            name="token_logits",
        )

        # === Functional Model ===
        inputs = dict(backbone.input)
        sequence = backbone(inputs)["sequence_output"]
        outputs = self.output_dense(self.output_dropout(sequence))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.dtype_policy = backbone.dtype_policy

        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.labels = None if labels is None else [str(label) for label in labels]
        self.preprocessor = preprocessor

    @classmethod
    def from_preset(cls, preset: str, num_classes: int = 2, **kwargs) -> "AlbertTokenClassifier":
        """A token classifier on a preset's backbone (a Hugging Face
        `AlbertForTokenClassification` folder brings its head too), with its vocabulary.

        Args:
            preset: str. As `AlbertBackbone.from_preset`.
            num_classes: int. The number of tags (a converted head's own count wins).
            **kwargs: `sequence_length`, `backbone_kwargs` and the constructor's.
        """
        loader = get_preset_loader(preset)
        return loader.task_from_preset(cls, preset, num_classes=num_classes, **kwargs)

    def compile(self, optimizer="auto", loss="auto", metrics=None, **kwargs):
        """`keras.Model.compile` with defaults for tagging.

        Args:
            optimizer: an optimizer, or `"auto"`: the official `AdamWeightDecay` at 5e-5.
            loss: a loss, or `"auto"`: sparse cross-entropy from logits over the pieces whose
                label is not `IGNORED_LABEL` (each word's first piece).
            metrics: metrics (none by default: entity F1 is computed on words, after `fit`).
            **kwargs: passed to `keras.Model.compile`.
        """
        if loss == "auto":
            # Here, not at the top: `import albert_keras` loads no preprocessing (tf-text).
            from albert_keras.preprocessing.word_pieces import IGNORED_LABEL

            loss = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, ignore_class=IGNORED_LABEL
            )
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def _takes_text(self, x) -> bool:
        return False  # text is tagged by `predict` itself: see `tag_text`

    def predict(self, x, batch_size=None, **kwargs):
        """Keras's `predict` on token ids; on raw strings, `tag_text(x)`."""
        if isinstance(x, str) or (
            isinstance(x, (list, tuple)) and x and all(isinstance(t, str) for t in x)
        ):
            return self.tag_text([x] if isinstance(x, str) else list(x), batch_size=batch_size)
        return super().predict(x, batch_size=batch_size, **kwargs)

    def tag_text(self, texts: list[str], batch_size: int | None = None) -> list[list[dict]]:
        """Tags each whitespace-separated word of each text.

        Returns:
            per text, `[{"word", "tag", "start", "end"}, ...]` with character offsets; a word
            past the model's sequence length gets the tag `None`.
        """
        from albert_keras.preprocessing.word_pieces import split_words

        words = [split_words(text) for text in texts]
        tags = self.tag_words([[w for w, _, _ in row] for row in words], batch_size)
        return [
            [
                {"word": word, "tag": tag, "start": start, "end": end}
                for (word, start, end), tag in zip(row, row_tags)
            ]
            for row, row_tags in zip(words, tags)
        ]

    def tag_words(self, sentences: list[list[str]], batch_size: int | None = None) -> list:
        """The tag of every word of sentences given as words (None where cut off)."""
        if self.preprocessor is None or self.labels is None:
            raise ValueError(
                "tagging text needs the model's preprocessor and labels "
                "(AlbertTokenClassifier(..., labels=[...], preprocessor=...))"
            )
        from albert_keras.preprocessing.word_pieces import encode_words

        inputs, _, first = encode_words(
            self.preprocessor.tokenizer, sentences, self.preprocessor.sequence_length
        )
        logits = super().predict(inputs, batch_size=batch_size or 32, verbose=0)
        ids = np.argmax(logits, axis=-1)
        return [
            [self.labels[ids[row, at]] if at >= 0 else None for at in first[row, : len(words)]]
            for row, words in enumerate(sentences)
        ]

    def get_config(self):
        config = super().get_config()
        config.update(
            {"num_classes": self.num_classes, "dropout": self.dropout, "labels": self.labels}
        )
        return config
