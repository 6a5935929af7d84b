"""`BestWeightsInMemory`: the weights at the best value of a metric so far, kept in memory."""

import math

import keras


class BestWeightsInMemory(keras.callbacks.Callback):
    """Keeps a copy of the weights at the best `monitor` so far (higher is better), in memory.

    In memory rather than in a `best.weights.h5` as `ModelCheckpoint` keeps them: a run is not
    resumed from it, and a file meant a full disk in the middle of HDF5's own writes (a
    traceback, then a crash leaving half a file) and a `checkpoints/` folder to delete after.

    Args:
        monitor: str. The log key to maximise (e.g. `"val_accuracy"`); NaN never counts.

    Example:
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> best = BestWeightsInMemory("score")
    >>> best.set_model(model)
    >>> best.on_epoch_end(0, {"score": 0.5}); best.on_epoch_end(1, {"score": float("nan")})
    >>> best.best, len(best.weights)
    (0.5, 2)
    """

    def __init__(self, monitor: str):
        super().__init__()
        self.monitor = monitor
        self.best = -math.inf
        self.weights = None

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is not None and value > self.best:  # NaN never is: as ModelCheckpoint
            self.best = value
            self.weights = self.model.get_weights()
