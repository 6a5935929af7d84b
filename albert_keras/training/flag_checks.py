"""`check_positive`: the one wording of a job's "must be a positive integer" flag error."""


def check_positive(**values: int) -> None:
    """Raises `ValueError` naming the first flag whose value is not a positive integer.

    Args:
        **values: flag name -> value, checked in order.

    Example:
    >>> check_positive(batch_size=32, max_steps=1000)
    >>> check_positive(batch_size=0)
    Traceback (most recent call last):
    ...
    ValueError: --batch_size=0 must be a positive integer
    """
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"--{name}={value} must be a positive integer")
