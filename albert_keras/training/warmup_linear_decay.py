"""Moved to `albert_keras.optimizers.warmup_linear_decay`; this name stays for old imports."""

from albert_keras.optimizers.warmup_linear_decay import WarmupLinearDecay

__all__ = ["WarmupLinearDecay"]
