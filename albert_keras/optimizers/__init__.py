"""Optimizers and schedules: the paper's LAMB, the official fine-tuning AdamWeightDecay (both on
`OfficialAdamBase`), the warmup / linear-decay learning rate, and `PerUpdateSchedule` for gradient accumulation. Models use them for their
default `compile()`; the jobs in `albert_keras.training` above them."""

from albert_keras.optimizers.adam_weight_decay import AdamWeightDecay
from albert_keras.optimizers.lamb import OFFICIAL_FUSED_SLICES, Lamb
from albert_keras.optimizers.official_adam_base import OFFICIAL_EXCLUSIONS, OfficialAdamBase
from albert_keras.optimizers.per_update_schedule import PerUpdateSchedule, micro_batch_size
from albert_keras.optimizers.warmup_linear_decay import WarmupLinearDecay

__all__ = [
    "OFFICIAL_EXCLUSIONS",
    "OFFICIAL_FUSED_SLICES",
    "AdamWeightDecay",
    "Lamb",
    "OfficialAdamBase",
    "PerUpdateSchedule",
    "WarmupLinearDecay",
    "micro_batch_size",
]
