"""The LAMB optimizer exactly as the official ALBERT pretraining uses it.

LAMB takes a norm per official variable, so a variable of ours that holds several official
variables side by side gets one norm per block (`OFFICIAL_FUSED_SLICES`). The model library's
complete list; every other variable is exactly one official variable (the converter,
`albert_keras.convert.keras_weights`, maps each; tests/optimizers/test_lamb_fused.py checks this
list against it on every model):

| variable (path ends with) | layer              | blocks      | official variables (attention_1/self/) |
|---------------------------|--------------------|-------------|----------------------------------------|
| `qkv/kernel` (H, 3H)      | SelfAttentionBlock | 3 of (H, H) | `{query,key,value}/kernel`             |
| `qkv/bias` (3H,)          | SelfAttentionBlock | 3 of (H,)   | `{query,key,value}/bias`               |

Not fused, though they may look it: the sentence head's and the SQuAD v1 span head's Dense(2)
(one (2, H) official variable each), the v2 head's Dense over [token ; start] (one official
`dense_0` kernel), and the MLM output layer, tied to the token embedding as upstream. Weight
decay is elementwise and its exclusions go by name (`qkv/bias` is excluded as `query/bias` is,
`qkv/kernel` decayed as `query/kernel`), and clipping takes one global norm: neither needs blocks.
"""

import re
from collections.abc import Mapping, Sequence

import keras
from keras import ops

from albert_keras.optimizers.adam_weight_decay import (
    OFFICIAL_EXCLUSIONS,
    AdamWeightDecay,
    matches_path,
)

# A regular expression searched in a variable's path -> its number of equal blocks along the
# last axis, each one official variable (the module docstring lists them).
OFFICIAL_FUSED_SLICES = {r"(^|/)qkv/(kernel|bias)$": 3}


@keras.saving.register_keras_serializable(package="albert_keras")
class Lamb(AdamWeightDecay):
    """LAMB (You et al., 2019) as in the official ALBERT code (`lamb_optimizer.py`).

    Per variable `w` with gradient `g` (after global-norm clipping, as the official
    `create_optimizer` clips at 1.0):

        m = β1 m + (1 - β1) g                 v = β2 v + (1 - β2) g²
        update = m / (sqrt(v) + ε) + weight_decay * w          (no bias correction)
        ratio = ‖w‖ / ‖update‖   (1 where either norm is 0)
        w = w - learning_rate * ratio * update

    The norms are taken per official variable: a variable matched by `fused_slices` (by default
    `OFFICIAL_FUSED_SLICES`: `SelfAttentionBlock`'s fused query/key/value kernel and bias) gets
    one ratio per block of its last axis, so q, k and v move exactly as the official model's
    three separate variables.

    Variables whose path matches a pattern in `exclude_from_weight_decay` get no decay term;
    those matching `exclude_from_layer_adaptation` (by default the same list, as the official
    code) get ratio 1. `keras.optimizers.Lamb` differs on each point: it bias-corrects, decays
    weights outside the update (decoupled, before the step), applies the trust ratio to every
    variable, uses ε 1e-7 and does not clip. The moments, decay and clipping are those of
    `AdamWeightDecay`, its base class (the same update with ratio 1).

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
        fused_slices: dict of str to int. A regular expression searched in each variable's path
            -> the number of equal blocks of its last axis that each get their own trust ratio
            (the first match counts). Default `OFFICIAL_FUSED_SLICES`; `{}`: one per variable.
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
        fused_slices: Mapping[str, int] | None = None,
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
        self._fused_slices = dict(OFFICIAL_FUSED_SLICES if fused_slices is None else fused_slices)

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
        # Per variable, in Python (as the flags above): its number of blocks.
        self._slices = tuple(slice_count(variable, self._fused_slices) for variable in var_list)

    def scale_update(self, index, variable, update):
        """The layer-wise trust ratio `‖w‖ / ‖update‖` (1 for excluded variables), one per block
        of a fused variable."""
        if not self._adapts[index]:
            return update
        slices = self._slices[index]
        if slices == 1:
            return _trust_ratio(ops.sum(ops.square(variable)), ops.sum(ops.square(update))) * update
        # Sums of squares per column, then per block of columns: (slices,) ratios, each repeated
        # over its block's columns, broadcast over the rows.
        width = variable.shape[-1] // slices
        rows = tuple(range(len(variable.shape) - 1))

        def block_sums(x):
            columns = ops.sum(ops.square(x), axis=rows) if rows else ops.square(x)
            return ops.sum(ops.reshape(columns, (slices, width)), axis=1)

        ratios = _trust_ratio(block_sums(variable), block_sums(update))
        return ops.repeat(ratios, width) * update

    def get_config(self) -> dict:
        config = super().get_config()
        config["exclude_from_layer_adaptation"] = self._adaptation_exclusions
        config["fused_slices"] = dict(self._fused_slices)
        return config


def slice_count(variable, fused_slices: Mapping[str, int]) -> int:
    """The number of blocks `fused_slices` gives the variable (1 when no pattern matches).

    Example:
    >>> dense = keras.layers.Dense(6, name="qkv")
    >>> dense.build((None, 2))
    >>> slice_count(dense.kernel, OFFICIAL_FUSED_SLICES), slice_count(dense.kernel, {})
    (3, 1)
    """
    path = getattr(variable, "path", variable.name)
    for pattern, slices in fused_slices.items():
        if re.search(pattern, path):
            if not variable.shape or variable.shape[-1] % slices:
                raise ValueError(
                    f"{path}: shape {tuple(variable.shape)} has no last axis divisible into "
                    f"{slices} blocks (fused_slices pattern {pattern!r})"
                )
            return slices
    return 1


def _trust_ratio(weight_square_sum, update_square_sum):
    """`‖w‖ / ‖update‖` from the sums of squares, 1 where either is 0 (as the official code)."""
    weight_norm, update_norm = ops.sqrt(weight_square_sum), ops.sqrt(update_square_sum)
    safe_norm = ops.where(update_norm > 0, update_norm, 1.0)
    both_positive = ops.logical_and(weight_norm > 0, update_norm > 0)
    return ops.where(both_positive, weight_norm / safe_norm, 1.0)
