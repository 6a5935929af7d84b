"""The optimizer the models' `compile()` uses when none is given."""

import keras

from albert_keras.optimizers import AdamWeightDecay


def default_optimizer(learning_rate: float) -> keras.optimizers.Optimizer:
    """The official `AdamWeightDecayOptimizer`, as BERT and ALBERT fine-tune: Adam without bias
    correction, weight decay 0.01 added to the update (none on biases or LayerNorm weights),
    epsilon 1e-6, gradients clipped to global norm 1.0 (`albert_keras.optimizers.AdamWeightDecay`).

    Example:
    >>> default_optimizer(1e-4).weight_decay
    0.01
    """
    return AdamWeightDecay(learning_rate=learning_rate)


def compile_from_saved_config(model: keras.Model, config: dict) -> None:
    """Re-compiles `model` from a `.keras` file's compile config.

    Keras skips this on load (with a warning) for models whose `compile()` is overridden, as
    ours are (for their defaults); the body is `keras.Model.compile_from_config` without that
    guard.
    """
    config = keras.saving.deserialize_keras_object(config)
    model.compile(**config)
    if hasattr(model, "optimizer") and model.built:
        model.optimizer.build(model.trainable_variables)  # so the saved slots can load
