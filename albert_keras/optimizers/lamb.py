"""The LAMB optimizer exactly as the official ALBERT pretraining uses it."""

from collections.abc import Sequence

import keras
from keras import ops

from albert_keras.optimizers.official_adam_base import (
    OFFICIAL_EXCLUSIONS,
    OfficialAdamBase,
    matches_path,
)


@keras.saving.register_keras_serializable(package="albert_keras")
class Lamb(OfficialAdamBase):
    """LAMB (You et al., 2019) as in the official ALBERT code (`lamb_optimizer.py`).

    Per variable `w` with gradient `g` (after global-norm clipping, as the official
    `create_optimizer` clips at 1.0):

        m = β1 m + (1 - β1) g                 v = β2 v + (1 - β2) g²
        update = m / (sqrt(v) + ε) + weight_decay * w          (no bias correction)
        ratio = ‖w‖ / ‖update‖   (1 where either norm is 0)
        w = w - learning_rate * ratio * update

    Variables whose path matches a pattern in `exclude_from_weight_decay` get no decay term;
    those matching `exclude_from_layer_adaptation` (by default the same list, as the official
    code) get ratio 1. `keras.optimizers.Lamb` differs on each point: it bias-corrects, decays
    weights outside the update (decoupled, before the step), applies the trust ratio to every
    variable, uses ε 1e-7 and does not clip. The moments, decay and clipping are those of
    `OfficialAdamBase`, shared with `AdamWeightDecay` (the same update with ratio 1).

    Excluded variables (biases, LayerNorm) move by about `learning_rate` per step, several times
    that in the first hundreds of steps (no bias correction), while adapted ones move by a
    `learning_rate` fraction of their norm: small models want a rate near 0.01, not much more.

    Args:
        learning_rate: float or `keras.optimizers.schedules.LearningRateSchedule`. The official
            pretraining uses `WarmupLinearDecay(0.00176, 3125, 125000)`.
        weight_decay: float. Decay rate added to the update before the trust ratio.
        beta_1: float. Decay of the first-moment estimate.
        beta_2: float. Decay of the second-moment estimate.
        epsilon: float. Added to `sqrt(v)`; the official value is 1e-6.
        exclude_from_weight_decay: list of str. Regular expressions searched in each variable's
            path; a match gets no weight decay.
        exclude_from_layer_adaptation: list of str, or `None` for `exclude_from_weight_decay`.
            A match gets trust ratio 1.
        global_clipnorm: float or `None`. Clip all gradients to this global norm (official 1.0).
        **kwargs: passed to `keras.optimizers.Optimizer` (`name`, `gradient_accumulation_steps`,
            `loss_scale_factor`, ...).

    Example:
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    >>> model.compile(optimizer=Lamb(learning_rate=1e-3), loss="mse")
    >>> model.optimizer.name
    'lamb'
    """

    def __init__(
        self,
        learning_rate: float | keras.optimizers.schedules.LearningRateSchedule = 0.00176,
        weight_decay: float = 0.01,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-6,
        exclude_from_weight_decay: Sequence[str] | None = OFFICIAL_EXCLUSIONS,
        exclude_from_layer_adaptation: Sequence[str] | None = None,
        global_clipnorm: float | None = 1.0,
        name: str = "lamb",
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            exclude_from_weight_decay=exclude_from_weight_decay,
            global_clipnorm=global_clipnorm,
            name=name,
            **kwargs,
        )
        self._adaptation_exclusions = (
            None if exclude_from_layer_adaptation is None else list(exclude_from_layer_adaptation)
        )

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        adaptation = (
            self._decay_exclusions
            if self._adaptation_exclusions is None
            else self._adaptation_exclusions
        )
        self._adapts = tuple(not matches_path(variable, adaptation) for variable in var_list)

    def scale_update(self, index, variable, update):
        """The layer-wise trust ratio `‖w‖ / ‖update‖` (1 for excluded variables)."""
        if not self._adapts[index]:
            return update
        weight_norm = ops.sqrt(ops.sum(ops.square(variable)))
        update_norm = ops.sqrt(ops.sum(ops.square(update)))
        safe_norm = ops.where(update_norm > 0, update_norm, 1.0)
        both_positive = ops.logical_and(weight_norm > 0, update_norm > 0)
        return ops.where(both_positive, weight_norm / safe_norm, 1.0) * update

    def get_config(self) -> dict:
        config = super().get_config()
        config["exclude_from_layer_adaptation"] = self._adaptation_exclusions
        return config
