"""`--config KEY=VALUE` (repeatable): the one way every command takes settings overrides."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable


def add_config_flag(parser: argparse.ArgumentParser, help: str) -> None:
    """Adds the repeatable `--config KEY=VALUE` flag (collected as a list of strings).

    Args:
        parser: the `argparse` parser (or subparser) of a command.
        help: str. What the keys are, e.g. "override a preset argument".
    """
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"{help}, e.g. --config num_layers=2 (repeatable; VALUE is JSON or a bare string)",
    )


def parse_config_flags(items: Iterable[str], allowed: Iterable[str] | None = None) -> dict:
    """`["num_layers=2", "sharing=none"]` -> `{"num_layers": 2, "sharing": "none"}`.

    A value is read as JSON (numbers, `true`, `null`, lists, quoted strings) and otherwise kept
    as the bare string. A key given twice keeps its last value, as flags do.

    Args:
        items: the `--config` strings.
        allowed: the keys that may be set, or `None` for any; another key raises `ValueError`.

    Example:
    >>> parse_config_flags(["num_layers=2", "sharing=none", "tasks=[\\"RTE\\"]"])
    {'num_layers': 2, 'sharing': 'none', 'tasks': ['RTE']}
    >>> parse_config_flags(["num_layers"])
    Traceback (most recent call last):
    ValueError: --config 'num_layers' is not KEY=VALUE
    >>> parse_config_flags(["dropout=NaN"])
    Traceback (most recent call last):
    ValueError: --config 'dropout=NaN': NaN is not a number a setting takes
    """
    overrides = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--config {item!r} is not KEY=VALUE")
        try:
            # JSON's reader takes NaN and Infinity; no backbone argument is ever one (issue 43).
            overrides[key] = json.loads(value, parse_constant=_no_constant(item))
        except json.JSONDecodeError:
            overrides[key] = value  # a bare string such as sharing=none
    if allowed is not None:
        allowed = set(allowed)
        unknown = sorted(set(overrides) - allowed)
        if unknown:
            raise ValueError(
                f"--config {', '.join(unknown)}: not a setting here; choose from "
                f"{', '.join(sorted(allowed))}"
            )
    return overrides


def _no_constant(item: str):
    """`json.loads`' `parse_constant`: refuses `NaN`, `Infinity` and `-Infinity` in one line."""

    def refuse(constant: str):
        raise ValueError(f"--config {item!r}: {constant} is not a number a setting takes")

    return refuse
