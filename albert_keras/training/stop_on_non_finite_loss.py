"""StopOnNonFiniteLoss: ends `fit` with one line naming the step where a loss became nan or inf."""

import math

import keras


class NonFiniteLoss(ValueError):
    """A training loss became nan or inf; `step` is the optimizer update it was seen at.

    A `ValueError`, so the command line ends it in one line and a non-zero exit; `kept` says
    what the run kept (the last finite checkpoint, no model).
    """

    def __init__(self, name: str, value: float, step: int, kept: str = ""):
        super().__init__(
            f"the training {name} became {value} at step {step}: training stopped"
            + (f"; {kept}" if kept else "")
        )
        self.name, self.value, self.step = name, value, step


class StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Raises `NonFiniteLoss` at the first batch whose logged loss is nan or inf.

    `keras.callbacks.TerminateOnNaN` is the library's check, but it only sets
    `model.stop_training`: `fit` then returns normally, the epoch's end still runs (a
    checkpoint callback there would save the nan weights) and the job goes on to save a
    model and exit 0. Raising from the batch's end instead leaves `fit` at once: no callback
    after it runs, the last checkpoint stays the last finite one, and the job writes no model.

    Every logged value whose name is `loss` or ends in `_loss` is checked (the pretrainer's
    `mlm_loss` and `sentence_loss`, the distiller's terms); the logged values are the period's
    running means, so one non-finite batch makes them non-finite at that batch.

    Args:
        steps_per_epoch: int. `fit`'s `steps_per_epoch`, in batches.
        accumulate: int. Batches per optimizer update (gradient accumulation); steps are
            counted in updates, as `--max_steps` is.

    Example:
    >>> import numpy as np
    >>> model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    >>> model.compile(loss="mse", optimizer=keras.optimizers.SGD(1e30))
    >>> x = np.ones((8, 1)) * 1e10
    >>> try:
    ...     model.fit(x, x, batch_size=1, verbose=0, callbacks=[StopOnNonFiniteLoss(8)])
    ... except NonFiniteLoss as error:
    ...     print(error)
    the training loss became inf at step 2: training stopped
    """

    def __init__(self, steps_per_epoch: int, accumulate: int = 1):
        super().__init__()
        self.steps_per_epoch, self.accumulate, self.epoch = steps_per_epoch, accumulate, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        for name, value in (logs or {}).items():
            if name != "loss" and not name.endswith("_loss"):
                continue
            value = float(keras.ops.convert_to_numpy(value))
            if not math.isfinite(value):
                batches = self.epoch * self.steps_per_epoch + batch + 1
                raise NonFiniteLoss(name, value, math.ceil(batches / self.accumulate))
