"""The Adam with weight decay that the official ALBERT and BERT fine-tuning use."""

from collections.abc import Sequence

import keras

from albert_keras.optimizers.official_adam_base import OFFICIAL_EXCLUSIONS, OfficialAdamBase


@keras.saving.register_keras_serializable(package="albert_keras")
class AdamWeightDecay(OfficialAdamBase):
    """The official `AdamWeightDecayOptimizer` (`optimization.py` of ALBERT and BERT).

    Per variable `w` with gradient `g` (after global-norm clipping at 1.0, as the official
    `create_optimizer`):

        m = β1 m + (1 - β1) g                 v = β2 v + (1 - β2) g²
        update = m / (sqrt(v) + ε) + weight_decay * w          (no bias correction)
        w = w - learning_rate * update

    That is `OfficialAdamBase` as it is (`Lamb` adds its trust ratio to the same update: same
    moments, exclusions, clipping and state). `keras.optimizers.AdamW` differs: it corrects the
    moments' bias (larger steps over the first ~1,000 updates here) and decays the weights
    before the step rather than inside the update. Variables whose path matches a pattern in
    `exclude_from_weight_decay` (by default LayerNorm weights and biases) are not decayed.

    Args:
        learning_rate: float or `keras.optimizers.schedules.LearningRateSchedule`. The official
            GLUE runs use warmup then linear decay from 1e-5 to 5e-5 (`WarmupLinearDecay`).
        weight_decay: float. Decay rate added to the update.
        beta_1: float. Decay of the first-moment estimate.
        beta_2: float. Decay of the second-moment estimate.
        epsilon: float. Added to `sqrt(v)`; the official value is 1e-6.
        exclude_from_weight_decay: list of str. Regular expressions searched in each variable's
            path; a match gets no weight decay.
        global_clipnorm: float or `None`. Clip all gradients to this global norm (official 1.0).
        **kwargs: passed to `keras.optimizers.Optimizer` (`name`, `gradient_accumulation_steps`,
            `loss_scale_factor`, ...).

    Example:
    >>> from albert_keras.optimizers import WarmupLinearDecay
    >>> optimizer = AdamWeightDecay(WarmupLinearDecay(2e-5, 100, 1000))
    >>> optimizer.name, optimizer.weight_decay
    ('adam_weight_decay', 0.01)
    """

    def __init__(
        self,
        learning_rate: float | keras.optimizers.schedules.LearningRateSchedule = 5e-5,
        weight_decay: float = 0.01,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-6,
        exclude_from_weight_decay: Sequence[str] | None = OFFICIAL_EXCLUSIONS,
        global_clipnorm: float | None = 1.0,
        name: str = "adam_weight_decay",
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

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._adapts = (False,) * len(var_list)  # no trust ratio (the attribute `Lamb` has)
