"""`albert-keras predict`'s input and output files: bytes in (a file or stdin), lines decoded
with one-line errors, the output written atomically. Shared by `predict` and `predict_squad`."""

from __future__ import annotations

import json
import os
import sys


def read_bytes(path: str | None) -> bytes:
    """The bytes of a file, or of stdin for None or '-'."""
    if path in (None, "-"):
        return sys.stdin.buffer.read()
    with open(path, "rb") as file:
        return file.read()


def decoded_lines(data: bytes, name: str):
    """`(line number, text)` of each line; one that is not UTF-8 is a ValueError naming it."""
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"{name} line {number}: not UTF-8 ({error.reason})") from None


def write_output(path: str, text: str) -> None:
    """Writes `text` to `path` atomically, making its folder."""
    from albert_keras_contracts import atomic_write

    # A new folder for the output is made, as `--output_dir` folders are; nothing else is touched.
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write.write_text(path, text)


def with_inputs(records: list, **inputs) -> list:
    """Each record with the input it answers first (`inputs`: name -> one value per record;
    None: left out), so a JSON line says which line it answers.

    Example:
    >>> with_inputs([{"label": 1}], text=["a film I loved"], text_pair=None)
    [{'text': 'a film I loved', 'label': 1}]
    """
    given = {name: values for name, values in inputs.items() if values is not None}
    return [
        {**{name: values[i] for name, values in given.items()}, **record}
        for i, record in enumerate(records)
    ]


def emit_json_lines(records: list, output: str | None, noun: str) -> None:
    """One JSON line per record: into `output` (atomically, and a count on stderr), else stdout.

    Example:
    >>> emit_json_lines([{"label": 1}], None, "predictions")
    {"label": 1}
    """
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    if output:
        write_output(output, lines)
        print(f"{len(records)} {noun} -> {output}", file=sys.stderr)
    else:
        sys.stdout.write(lines)
