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
    (`csv.QUOTE_NONE`: MRPC and RTE sentences hold bare `"` characters). Every row must have
    the header's width (or the fixed width of CoLA's header-less train/dev files) and a known
    label; otherwise a `ValueError` names the file and line.

    Args:
        glue_dir: path. The folder holding `CoLA/`, `SST-2/`, `MNLI/`, `diagnostic/`, ...
        task: str or GlueTask. The task, e.g. `"MRPC"`.
        split: str. One of the task's splits (`"train"`, `"dev"`, `"dev_matched"`, `"test"`,..).

    Returns:
        GlueExamples.

    Example:
    >>> train = read_glue_tsv("glue_data", "SST-2", "train")   # doctest: +SKIP
    >>> len(train), train.text_a[0]                              # doctest: +SKIP
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
            width = layout.num_columns or len(next(reader, []))
            for row in reader:
                if not row:  # a blank line (e.g. a trailing one) holds no example
                    continue
                where = f"{path}:{reader.line_num}"
                if len(row) != width:
                    raise ValueError(
                        f"{where}: expected {width} tab-separated fields, found {len(row)}"
                    )
                index.append(row[layout.index] if layout.index is not None else str(len(index)))
                text_a.append(row[layout.text_a])
                if layout.text_b is not None:
                    text_b.append(row[layout.text_b])
                if layout.label is not None:
                    labels.append(_parse_label(task, row[layout.label], where))
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


def _parse_label(task: GlueTask, value: str, where: str) -> int | float:
    if task.is_regression:
        try:
            score = float(value)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise ValueError(f"{where}: score {value!r} is not a finite number")
        return score
    if value not in task.labels:
        raise ValueError(f"{where}: label {value!r} is not one of {', '.join(task.labels)}")
    return task.labels.index(value)
