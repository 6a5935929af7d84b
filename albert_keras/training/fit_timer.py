"""FitTimer: a training run's wall time, and its steady rate after the first (tracing) call."""

import time

import keras


class FitTimer(keras.callbacks.Callback):
    """Times `fit`: the training seconds, and steps / tokens per second after the first batch
    (which includes tracing and building), for a job's `summary.json`.

    Example:
    >>> import numpy as np
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(loss="mse", optimizer="sgd")
    >>> timer = FitTimer()
    >>> _ = model.fit(np.zeros((8, 2)), np.zeros((8, 1)), batch_size=2, verbose=0,
    ...               callbacks=[timer])
    >>> sorted(timer.summary(4, tokens_per_step=2, total_seconds=1.0))
    ['steps_per_second', 'tokens_per_second', 'total_seconds', 'train_seconds']
    """

    def __init__(self):
        super().__init__()
        self.begin = self.first_end = self.end = None
        self.first_steps = 0

    def on_train_begin(self, logs=None):
        self.begin = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.end = time.perf_counter()
        if self.first_end is None:
            self.first_end, self.first_steps = self.end, batch + 1

    def summary(self, steps_run: int, tokens_per_step: int, total_seconds: float) -> dict:
        """`{"total_seconds", "train_seconds", "steps_per_second", "tokens_per_second"}`, the
        last three where `fit` ran (tokens are batch x sequence positions, padding included)."""
        timings = {"total_seconds": round(total_seconds, 3)}
        if self.end is None or steps_run == 0:
            return timings
        timings["train_seconds"] = round(self.end - self.begin, 3)
        steady_steps, steady_seconds = steps_run - self.first_steps, self.end - self.first_end
        if steady_steps > 0 and steady_seconds > 0:
            timings["steps_per_second"] = round(steady_steps / steady_seconds, 3)
            timings["tokens_per_second"] = round(steady_steps * tokens_per_step / steady_seconds)
        return timings
