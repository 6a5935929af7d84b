"""Moved to `albert_keras.optimizers.adam_weight_decay`; this name stays for old imports."""

from albert_keras.optimizers.adam_weight_decay import AdamWeightDecay

__all__ = ["AdamWeightDecay"]
