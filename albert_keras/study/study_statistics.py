"""The study report's numbers: each column read from the runs' summaries, and seed statistics.

Mean ± sample standard deviation over the seeds that have finished; where two cells' means
differ by less than the larger of their seed standard deviations, the gap is within seed noise
(`unresolved_pairs`).
"""

from __future__ import annotations

import math

__all__ = ["columns", "format_mean_std", "relative_speed", "seed_stats", "unresolved_pairs"]


def columns(spec) -> dict:
    """Column key -> how to read it from a run's summary (None: not applicable).

    Args:
        spec: `StudySpec`. Its `tasks` add a column each, and "Avg" after them.

    Returns:
        A dict of column key -> function of a run's `summary.json` dict, in the table's order:
        MLM, NSP, SOP (percent), the tasks, Avg, steps/s.

    Example:
    >>> from albert_keras.study import load_spec
    >>> list(columns(load_spec("table5", {"tasks": ["RTE"]})))
    ['MLM', 'NSP', 'SOP', 'RTE', 'Avg', 'steps/s']
    """

    def intrinsic(name):
        return lambda s: _percent(s["intrinsic"][name])

    readers = {
        "MLM": intrinsic("mlm_accuracy"),
        "NSP": intrinsic("nsp_accuracy"),
        "SOP": intrinsic("sop_accuracy"),
    }
    for task in spec.settings["tasks"]:
        readers[task] = lambda s, task=task: s["downstream"][task]["score"]
    if spec.settings["tasks"]:
        readers["Avg"] = lambda s: s["downstream_average"]
    readers["steps/s"] = lambda s: s["pretraining"]["steps_per_second"]
    return readers


def _percent(value):
    return None if value is None else 100.0 * value


def seed_stats(values: list) -> dict:
    """Mean and sample standard deviation of the values present (None: not measured).

    Args:
        values: list of float or None, one per seed.

    Returns:
        A dict: `values` as given, `n` (how many are present), `mean` and `std` (None where
        there are too few values).

    Example:
    >>> seed_stats([1.0, None, 3.0])
    {'values': [1.0, None, 3.0], 'n': 2, 'mean': 2.0, 'std': 1.4142135623730951}
    """
    present = [v for v in values if v is not None]
    if not present:
        return {"values": values, "n": 0, "mean": None, "std": None}
    mean = sum(present) / len(present)
    std = (
        math.sqrt(sum((v - mean) ** 2 for v in present) / (len(present) - 1))
        if len(present) > 1
        else None
    )
    return {"values": values, "n": len(present), "mean": mean, "std": std}


def relative_speed(rows: list[dict]) -> None:
    """Sets each row's pretraining speed relative to the first pretrained row (the paper's
    "Speedup") as its `speed_relative` (None where a row has no speed).

    Args:
        rows: list of dict. The report's rows, each with `columns["steps/s"]`.

    Example:
    >>> rows = [{"columns": {"steps/s": seed_stats([v])}} for v in (None, 2.0, 3.0)]
    >>> relative_speed(rows)
    >>> [row["speed_relative"] for row in rows]
    [None, 1.0, 1.5]
    """
    first = next(
        (r["columns"]["steps/s"]["mean"] for r in rows if r["columns"]["steps/s"]["mean"]), None
    )
    for row in rows:
        mean = row["columns"]["steps/s"]["mean"]
        row["speed_relative"] = mean / first if mean and first else None


def unresolved_pairs(rows: list[dict]) -> list[dict]:
    """Pairs of cells whose gap in a column is smaller than the seed spread.

    Args:
        rows: list of dict. The report's rows, each with `cell` and `columns`.

    Returns:
        A list of dicts: `column`, `cells` (the two names), `gap` between their means and `std`
        (the larger of their seed standard deviations).

    Example:
    >>> rows = [{"cell": name, "columns": {"MLM": seed_stats(values)}}
    ...         for name, values in [("A", [50.0, 54.0]), ("B", [51.0, 53.0]), ("C", [60.0])]]
    >>> unresolved_pairs(rows)
    [{'column': 'MLM', 'cells': ['A', 'B'], 'gap': 0.0, 'std': 2.8284271247461903}]
    """
    found = []
    keys = [k for k in (rows[0]["columns"] if rows else {}) if k != "steps/s"]
    for key in keys:
        for i, a in enumerate(rows):
            for b in rows[i + 1 :]:
                ca, cb = a["columns"][key], b["columns"][key]
                if ca["mean"] is None or cb["mean"] is None:
                    continue
                spread = max(ca["std"] or 0.0, cb["std"] or 0.0)
                gap = abs(ca["mean"] - cb["mean"])
                if spread > 0 and gap < spread:
                    found.append(
                        {"column": key, "cells": [a["cell"], b["cell"]], "gap": gap, "std": spread}
                    )
    return found


def format_mean_std(mean, std) -> str:
    """`mean ± std` to one decimal (`mean` alone without a std; "n/a" without a mean).

    Args:
        mean: float or None.
        std: float or None.

    Example:
    >>> format_mean_std(54.94, 1.25), format_mean_std(54.94, None), format_mean_std(None, None)
    ('54.9 ± 1.2', '54.9', 'n/a')
    """
    if mean is None:
        return "n/a"
    return f"{mean:.1f} ± {std:.1f}" if std is not None else f"{mean:.1f}"
