"""StepTensorBoard: Keras's TensorBoard with each period's scalars at its global step."""

import importlib.util

import keras


class StepTensorBoard(keras.callbacks.TensorBoard):
    """Keras's TensorBoard, with each period's scalars (losses, accuracies, learning rate) at
    its last global step instead of at its epoch number (the jobs' epochs are checkpoint
    periods, so a resumed run's points land where the uninterrupted run's would).

    Args:
        log_dir: str. Where the event files go.
        every: int. Steps per period (`fit`'s `steps_per_epoch`, in optimizer steps).
        max_steps: int. The run's last step (the last period may be shorter).

    Example:
    >>> callback = StepTensorBoard("/tmp/logs", every=100, max_steps=250)
    >>> callback.every, callback.max_steps
    (100, 250)
    """

    def __init__(self, log_dir, every, max_steps):
        super().__init__(log_dir=log_dir, update_freq="epoch", write_graph=False)
        self.every, self.max_steps = every, max_steps

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(min((epoch + 1) * self.every, self.max_steps), logs)


def tensorboard_callbacks(log_dir: str, every: int, max_steps: int) -> list:
    """`[StepTensorBoard(...)]`, or `[]` with a one-line note when tensorboard is missing."""
    if importlib.util.find_spec("tensorboard") is None:
        print("tensorboard is not installed: no TensorBoard scalars (pip install tensorboard)")
        return []
    return [StepTensorBoard(log_dir, every, max_steps)]
