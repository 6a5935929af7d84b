"""Reads GLUE's own TSV files (a `--glue_dir` laid out as GLUE's download)."""

from __future__ import annotations

import csv
import math
import os
import pathlib

import numpy as np

from albert_keras.glue.glue_examples import GlueExamples
from albert_keras.glue.glue_task import GlueTask, TsvLayout
from albert_keras.glue.glue_tasks import get_glue_task


def glue_tsv_path(glue_dir: str | os.PathLike, task: str | GlueTask, split: str) -> pathlib.Path:
    """The path of `split`'s file, e.g. `GLUE_DIR/MNLI/dev_matched.tsv`."""
    task = get_glue_task(task)
    return pathlib.Path(glue_dir) / task.directory / _layout(task, split).file


def read_glue_tsv(glue_dir: str | os.PathLike, task: str | GlueTask, split: str) -> GlueExamples:
    """Reads one split of a GLUE task from GLUE's TSV layout.

    As GLUE and the official code, fields are split on tabs with no quoting
    (`csv.QUOTE_NONE`: MRPC and RTE sentences hold bare `"` characters). Columns are found by
    their header names, and a header lacking one the task needs is refused; every row must
    have the header's width (or the fixed width of CoLA's header-less train/dev files) and a
    known label; otherwise a `ValueError` names the file and line.

    Args:
        glue_dir: path. The folder holding `CoLA/`, `SST-2/`, `MNLI/`, `diagnostic/`, ...
        task: str or GlueTask. The task, e.g. `"MRPC"`.
        split: str. One of the task's splits (`"train"`, `"dev"`, `"dev_matched"`, `"test"`,..).

    Returns:
        GlueExamples.

    Example:
    >>> train = read_glue_tsv("glue_data", "SST-2", "train")
    >>> len(train), train.text_a[0]
    (67349, 'hide new secretions from the parental units ')
    """
    task = get_glue_task(task)
    layout = _layout(task, split)
    path = glue_tsv_path(glue_dir, task, split)
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"{path.parent}: no {task.name} folder (GLUE's download has GLUE_DIR/{task.directory}/)"
        )
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found ({task.name} {split} split)")
    index, text_a, text_b, labels = [], [], [], []
    try:
        # utf-8-sig: tolerate a byte-order mark (the raw MSRP files carry one).
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = None if layout.num_columns else next(reader, [])
            width = layout.num_columns or len(header)
            columns = _columns(task, split, layout, header, path)
            for row in reader:
                if not row:  # a blank line (e.g. a trailing one) holds no example
                    continue
                where = f"{path}:{reader.line_num}"
                if len(row) != width:
                    raise ValueError(
                        f"{where}: expected {width} tab-separated fields, found {len(row)}"
                    )
                index.append(row[columns["index"]] if "index" in columns else str(len(index)))
                text_a.append(row[columns["text_a"]])
                if "text_b" in columns:
                    text_b.append(row[columns["text_b"]])
                if "label" in columns:
                    labels.append(_parse_label(task, row[columns["label"]], where))
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except csv.Error as error:
        raise ValueError(f"{path}:{reader.line_num}: {error}") from None
    if layout.label is None:
        label_array = None
    else:
        label_array = np.asarray(labels, dtype="float32" if task.is_regression else "int32")
    return GlueExamples(
        task=task.name,
        split=split,
        source=str(path),
        index=index,
        text_a=text_a,
        text_b=text_b if layout.text_b is not None else None,
        labels=label_array,
        label_names=task.labels,
    )


def _layout(task: GlueTask, split: str) -> TsvLayout:
    if split not in task.splits:
        raise ValueError(
            f"{task.name} has no split {split!r}; choose from {', '.join(task.splits)}"
        )
    return task.splits[split]


def _columns(
    task: GlueTask, split: str, layout: TsvLayout, header: list[str] | None, path: pathlib.Path
) -> dict[str, int]:
    """Field -> column number, fields named in the layout looked up in the header.

    A header lacking a named field (RTE without `sentence2`, SST-2 without `label`) is refused,
    naming the file and line 1: reading by position would put another column in its place.
    """
    fields = {
        name: getattr(layout, name)
        for name in ("text_a", "text_b", "label", "index")
        if getattr(layout, name) is not None
    }
    named = {field: column for field, column in fields.items() if isinstance(column, str)}
    if named and header is None:
        raise ValueError(f"{task.name} {split}: a layout naming columns needs a header row")
    found = {name.strip().lower(): i for i, name in reversed(list(enumerate(header or [])))}
    missing = [column for column in named.values() if column.lower() not in found]
    if missing:
        raise ValueError(
            f"{path}:1: the header has no {', '.join(repr(m) for m in missing)} column "
            f"({task.name} {split} needs {', '.join(named.values())}; found "
            f"{', '.join(header) if any(header) else 'an empty line'})"
        )
    width = layout.num_columns or len(header)
    columns = {}
    for field, column in fields.items():
        number = found[column.lower()] if isinstance(column, str) else column
        if not -width <= number < width:
            raise ValueError(
                f"{path}: {task.name} {split} expects a column {number} ({field}) but rows have "
                f"{width} fields"
            )
        columns[field] = number
    return columns


def _parse_label(task: GlueTask, value: str, where: str) -> int | float:
    if task.is_regression:
        try:
            score = float(value)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise ValueError(f"{where}: score {value!r} is not a finite number")
        low, high = task.score_range or (-math.inf, math.inf)
        if not low <= score <= high:
            raise ValueError(
                f"{where}: score {value!r} is outside {task.name}'s [{low:g}, {high:g}]"
            )
        return score
    if value not in task.labels:
        raise ValueError(f"{where}: label {value!r} is not one of {', '.join(task.labels)}")
    return task.labels.index(value)
