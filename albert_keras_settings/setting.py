"""`setting()`: one field of a job's settings, with everything its flag needs.

Written by hand because no library we use turns a frozen dataclass into `argparse` flags with
the help, choices and one-line errors our commands give (`simple-parsing` and `tyro` do, but
they are new dependencies with their own flag styles).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable
from typing import Any, TypeVar

Settings = TypeVar("Settings")


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()  # a setting without a default: its flag is required


def setting(
    default: Any = REQUIRED,
    help: str = "",
    *,
    choices: Iterable | None = None,
    flag: bool = True,
    metavar: str | None = None,
) -> Any:
    """One setting: a dataclass field whose metadata says how its flag reads.

    Args:
        default: the one default of this setting (`REQUIRED` for none).
        help: str. The flag's help and the setting's documentation, one sentence.
        choices: the values it may take (checked when the settings are made).
        flag: bool. False for a setting the command line sets another way (e.g. `config`,
            parsed from the repeatable `--config KEY=VALUE`).
        metavar: str. How the help shows the value.

    Example:
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     steps: int = setting(10, "optimizer steps")
    >>> S().steps, dataclasses.fields(S)[0].metadata["help"]
    (10, 'optimizer steps')
    """
    metadata = {
        "help": help,
        "choices": tuple(choices) if choices is not None else None,
        "flag": flag,
        "metavar": metavar,
    }
    if default is REQUIRED:
        return dataclasses.field(metadata=metadata)
    if isinstance(default, (dict, list, set)):
        frozen = type(default)(default)
        return dataclasses.field(default_factory=lambda: type(frozen)(frozen), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def check_choices(settings) -> None:
    """Raises `ValueError` naming the first setting whose value is not one of its choices.

    Example:
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     mode: str = setting("a", "a mode", choices=("a", "b"))
    >>> check_choices(S(mode="c"))
    Traceback (most recent call last):
    ValueError: --mode='c': expected one of a, b
    """
    for field in dataclasses.fields(settings):
        choices = field.metadata.get("choices")
        value = getattr(settings, field.name)
        unset = value is None and field.default is None  # `None` default: "not given"
        if choices is not None and value not in choices and not unset:
            raise ValueError(
                f"--{field.name}={value!r}: expected one of {', '.join(map(str, choices))}"
            )


def paths_as_strings(settings, *names: str) -> None:
    """Makes each of `names` that is an `os.PathLike` its `str`, in a frozen dataclass: a Path
    and its str are the same setting, and a flag gives the str (any other value is kept).

    Example:
    >>> import pathlib
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     output_dir: str = setting("out", "the run's folder")
    >>> settings = S(output_dir=pathlib.Path("runs") / "a")
    >>> paths_as_strings(settings, "output_dir")
    >>> settings.output_dir == os.path.join("runs", "a")
    True
    """
    for name in names:
        value = getattr(settings, name)
        if isinstance(value, os.PathLike):
            object.__setattr__(settings, name, os.fspath(value))


def check_positive(settings, *names: str) -> None:
    """Raises `ValueError` naming the first of `names` that is not a positive integer.

    Example:
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     steps: int = setting(10, "optimizer steps")
    >>> check_positive(S(steps=0), "steps")
    Traceback (most recent call last):
    ValueError: --steps=0 must be a positive integer
    """
    check_positive_values(**{name: getattr(settings, name) for name in names})


def check_positive_values(**values) -> None:
    """The one wording of "--flag=value must be a positive integer", for values by flag name.

    Example:
    >>> check_positive_values(batch_size=32, max_steps=0)
    Traceback (most recent call last):
    ValueError: --max_steps=0 must be a positive integer
    """
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"--{name}={value} must be a positive integer")


def check_number(
    name: str,
    value,
    *,
    above: float | None = None,
    at_least: float | None = None,
    at_most: float | None = None,
    below: float | None = None,
) -> None:
    """Raises `ValueError` unless `value` (`None`: not given, passes) is a finite number within
    the bounds given: a `nan` or `inf` learning rate, step count or probability is refused in one
    line naming the flag before anything trains on it (`nan < 0` is False, so a plain comparison
    lets it through).

    Args:
        name: str. The setting, as its flag names it (without `--`).
        value: the value; `None` passes.
        above, at_least, at_most, below: float or None. `value > above`, `value >= at_least`,
            `value <= at_most`, `value < below`.

    Example:
    >>> check_number("learning_rate", 1e-4, above=0)
    >>> check_number("learning_rate", float("nan"), above=0)
    Traceback (most recent call last):
    ValueError: --learning_rate=nan must be a finite number > 0
    >>> check_number("masked_lm_prob", 1.5, above=0, below=1)
    Traceback (most recent call last):
    ValueError: --masked_lm_prob=1.5 must be a finite number > 0 and < 1
    """
    if value is None:
        return
    bounds = [
        (bound, text, ok)
        for bound, text, ok in (
            (above, "> {}", lambda v, b: v > b),
            (at_least, ">= {}", lambda v, b: v >= b),
            (at_most, "<= {}", lambda v, b: v <= b),
            (below, "< {}", lambda v, b: v < b),
        )
        if bound is not None
    ]
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or not all(ok(value, b) for b, _, ok in bounds):
        wanted = " and ".join(text.format(b) for b, text, _ in bounds)
        wanted = f" {wanted}" if wanted else ""
        raise ValueError(f"--{name}={value!r} must be a finite number{wanted}")


def check_integer(name: str, value, *, at_least: int = 0) -> None:
    """Raises `ValueError` unless `value` (`None`: not given, passes) is an integer >= `at_least`
    (a step count, a length, a number of batches).

    Example:
    >>> check_integer("warmup_steps", 0)
    >>> check_integer("warmup_steps", 2.5)
    Traceback (most recent call last):
    ValueError: --warmup_steps=2.5 must be an integer >= 0
    """
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < at_least:
        raise ValueError(f"--{name}={value!r} must be an integer >= {at_least}")


def resolve_settings(cls: type[Settings], settings: Settings | None, overrides: dict) -> Settings:
    """A job's settings from what its caller gave: `settings`, `overrides` (keyword arguments),
    or both (the overrides replace those fields).

    Args:
        cls: the job's settings class.
        settings: an instance of `cls`, or `None`.
        overrides: field name -> value.

    Example:
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     steps: int = setting(10, "optimizer steps")
    >>> resolve_settings(S, None, {"steps": 3}), resolve_settings(S, S(steps=4), {})
    (S(steps=3), S(steps=4))
    >>> resolve_settings(S, None, {"step": 3})
    Traceback (most recent call last):
    TypeError: S has no setting 'step'; known: steps
    """
    names = {field.name for field in dataclasses.fields(cls)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise TypeError(
            f"{cls.__name__} has no setting {unknown[0]!r}; known: {', '.join(sorted(names))}"
        )
    if settings is None:
        missing = [
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in overrides
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise TypeError(f"{cls.__name__} needs {', '.join(missing)}")
        return cls(**overrides)
    if not isinstance(settings, cls):
        raise TypeError(f"settings must be a {cls.__name__}, not {type(settings).__name__}")
    return dataclasses.replace(settings, **overrides) if overrides else settings


def as_dict(settings) -> dict:
    """The settings as a plain dict (what a run records), in field order.

    Example:
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     steps: int = setting(10, "optimizer steps")
    >>> as_dict(S())
    {'steps': 10}
    """
    return dataclasses.asdict(settings)
