"""The user's own labelled files (CSV, TSV or JSON lines) as a GLUE-like task.

What `albert-keras finetune-glue --train_file ... --validation_file ...` reads, as Hugging
Face's `run_glue.py` reads its `--train_file`: the columns are named by flags, the class labels
are discovered from the training file and kept in a fixed sorted order (numeric when every
label is an integer, else as strings), so class id i is the i-th label name in every run on the
same file. Each file is one split of a `GlueTask` made by `user_task`, so fine-tuning, scoring
and prediction files go through the GLUE job's own steps.

The format follows the file's extension: `.csv` (comma-separated, a header row, the csv
module's quoting), `.tsv` (tab-separated, a header row, no quoting as GLUE's TSVs) and `.jsonl`
or `.json` (one JSON object a line). Written with the standard library's `csv` and `json`
rather than pandas so that every bad row is refused with its file and line.
"""

from __future__ import annotations

import csv
import json
import math
import os
import pathlib
from collections.abc import Iterator

import numpy as np

from albert_keras.glue.glue_examples import GlueExamples
from albert_keras.glue.glue_task import GlueTask, TsvLayout

TASK_TYPES = ("classification", "regression")
FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "jsonl"}
# As Hugging Face's run_glue.py: 128 pieces unless told (GLUE's own tasks keep the official 512).
USER_MAX_SEQ_LENGTH = 128
USER_EPOCHS = 3  # run_glue.py's num_train_epochs default
USER_WARMUP_SHARE = 0.1  # the official warmup_proportion


