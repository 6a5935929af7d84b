"""StopAtStep: ends `fit` after exactly `max_steps` batches, across epochs and resumes."""

import keras


class StopAtStep(keras.callbacks.Callback):
    """Stops training after batch `max_steps`, counted as `epoch * steps_per_epoch + batch + 1`.

    The jobs run `fit` in epochs that are checkpoint or evaluation periods; when `max_steps` is
    not a multiple of the period, this ends the last, shorter one. A resumed run
    (`initial_epoch`) counts on from where it stopped.

    Args:
        steps_per_epoch: int. `fit`'s `steps_per_epoch` (batches: with gradient accumulation,
            the period times the accumulation steps).
        max_steps: int. The last batch, in the same unit.

    Example:
    >>> import numpy as np
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(loss="mse", optimizer="sgd")
    >>> _ = model.fit(np.zeros((12, 2)), np.zeros((12, 1)), batch_size=1, steps_per_epoch=4,
    ...               epochs=3, verbose=0, callbacks=[StopAtStep(4, max_steps=10)])
    >>> int(model.optimizer.iterations)
    10
    """

    def __init__(self, steps_per_epoch: int, max_steps: int):
        super().__init__()
        self.steps_per_epoch, self.max_steps, self.epoch = steps_per_epoch, max_steps, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.epoch * self.steps_per_epoch + batch + 1 >= self.max_steps:
            self.model.stop_training = True
