"""GLUE's submission files: `index<TAB>prediction`, labels spelled as GLUE's."""

import csv

import numpy as np
import pytest

from albert_keras.glue import write_submission


def _read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.parametrize(
    "task,predictions,expected",
    [
        ("CoLA", [1, 0, 1], ["1", "0", "1"]),
        ("RTE", [0, 1, 1], ["entailment", "not_entailment", "not_entailment"]),
        ("MNLI", [2, 0, 1], ["neutral", "contradiction", "entailment"]),
        ("AX", [1, 1, 0], ["entailment", "entailment", "contradiction"]),
        ("STS-B", [4.25, 7.0, -1.0], ["4.250", "5.000", "0.000"]),
    ],
)
def test_files_are_well_formed(tmp_path, task, predictions, expected):
    path = write_submission(tmp_path / "sub" / f"{task}.tsv", task, ["10", "11", "12"],
                            np.array(predictions))  # fmt: skip
    rows = _read(path)
    assert rows[0] == ["index", "prediction"]
    assert rows[1:] == [[i, label] for i, label in zip(["10", "11", "12"], expected)]
    assert path.read_text().endswith("\n") and list(path.parent.iterdir()) == [path]  # no .tmp


def test_mismatched_lengths_and_unknown_classes_are_errors(tmp_path):
    with pytest.raises(ValueError, match=r"RTE.tsv: 2 ids but 3 predictions"):
        write_submission(tmp_path / "RTE.tsv", "RTE", ["0", "1"], np.array([0, 1, 0]))
    with pytest.raises(ValueError, match=r"MNLI-m.tsv: class ids outside 0..2"):
        write_submission(tmp_path / "MNLI-m.tsv", "MNLI", ["0"], np.array([3]))
    assert not list(tmp_path.iterdir())
