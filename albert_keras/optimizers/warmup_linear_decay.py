"""The learning-rate schedule of the official ALBERT pretraining: linear warmup, linear decay."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_keras")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup from 0 to `peak_learning_rate`, then linear decay to 0 at `total_steps`.

    As the official `optimization.create_optimizer`: the decay is a polynomial decay (power 1)
    over the whole run, `peak * (1 - step / total_steps)`, which the warmup overrides for
    `step < warmup_steps` with `peak * step / warmup_steps`. So the rate after warmup starts at
    `peak * (1 - warmup_steps / total_steps)`, not at `peak`, and stays 0 after `total_steps`.
    The official pretraining defaults are peak 0.00176, 3,125 warmup steps of 125,000 (batch 4096).

    Args:
        peak_learning_rate: float. The rate reached at the end of warmup (the official `init_lr`).
        warmup_steps: int. Steps of linear warmup from 0; 0 turns warmup off.
        total_steps: int. The step at which the rate reaches 0.
        name: str. Name of the schedule.

    Example:
    >>> schedule = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100)
    >>> [round(float(schedule(s)), 6) for s in (0, 5, 10, 55, 100)]
    [0.0, 0.0005, 0.0009, 0.00045, 0.0]
    """

    def __init__(
        self,
        peak_learning_rate: float = 0.00176,
        warmup_steps: int = 3125,
        total_steps: int = 125_000,
        name: str = "WarmupLinearDecay",
    ):
        super().__init__()
        if total_steps <= 0:
            raise ValueError(f"total_steps={total_steps} must be positive")
        if not 0 <= warmup_steps <= total_steps:
            raise ValueError(
                f"warmup_steps={warmup_steps} must be in [0, total_steps={total_steps}]"
            )
        if peak_learning_rate < 0:
            raise ValueError(f"peak_learning_rate={peak_learning_rate} must be >= 0")
        self.peak_learning_rate = float(peak_learning_rate)
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)
        self.name = name

    def __call__(self, step):
        step = ops.cast(step, "float32")
        peak = ops.cast(self.peak_learning_rate, "float32")
        decay_progress = ops.minimum(step, float(self.total_steps)) / float(self.total_steps)
        decayed = peak * (1.0 - decay_progress)
        if self.warmup_steps == 0:
            return decayed
        warmup = peak * step / float(self.warmup_steps)
        return ops.where(step < float(self.warmup_steps), warmup, decayed)

    def get_config(self) -> dict:
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "name": self.name,
        }
