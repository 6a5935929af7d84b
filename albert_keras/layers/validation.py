"""Argument checks shared by the layers and models: a bad size fails at construction, by name."""

import numbers


def check_positive(**sizes: int) -> None:
    """Raises `ValueError` naming the first argument that is not a positive integer.

    Example:
    >>> check_positive(num_layers=12, num_heads=0)
    Traceback (most recent call last):
    ValueError: num_heads must be a positive integer, got 0
    """
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_rate(name: str, value: float) -> None:
    """Raises `ValueError` unless `0 <= value < 1` (a dropout rate)."""
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
