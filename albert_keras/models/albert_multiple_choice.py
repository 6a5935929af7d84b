"""AlbertMultipleChoice: one score per (context, option) pair, logits over the options."""

import keras
import numpy as np

from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.validation import check_rate
from albert_keras.models.albert_task import AlbertTask
from albert_keras.preset_registry import get_preset_loader

_BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertMultipleChoice(AlbertTask, keras.Model):
    """Multiple choice (RACE, SWAG): each option read with its context, the best one chosen.

    Hugging Face's `AlbertForMultipleChoice` (and the official ALBERT `run_race.py`): the
    inputs hold one packed `[CLS] context [SEP] option [SEP]` per option, shaped (batch,
    options, time); the options are run through the backbone as one batch, each pooled output
    goes through dropout and Dense(1) (`choice_logits`, float32), and the scores are the
    logits over the options, (batch, options). Any number of options (the same within a
    batch).

    With a `preprocessor`, `predict` also takes text: `(contexts, options)`, a list of str and
    a list of lists of str (the second segment of each pair: for RACE the question with the
    option, for SWAG the second sentence's start with the ending).

    Args:
        backbone: `AlbertBackbone`. The encoder, fine-tuned with the head.
        dropout: float. Dropout on the pooled output (HF's `classifier_dropout_prob`, 0.1).
        preprocessor: `AlbertPreprocessor` or None. Packs the pairs of raw text.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8,
    ...                           hidden_dim=16, intermediate_dim=32, max_sequence_length=32)
    >>> chooser = AlbertMultipleChoice(backbone)
    >>> chooser.compile()  # AdamWeightDecay 1e-5, cross-entropy over the options, accuracy
    >>> inputs = {"token_ids": np.ones((2, 4, 8), "int32"),
    ...           "segment_ids": np.zeros((2, 4, 8), "int32"),
    ...           "padding_mask": np.ones((2, 4, 8), "int32")}
    >>> history = chooser.fit(inputs, np.array([0, 3]), epochs=1, verbose=0)
    >>> tuple(chooser.predict(inputs, verbose=0).shape)
    (2, 4)
    """

    nested_objects = ("backbone", "preprocessor")
    # The official RACE recipe (ALBERT's run_race.py / README): 1e-5.
    default_learning_rate = 1e-5

    def __init__(self, backbone, dropout=0.1, preprocessor=None, **kwargs):
        check_rate("dropout", dropout)
        super().__init__(**kwargs)

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.output_dense = keras.layers.Dense(
            1, kernel_initializer=albert_initializer(), dtype="float32", name="choice_logits"
        )

        # === Config ===
        self.dropout = dropout
        self.hidden_dim = backbone.get_config()["hidden_dim"]
        self.build()

    @classmethod
    def from_preset(cls, preset: str, **kwargs) -> "AlbertMultipleChoice":
        """A multiple-choice model on a preset's backbone (a Hugging Face
        `AlbertForMultipleChoice` folder brings its head too), with its vocabulary.

        Args:
            preset: str. As `AlbertBackbone.from_preset`.
            **kwargs: `sequence_length`, `backbone_kwargs` and the constructor's.
        """
        return get_preset_loader(preset).task_from_preset(cls, preset, **kwargs)

    def build(self, input_shape=None):
        self.output_dense.build((None, self.hidden_dim))
        self.built = True

    def call(self, inputs, training=False):
        token_ids = inputs["token_ids"]
        length = keras.ops.shape(token_ids)[-1]
        flat = {name: keras.ops.reshape(inputs[name], (-1, length)) for name in _BACKBONE_INPUTS}
        pooled = self.backbone(flat, training=training)["pooled_output"]
        scores = self.output_dense(self.output_dropout(pooled, training=training))
        return keras.ops.reshape(scores, (-1, keras.ops.shape(token_ids)[1]))

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """`keras.Model.compile` with defaults for multiple choice.

        Args:
            optimizer: an optimizer, or `"auto"`: the official `AdamWeightDecay` at 1e-5.
            loss: a loss, or `"auto"`: sparse cross-entropy from the logits over the options.
            metrics: metrics, or `"auto"`: accuracy.
            **kwargs: passed to `keras.Model.compile`.
        """
        if loss == "auto":
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        if metrics == "auto":
            metrics = [keras.metrics.SparseCategoricalAccuracy("accuracy")]
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def _takes_text(self, x) -> bool:
        return False  # text goes through `choose` (options per example, not one segment)

    def predict(self, x, batch_size=None, **kwargs):
        """Keras's `predict` on token ids; on `(contexts, options)` text, `choose(...)`."""
        if isinstance(x, tuple) and len(x) == 2 and _is_text(x[0]):
            return self.choose(*x, batch_size=batch_size)
        return super().predict(x, batch_size=batch_size, **kwargs)

    def encode(self, contexts: list[str], options: list[list[str]]) -> dict:
        """The packed inputs (examples, options, sequence_length) of text pairs."""
        if self.preprocessor is None:
            raise ValueError(
                "choosing on text needs a preprocessor: AlbertMultipleChoice(..., "
                "preprocessor=AlbertPreprocessor(AlbertTokenizer('spm.model'), 128))"
            )
        if len(contexts) != len(options):
            raise ValueError(f"{len(contexts)} contexts but {len(options)} lists of options")
        counts = {len(row) for row in options}
        if len(counts) > 1:
            raise ValueError(f"every example needs as many options; got {sorted(counts)}")
        per = counts.pop() if counts else 0
        firsts = [context for context in contexts for _ in range(per)]
        seconds = [option for row in options for option in row]
        packed = self.preprocessor((firsts, seconds))
        return {
            name: np.asarray(value).reshape(len(contexts), per, -1)
            for name, value in packed.items()
        }

    def choose(self, contexts, options, batch_size: int | None = None) -> list[dict]:
        """The chosen option of each example.

        Returns:
            per example, `{"choice": index, "option": text, "probabilities": [...]}`.
        """
        contexts, options = list(contexts), [list(row) for row in options]
        logits = super().predict(
            self.encode(contexts, options), batch_size=batch_size or 8, verbose=0
        )
        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
        return [
            {
                "choice": int(np.argmax(row)),
                "option": options[i][int(np.argmax(row))],
                "probabilities": [round(float(p), 6) for p in row],
            }
            for i, row in enumerate(probabilities)
        ]

    def get_config(self):
        config = super().get_config()
        config.update({"dropout": self.dropout})
        return config


def _is_text(x) -> bool:
    return isinstance(x, (list, tuple, np.ndarray)) and len(x) > 0 and isinstance(x[0], str)
