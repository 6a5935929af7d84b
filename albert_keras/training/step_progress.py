"""Progress in optimizer steps (done / total, rate, time left, losses) instead of Keras epochs."""

import time

import keras


class StepProgress(keras.callbacks.Callback):
    """Prints one line every `every_seconds`: steps done / total, steps/s, time left, and the
    running losses and accuracies of `fit`'s logs.

    The jobs run `fit` in epochs that are checkpoint or evaluation periods, so Keras's own
    progress bar says "Epoch 3/17"; this counts what a user asked for, `--max_steps`. The step
    is `epoch * steps_per_epoch + batch + 1` batches, divided by `batches_per_step` (gradient
    accumulation), so a resumed run (`initial_epoch`) counts on from where it stopped.

    Args:
        total_steps: int. The run's last optimizer step (`--max_steps`).
        batches_per_step: int. Batches per optimizer step (gradient accumulation steps).
        every_seconds: float. Least time between two lines; the last step always prints.
        print_fn: callable taking one string (default `print`).

    Example:
    >>> import numpy as np
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(loss="mse")
    >>> lines = []
    >>> _ = model.fit(np.zeros((8, 2)), np.zeros((8, 1)), batch_size=4, epochs=2, verbose=0,
    ...               callbacks=[StepProgress(4, every_seconds=0, print_fn=lines.append)])
    >>> lines[-1].split()[:2]
    ['step', '4/4']
    """

    def __init__(self, total_steps, batches_per_step=1, every_seconds=10.0, print_fn=print):
        super().__init__()
        self.total_steps = int(total_steps)
        self.batches_per_step = int(batches_per_step)
        self.every_seconds = float(every_seconds)
        self.print_fn = print_fn
        self._epoch = 0

    def on_train_begin(self, logs=None):
        self._start_time = self._last_print = time.perf_counter()
        self._start_step = None

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        steps_per_epoch = self.params.get("steps") or 0
        step = (self._epoch * steps_per_epoch + batch + 1) // self.batches_per_step
        now = time.perf_counter()
        if self._start_step is None:  # the first call: rates count from here (after tracing)
            self._start_step, self._start_time = step, now
        if now - self._last_print < self.every_seconds and step < self.total_steps:
            return
        self._last_print = now
        self.print_fn(self.line(step, now - self._start_time, step - self._start_step, logs))

    def line(self, step, seconds, steps_timed, logs):
        """The progress line for `step` after `steps_timed` steps in `seconds`."""
        total = self.total_steps
        parts = [f"step {step}/{total} ({100 * step / max(total, 1):.0f}%)"]
        if steps_timed > 0 and seconds > 0:
            rate = steps_timed / seconds
            parts.append(f"{rate:.2f} steps/s")
            parts.append(f"{_duration(max(total - step, 0) / rate)} left")
        for name, value in (logs or {}).items():
            if "loss" in name or "accuracy" in name:
                parts.append(f"{name} {float(value):.4f}")
        return "  ".join(parts)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


def progress_callbacks(verbose, total_steps: int, batches_per_step: int = 1):
    """`fit`'s own `verbose` and the callbacks for a job's `verbose`: any non-zero `verbose`
    (`"auto"`, 1, 2) prints `StepProgress` lines instead of Keras's per-epoch bars; 0 is silent.

    Returns:
        `(fit_verbose, callbacks)`.
    """
    if not verbose:
        return 0, []
    return 0, [StepProgress(total_steps, batches_per_step)]
