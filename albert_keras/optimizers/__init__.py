"""Optimizers and schedules: the official fine-tuning AdamWeightDecay and the paper's LAMB (the
same update times a trust ratio), the warmup / linear-decay learning rate, and `PerUpdateSchedule`
for gradient accumulation. Models use them for their default `compile()`; the jobs in
`albert_keras.jobs` above them."""

from albert_keras.optimizers.adam_weight_decay import OFFICIAL_EXCLUSIONS, AdamWeightDecay
from albert_keras.optimizers.lamb import OFFICIAL_FUSED_SLICES, Lamb
from albert_keras.optimizers.per_update_schedule import PerUpdateSchedule, micro_batch_size
from albert_keras.optimizers.warmup_linear_decay import WarmupLinearDecay

__all__ = [
    "OFFICIAL_EXCLUSIONS",
    "OFFICIAL_FUSED_SLICES",
    "AdamWeightDecay",
    "Lamb",
    "PerUpdateSchedule",
    "WarmupLinearDecay",
    "micro_batch_size",
]
