"""`WarmupEarlyStopping`: early stopping on a dev score that never ends a run inside its warmup."""

import math

import keras


class WarmupEarlyStopping(keras.callbacks.Callback):
    """Stops training after `patience` evaluations without a better `monitor`, once warmed up.

    Keras's `EarlyStopping` counts every evaluation, so a patience of 5 evaluations every 100
    steps could end SST-2's fine-tuning at step 500, inside its 1,256 warmup steps, while the
    learning rate is still rising and the dev score says little. Here an evaluation at or
    before the end of the warmup never counts against the run (a better score still becomes
    the best); the first one after it can. Higher is better (GLUE's metrics). Place it after
    the callback that adds `monitor` to the epoch's logs.

    Args:
        monitor: str. The log to watch, e.g. `"val_accuracy"`.
        patience: int. Evaluations after the warmup without improvement before stopping.
        warmup_steps: int. Optimizer steps of the warmup.

    Example:
    >>> model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> stop = WarmupEarlyStopping("val_score", patience=1, warmup_steps=4)
    >>> flat = keras.callbacks.LambdaCallback(  # a dev score that never improves
    ...     on_epoch_end=lambda epoch, logs: logs.update(val_score=0.5))
    >>> _ = model.fit(np.zeros((2, 1)), np.zeros((2, 1)), batch_size=1, epochs=10,
    ...               callbacks=[flat, stop], verbose=0)
    >>> stop.stopped_step, stop.best_step  # evaluations at steps 2, 4 (warmup), 6
    (6, 2)
    """

    def __init__(self, monitor: str, patience: int, warmup_steps: int):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.warmup_steps = warmup_steps
        self.best = -math.inf
        self.best_step = None
        self.wait = 0
        self.stopped_step = None

    def on_epoch_end(self, epoch, logs=None):
        step = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))
        value = (logs or {}).get(self.monitor)
        if value is not None and value > self.best:  # NaN never is
            self.best, self.best_step, self.wait = value, step, 0
        elif step > self.warmup_steps:
            self.wait += 1
        if self.patience and self.wait >= self.patience:
            self.stopped_step = step
            self.model.stop_training = True


def early_stop_note(summary: dict) -> str:
    """The end of a fine-tuning run's last line: where and why it stopped early, or "".

    Args:
        summary: dict. `finetune_glue`'s summary (`stopped_early`, `steps_trained`,
            `best_step`, `hyperparameters`).

    Example:
    >>> early_stop_note({"stopped_early": True, "steps_trained": 2600, "best_step": 2100,
    ...                  "hyperparameters": {"max_steps": 20935, "patience": 5}})
    '; stopped early at step 2600 of 20935 (no better dev score in 5 evaluations after step 2100)'
    """
    if not summary.get("stopped_early"):
        return ""
    settings = summary["hyperparameters"]
    return (
        f"; stopped early at step {summary['steps_trained']} of {settings['max_steps']} (no "
        f"better dev score in {settings['patience']} evaluations after step {summary['best_step']})"
    )
