"""AlbertClassifier: a classification (or regression) head on the pooled output."""

import keras

from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.validation import check_positive, check_rate
from albert_keras.models.albert_task import AlbertTask
from albert_keras.preset_registry import get_preset_loader


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertClassifier(AlbertTask, keras.Model):
    """Dropout on the backbone's pooled output, then Dense(num_classes): logits (batch, classes).

    A functional `keras.Model` whose inputs are the backbone's (`token_ids`, `segment_ids`,
    `padding_mask`). `num_classes=1` is regression (GLUE STS-B): one unbounded score. The output
    layer runs in float32, so logits stay float32 under mixed precision.

    With a `preprocessor` (keras-hub's Task pattern), `fit`, `evaluate` and `predict` also take
    raw strings, or `(texts_a, texts_b)` pairs (see `TextInputs`), and the preprocessor is saved
    with the model in its `.keras` file (vocabulary included). `from_preset` builds one from
    released weights and their vocabulary.

    Args:
        backbone: `AlbertBackbone`. The encoder, fine-tuned with the head.
        num_classes: int. The number of classes; 1 for regression.
        dropout: float. Dropout rate on the pooled output (0.1 as the official `run_classifier`).
        preprocessor: `AlbertPreprocessor` or None. Turns raw text into the backbone's inputs.
        label_names: tuple of str or None. The name of each class id (saved with the model:
            `predict` and the exported SavedModel answer with them); `None`: ids only.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=100, num_layers=2, num_heads=2, embedding_dim=8,
    ...                           hidden_dim=16, intermediate_dim=32, max_sequence_length=32)
    >>> classifier = AlbertClassifier(backbone, num_classes=2)
    >>> classifier.compile()  # AdamWeightDecay 2e-5, sparse cross-entropy from logits, accuracy
    >>> inputs = {"token_ids": np.ones((4, 8), "int32"), "segment_ids": np.zeros((4, 8), "int32"),
    ...           "padding_mask": np.ones((4, 8), "int32")}
    >>> history = classifier.fit(inputs, np.array([0, 1, 0, 1]), epochs=2, verbose=0)
    >>> sorted(history.history), len(history.history["loss"])
    (['accuracy', 'loss'], 2)
    """

    nested_objects = ("backbone", "preprocessor")
    default_learning_rate = 2e-5

    def __init__(
        self, backbone, num_classes=2, dropout=0.1, preprocessor=None, label_names=None, **kwargs
    ):
        check_positive(num_classes=num_classes)
        check_rate("dropout", dropout)
        if label_names is not None and len(label_names) != num_classes:
            raise ValueError(
                f"{len(label_names)} label_names for num_classes={num_classes}: give one a class"
            )

        # === Layers ===
        self.backbone = backbone
        self.output_dropout = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.output_dense = keras.layers.Dense(
            num_classes, kernel_initializer=albert_initializer(), dtype="float32", name="logits"
        )

        # === Functional Model ===
        inputs = dict(backbone.input)
        pooled = backbone(inputs)["pooled_output"]
        outputs = self.output_dense(self.output_dropout(pooled))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # The backbone's policy is the model's, as for keras-hub's tasks.
        self.dtype_policy = backbone.dtype_policy

        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.preprocessor = preprocessor
        self.label_names = None if label_names is None else tuple(str(n) for n in label_names)

    @classmethod
    def from_preset(cls, preset: str, num_classes: int = 2, **kwargs) -> "AlbertClassifier":
        """A classifier on a preset's backbone, with its vocabulary's preprocessor.

        Args:
            preset: str. As `AlbertBackbone.from_preset`: released weights (their
                SentencePiece model becomes the preprocessor) or an architecture name (random
                weights, no preprocessor).
            num_classes: int. 1 for regression.
            **kwargs: `sequence_length` (the preprocessor's; default the backbone's
                `max_sequence_length`), `backbone_kwargs` (backbone overrides), and the
                constructor's (`dropout`, `preprocessor`, `name`).

        Example:
        >>> from albert_keras.convert import export_model
        >>> _ = export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/",
        ...                  sentencepiece="spm.model")  # or a release: "albert_base_v2"
        >>> classifier = AlbertClassifier.from_preset("albert_hf/", num_classes=2)
        >>> classifier.predict(["a delight from start to finish", "a mess"], verbose=0).shape
        (2, 2)
        """
        loader = get_preset_loader(preset)
        return loader.task_from_preset(cls, preset, num_classes=num_classes, **kwargs)

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """`keras.Model.compile` with defaults for classification and regression.

        Args:
            optimizer: an optimizer, or `"auto"`: the official `AdamWeightDecay` (no bias
                correction), learning rate 2e-5, weight decay 0.01 (not on biases / LayerNorm),
                gradients clipped to norm 1.
            loss: a loss, or `"auto"`: sparse cross-entropy from logits (mean squared error
                when `num_classes == 1`).
            metrics: metrics, or `"auto"`: sparse categorical accuracy (none for regression:
                GLUE's Pearson / Spearman are computed outside the graph).
            **kwargs: passed to `keras.Model.compile`.
        """
        regression = self.num_classes == 1
        if loss == "auto":
            loss = (
                keras.losses.MeanSquaredError()
                if regression
                else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            )
        if metrics == "auto":
            metrics = [] if regression else [keras.metrics.SparseCategoricalAccuracy("accuracy")]
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update({"num_classes": self.num_classes, "dropout": self.dropout})
        if self.label_names is not None:  # (absent: a config as before label names)
            config["label_names"] = list(self.label_names)
        return config
