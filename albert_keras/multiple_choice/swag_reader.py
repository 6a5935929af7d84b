"""SWAG-style CSV: `sent1`, `sent2`, `ending0` ... `ending3`, `label`."""

from __future__ import annotations

import csv
import pathlib

from albert_keras.multiple_choice.choice_examples import ChoiceExamples

_COLUMNS = ("sent1", "sent2")


def read_swag(path: str | pathlib.Path) -> ChoiceExamples:
    """Reads a SWAG-style CSV file (SWAG's `train.csv` / `val.csv`, HellaSwag-like files).

    Each row pairs `sent1` with `sent2 + " " + ending_j` for every `ending0`, `ending1`, ...
    column (as Hugging Face's `run_swag.py`); `label` is the right ending's index (a file
    without a `label` column, SWAG's `test.csv`, is read for prediction).

    Raises:
        FileNotFoundError; ValueError (one line naming file and line): a missing column, no
        `ending0` column, a label that is not the index of an ending.

    Example:
    >>> rows = ["sent1,sent2,ending0,ending1,label",
    ...         "She opens the door.,She,walks in.,flies away.,0"]
    >>> _ = open("swag.csv", "w").write("\\n".join(rows) + "\\n")
    >>> examples = read_swag("swag.csv")
    >>> examples.contexts, examples.pairs, examples.labels
    (['She opens the door.'], [['She walks in.', 'She flies away.']], [0])
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    examples = ChoiceExamples(str(path))
    try:
        with path.open(encoding="utf-8", newline="") as file:
            reader = csv.DictReader(file)
            header = reader.fieldnames or []
            missing = [c for c in _COLUMNS if c not in header]
            endings = [f"ending{i}" for i in range(len(header)) if f"ending{i}" in header]
            if missing or not endings:
                missing += [] if endings else ["ending0"]
                raise ValueError(
                    f"{path}:1: no column {', '.join(missing)} (header: {', '.join(header)})"
                )
            for row in reader:
                where = f"{path}:{reader.line_num}"
                label = _label(row.get("label"), len(endings), where)
                examples.ids.append(
                    row.get("fold-ind") or row.get("id") or f"{path.name}:{reader.line_num}"
                )
                examples.contexts.append(row["sent1"] or "")
                header_text = row["sent2"] or ""
                options = [row[name] or "" for name in endings]
                examples.pairs.append([f"{header_text} {option}".strip() for option in options])
                examples.options.append(options)
                examples.labels.append(label)
                examples.where.append(where)
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason})") from None
    except csv.Error as error:
        raise ValueError(f"{path}: not CSV ({error})") from None
    return examples.check()


def _label(value, num_endings: int, where: str):
    if value is None or value == "":
        return None
    try:
        label = int(value)
    except ValueError:
        label = -1
    if not 0 <= label < num_endings:
        raise ValueError(
            f"{where}: label {value!r} is not an ending's index (0 to {num_endings - 1})"
        )
    return label
