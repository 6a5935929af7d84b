"""AlbertTask: the base of the task models; config, compile defaults and preprocessor written once."""

import keras

from albert_keras.models.dense_gradient_train_step import DenseGradientTrainStep
from albert_keras.models.text_inputs import TextInputs
from albert_keras.optimizers import AdamWeightDecay


class AlbertTask(DenseGradientTrainStep, TextInputs):
    """The base of our task models, as keras-hub's `Task`: what they all do, written once.

    A mixin, listed before `keras.Model` (`class AlbertClassifier(AlbertTask, keras.Model)`):
    Keras makes a model functional by rewriting its classes' bases from `keras.Model` to
    `Functional`, so a shared base that were a `keras.Model` would turn every task functional
    once one functional task (the classifier) is built.

    - Attributes: `backbone` (the `AlbertBackbone`, set by the subclass) and `preprocessor`
      (None, or an `AlbertPreprocessor`: `fit`, `evaluate` and `predict` then take raw text,
      see `TextInputs`).
    - Config: `get_config` holds `name`, `trainable` and, as nested serialized objects, the
      Keras objects the constructor takes (`nested_objects`: the backbone, the preprocessor,
      ...); a subclass adds its own arguments. `from_config` rebuilds those objects and calls
      the constructor.
    - Compile: `compile(optimizer="auto")` makes the official optimizer at the task's
      `default_learning_rate`; a subclass adds its loss and metrics defaults.
      `compile_from_config` brings a `.keras` file back compiled, its optimizer's state too.
    - Training: every optimizer gets dense embedding gradients (`DenseGradientTrainStep`).

    Example:
    >>> class Scorer(AlbertTask, keras.Model):  # a task is its head and its call
    ...     default_learning_rate = 1e-3
    ...     def __init__(self, backbone, **kwargs):
    ...         self.backbone = backbone
    ...         self.score = keras.layers.Dense(1, name="score")
    ...         inputs = dict(backbone.input)
    ...         outputs = self.score(backbone(inputs)["pooled_output"])
    ...         super().__init__(inputs=inputs, outputs=outputs, **kwargs)
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8,
    ...                           hidden_dim=16, intermediate_dim=32, max_sequence_length=32)
    >>> scorer = Scorer(backbone, name="scorer")
    >>> scorer.compile(loss="mse")  # AdamWeightDecay at the task's learning rate
    >>> type(scorer.optimizer).__name__, round(float(scorer.optimizer.learning_rate), 6)
    ('AdamWeightDecay', 0.001)
    >>> sorted(scorer.get_config())
    ['backbone', 'name', 'trainable']
    >>> Scorer.from_config(scorer.get_config()).backbone.num_layers
    1
    """

    # The constructor's arguments that are Keras objects (None allowed), saved as nested configs.
    nested_objects = ("backbone",)
    # The learning rate of the optimizer `compile()` makes when none is given.
    default_learning_rate = 1e-4
    # Raw text in `fit` / `evaluate` / `predict` only with one (set by tasks that take it).
    preprocessor = None

    def compile(self, optimizer="auto", **kwargs):
        """`keras.Model.compile`, with the official optimizer by default.

        Args:
            optimizer: an optimizer, or `"auto"`: the official `AdamWeightDecayOptimizer`, as
                BERT and ALBERT fine-tune (`albert_keras.optimizers.AdamWeightDecay`): Adam
                without bias correction, weight decay 0.01 added to the update (none on biases
                or LayerNorm weights), epsilon 1e-6, gradients clipped to global norm 1.0, at
                the task's `default_learning_rate`.
            **kwargs: passed to `keras.Model.compile` (`loss`, `metrics`, `jit_compile`, ...).

        The optimizer is built here (its slots made for the trainable weights): TensorFlow
        traces a step that creates variables twice, so `fit` building it would trace its train
        step twice (a tiny classifier's first `fit` with `AdamWeightDecay`: 10.7 s -> 4.0 s).
        Call `compile` again after changing which weights are trainable, as Keras asks.
        """
        if isinstance(optimizer, str) and optimizer == "auto":
            optimizer = AdamWeightDecay(learning_rate=self.default_learning_rate)
        super().compile(optimizer=optimizer, **kwargs)
        if self.built and self.optimizer is not None and not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)

    def compile_from_config(self, config):
        # Keras skips this on load (with a warning) for models whose `compile()` is overridden,
        # as ours is (for its defaults); this is `keras.Model.compile_from_config` without
        # that guard.
        config = keras.saving.deserialize_keras_object(config)
        self.compile(**config)  # builds the optimizer: its saved slots can load

    def get_config(self):
        # Not chained to `keras.Model.get_config`: a functional model's is its graph, which
        # our constructors do not take (as keras-hub's `Task`).
        config = {"name": self.name, "trainable": self.trainable}
        for key in self.nested_objects:
            value = getattr(self, key)
            config[key] = None if value is None else keras.saving.serialize_keras_object(value)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in cls.nested_objects:
            if isinstance(config.get(key), dict):
                if key == "preprocessor":
                    # Registers AlbertPreprocessor / AlbertTokenizer (tensorflow-text is only
                    # loaded for models that have a preprocessor).
                    import albert_keras.preprocessing  # noqa: F401
                config[key] = keras.saving.deserialize_keras_object(config[key])
        # Set after building: Keras's `trainable=` argument flags the model only, not the layers
        # it makes afterwards, so a frozen model (a distiller's teacher) came back with
        # trainable heads. The setter flags every layer (it is a no-op for the default, True).
        trainable = config.pop("trainable", True)
        task = cls(**config)
        task.trainable = trainable
        return task

    def _total_loss(self, loss):
        """For a custom `compute_loss`: `loss` plus the extra losses (regularizers, `add_loss()`),
        divided by the replica count under `tf.distribute`.

        The replicas' gradients are summed, so Keras divides its own losses by their number (its
        helper is not public API); on one device and other backends the sum is returned as is.
        """
        for extra in self.losses:
            loss = loss + keras.ops.sum(keras.ops.cast(extra, "float32"))
        if keras.backend.backend() != "tensorflow":
            return loss
        import tensorflow as tf

        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        if replicas == 1:
            return loss
        return loss * keras.ops.cast(1.0 / replicas, loss.dtype)
