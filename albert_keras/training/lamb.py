"""Moved to `albert_keras.optimizers.lamb`; this name stays for old imports."""

from albert_keras.optimizers.lamb import OFFICIAL_EXCLUSIONS, Lamb

__all__ = ["OFFICIAL_EXCLUSIONS", "Lamb"]
