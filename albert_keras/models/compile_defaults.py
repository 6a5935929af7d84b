"""The optimizer the models' `compile()` uses when none is given."""

import keras


def default_optimizer(learning_rate: float) -> keras.optimizers.Optimizer:
    """AdamW as BERT and ALBERT fine-tune: weight decay 0.01, epsilon 1e-6, and no decay on
    biases or LayerNorm weights (the official `AdamWeightDecayOptimizer` excludes them), and
    gradients clipped to global norm 1.0 (as the official `optimization.py`).

    Example:
    >>> default_optimizer(1e-4).weight_decay
    0.01
    """
    optimizer = keras.optimizers.AdamW(
        learning_rate=learning_rate, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0
    )
    optimizer.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
    return optimizer


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