def user_file_format(path: str | os.PathLike) -> str:
    """`"csv"`, `"tsv"` or `"jsonl"`, from the file's extension (a ValueError otherwise)."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{path}: unknown file type {suffix!r}; use .csv, .tsv or .jsonl")
    return FORMATS[suffix]


def read_user_file(
    path: str | os.PathLike,
    *,
    text_column: str,
    text_pair_column: str | None = None,
    label_column: str | None = "label",
    task_type: str = "classification",
    label_names: tuple[str, ...] | None = None,
    split: str = "train",
) -> GlueExamples:
    """Reads one labelled (or unlabelled) file of the user's.

    Args:
        path: a `.csv`, `.tsv` or `.jsonl` file with a header row (or JSON objects).
        text_column: str. The column of the (first) text.
        text_pair_column: str or None. The column of the second text, for pair tasks.
        label_column: str or None. The label column; `None` reads the texts only (a test file).
        task_type: str. `"classification"` (labels of any spelling) or `"regression"` (a float).
        label_names: tuple of str or None. The training file's labels: a classification file
            read with them must use no other; `None` discovers them from this file (sorted).
        split: str. The split's name in the examples (`"train"`, `"dev"`, `"test"`).

    Returns:
        GlueExamples: labels as int32 class ids (positions in `label_names`) or float32 values;
        `index` the data row numbers from 0.

    Raises:
        ValueError: one line naming the file (and line) for a missing column, an empty file,
            a label not among `label_names`, a non-numeric regression value, a malformed row.

    Example:
    >>> _ = open("reviews.csv", "w").write("text,label\\ngreat film,pos\\ndull,neg\\n")
    >>> train = read_user_file("reviews.csv", text_column="text", label_column="label")
    >>> train.label_names, train.labels.tolist(), train.text_a
    (('neg', 'pos'), [1, 0], ['great film', 'dull'])
    """
    if task_type not in TASK_TYPES:
        raise ValueError(f"task_type={task_type!r}: expected one of {', '.join(TASK_TYPES)}")
    columns = [c for c in (text_column, text_pair_column, label_column) if c is not None]
    texts_a, texts_b, raw_labels, lines = [], [], [], []
    for line, row in _rows(path, columns):
        texts_a.append(_text(row[text_column], path, line, text_column))
        if text_pair_column is not None:
            texts_b.append(_text(row[text_pair_column], path, line, text_pair_column))
        if label_column is not None:
            raw_labels.append(row[label_column])
        lines.append(line)
    if not texts_a:
        raise ValueError(f"{path}: no examples (an empty file, or a header row alone)")
    labels = None
    if label_column is not None and task_type == "regression":
        labels = np.asarray(
            [_number(value, path, line, label_column) for value, line in zip(raw_labels, lines)],
            "float32",
        )
        label_names = None
    elif label_column is not None:
        spelled = [
            _label(value, path, line, label_column) for value, line in zip(raw_labels, lines)
        ]
        if label_names is None:
            label_names = sorted_labels(spelled)
        ids = {name: i for i, name in enumerate(label_names)}
        for value, line in zip(spelled, lines):
            if value not in ids:
                raise ValueError(
                    f"{path}:{line}: label {value!r} is not in the training file's labels "
                    f"({', '.join(label_names)})"
                )
        labels = np.asarray([ids[value] for value in spelled], "int32")
    return GlueExamples(
        task="custom",
        split=split,
        source=str(path),
        index=[str(i) for i in range(len(texts_a))],
        text_a=texts_a,
        text_b=texts_b if text_pair_column is not None else None,
        labels=labels,
        label_names=None if task_type == "regression" else label_names,
    )


def sorted_labels(labels) -> tuple[str, ...]:
    """The distinct labels in their fixed order: by value when all are integers, else as text.

    Example:
    >>> sorted_labels(["10", "9", "10", "-1"]), sorted_labels(["pos", "neg", "neutral"])
    (('-1', '9', '10'), ('neg', 'neutral', 'pos'))
    """
    distinct = set(labels)
    try:
        return tuple(sorted(distinct, key=int))
    except ValueError:
        return tuple(sorted(distinct))


def user_task(
    label_names: tuple[str, ...] | None,
    *,
    files: dict[str, str],
    text_column: str,
    text_pair_column: str | None,
    label_column: str,
    train_examples: int,
    name: str = "custom",
) -> GlueTask:
    """The `GlueTask` of the user's files: its labels, metrics and fine-tuning defaults.

    Classification is scored by accuracy (main) and macro F1, regression (`label_names=None`)
    by Pearson (main) and Spearman. The defaults are Hugging Face run_glue.py's (3 epochs,
    batch 32, learning rate 2e-5, 128 pieces) with the official 10% warmup; the flags override
    them as for GLUE's tasks.

    Args:
        label_names: tuple of str (classification) or None (regression).
        files: dict. Split (`"train"`, `"dev"`, optional `"test"`) -> the file's path.
        text_column, text_pair_column, label_column: the columns read.
        train_examples: int. Rows in the training file (sets the 3 epochs' steps).
        name: str. The task's name in metrics.json and the prediction files' stem.

    Example:
    >>> task = user_task(("neg", "pos"), files={"train": "t.csv", "dev": "d.csv"},
    ...                  text_column="text", text_pair_column=None, label_column="label",
    ...                  train_examples=640)
    >>> task.metrics, task.num_classes, task.train_steps, task.warmup_steps
    (('accuracy', 'macro_f1'), 2, 60, 6)
    """
    steps = max(1, math.ceil(USER_EPOCHS * train_examples / 32))
    layouts = {
        split: TsvLayout(
            str(path), text_column, text_pair_column, None if split == "test" else label_column
        )
        for split, path in files.items()
    }
    regression = label_names is None
    return GlueTask(
        name=name,
        directory="",
        splits=layouts,
        labels=None if regression else tuple(label_names),
        metrics=("pearson", "spearman") if regression else ("accuracy", "macro_f1"),
        dev_splits=("dev",),
        test_splits={"test": name},
        learning_rate=2e-5,
        batch_size=32,
        train_steps=steps,
        warmup_steps=round(USER_WARMUP_SHARE * steps),
        eval_every=100,
        max_seq_length=USER_MAX_SEQ_LENGTH,
    )


# === Reading rows ===


def _rows(path, columns: list[str]) -> Iterator[tuple[int, dict]]:
    """`(line number, {column: value})` for each data row, the columns checked present."""
    kind = user_file_format(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    try:
        # utf-8-sig: a byte-order mark (spreadsheets write one) is not part of the header.
        with open(path, encoding="utf-8-sig", newline="") as f:
            if kind == "jsonl":
                yield from _json_rows(f, path, columns)
            else:
                yield from _delimited_rows(f, path, columns, kind)
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None


def _delimited_rows(f, path, columns, kind) -> Iterator[tuple[int, dict]]:
    if kind == "tsv":
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
    else:
        reader = csv.reader(f)
    try:
        header = next(reader, None)
        if header is None or not any(field.strip() for field in header):
            raise ValueError(f"{path}: no examples (an empty file)")
        header = [field.strip() for field in header]
        missing = [c for c in columns if c not in header]
        if missing:
            raise ValueError(
                f"{path}:1: no column {', '.join(repr(c) for c in missing)} in the header "
                f"(found {', '.join(header)})"
            )
        positions = {c: header.index(c) for c in columns}
        for row in reader:
            if not row:  # a blank line holds no example
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{path}:{reader.line_num}: {len(row)} fields, but the header has {len(header)}"
                )
            yield reader.line_num, {c: row[i] for c, i in positions.items()}
    except csv.Error as error:
        raise ValueError(f"{path}:{reader.line_num}: {error}") from None


def _json_rows(f, path, columns) -> Iterator[tuple[int, dict]]:
    for number, line in enumerate(f, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(  # noqa: TRY004 (bad file content: the CLI's one-line ValueError)
                f"{path}:{number}: expected a JSON object, found {type(row).__name__}"
            )
        missing = [c for c in columns if c not in row]
        if missing:
            raise ValueError(
                f"{path}:{number}: no field {', '.join(repr(c) for c in missing)} "
                f"(found {', '.join(row) or 'none'})"
            )
        yield number, row


def _text(value, path, line, column) -> str:
    if not isinstance(value, str):
        raise ValueError(  # noqa: TRY004 (bad file content: the CLI's one-line ValueError)
            f"{path}:{line}: {column!r} is {type(value).__name__}, not text"
        )
    return value


def _label(value, path, line, column) -> str:
    """A class label as text: strings as written, JSON integers as their digits."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"{path}:{line}: empty label in column {column!r}")
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{path}:{line}: label {value!r} in {column!r} is neither text nor an integer")


def _number(value, path, line, column) -> float:
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ValueError(f"{path}:{line}: {value!r} in column {column!r} is not a number")
    return number
