"""PerUpdateSchedule: a learning-rate schedule counted in optimizer updates, not micro-batches."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_keras")
class PerUpdateSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """`schedule(iteration // gradient_accumulation_steps)`.

    With `gradient_accumulation_steps=k`, a Keras optimizer counts every micro-batch in its
    `iterations` and evaluates its schedule on that count, so a `WarmupLinearDecay` written in
    optimizer steps would warm up and decay k times too early. Wrapped, the update that ends
    micro-batches `n*k .. n*k + k - 1` (applied at iteration `n*k + k - 1`) uses `schedule(n)`:
    exactly the rate of update n without accumulation.

    Args:
        schedule: `LearningRateSchedule` or float. The schedule in optimizer updates.
        gradient_accumulation_steps: int. The optimizer's `gradient_accumulation_steps`.

    Example:
    >>> from albert_keras.optimizers import Lamb, WarmupLinearDecay
    >>> schedule = PerUpdateSchedule(WarmupLinearDecay(1e-3, 10, 100), 4)
    >>> optimizer = Lamb(learning_rate=schedule, gradient_accumulation_steps=4)
    >>> [round(float(schedule(step)), 6) for step in (0, 20, 40)]  # updates 0, 5, 10
    [0.0, 0.0005, 0.0009]
    """

    def __init__(self, schedule, gradient_accumulation_steps: int):
        if not isinstance(gradient_accumulation_steps, int) or gradient_accumulation_steps < 1:
            raise ValueError(
                f"gradient_accumulation_steps={gradient_accumulation_steps} must be an integer >= 1"
            )
        self.schedule = schedule
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def __call__(self, step):
        update = ops.floor_divide(step, self.gradient_accumulation_steps)
        if callable(self.schedule):
            return self.schedule(update)
        return ops.convert_to_tensor(self.schedule, "float32")

    def get_config(self):
        return {
            "schedule": keras.saving.serialize_keras_object(self.schedule),
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["schedule"] = keras.saving.deserialize_keras_object(config["schedule"])
        return cls(**config)


def micro_batch_size(batch_size: int, gradient_accumulation_steps: int, replicas: int = 1) -> int:
    """The batch of one forward pass when `batch_size` is split into accumulation steps.

    Example:
    >>> micro_batch_size(4096, 16)
    256
    """
    if gradient_accumulation_steps < 1:
        raise ValueError(
            f"--gradient_accumulation_steps={gradient_accumulation_steps} must be >= 1"
        )
    micro, rest = divmod(batch_size, gradient_accumulation_steps)
    if rest or micro % replicas:
        raise ValueError(
            f"--batch_size={batch_size} does not split into {gradient_accumulation_steps} "
            f"accumulation steps of a size divisible by {replicas} replica(s)"
        )
    return micro
