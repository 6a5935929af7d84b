"""Optimizers and schedules: the paper's LAMB, the official fine-tuning AdamWeightDecay (both on
`OfficialAdamBase`), and the warmup / linear-decay learning rate. Models use them for their
default `compile()`; the jobs in `albert_keras.training` above them."""

from albert_keras.optimizers.adam_weight_decay import AdamWeightDecay
from albert_keras.optimizers.lamb import Lamb
from albert_keras.optimizers.official_adam_base import OFFICIAL_EXCLUSIONS, OfficialAdamBase
from albert_keras.optimizers.warmup_linear_decay import WarmupLinearDecay

__all__ = [
    "OFFICIAL_EXCLUSIONS",
    "AdamWeightDecay",
    "Lamb",
    "OfficialAdamBase",
    "WarmupLinearDecay",
]
