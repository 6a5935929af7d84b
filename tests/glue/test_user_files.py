"""The user's own CSV / TSV / JSON lines files: columns, discovered labels, one-line errors."""

import json

import numpy as np
import pytest

from albert_keras.glue.glue_metrics import glue_metrics
from albert_keras.glue.user_files import read_user_file, sorted_labels, user_task


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_with_quoted_commas_and_string_labels(tmp_path):
    path = _write(
        tmp_path / "train.csv",
        'id,review,stars\n1,"great, truly",pos\n2,dull,neg\n\n3,"so-so ""film""",neutral\n',
    )
    train = read_user_file(path, text_column="review", label_column="stars")
    assert train.text_a == ["great, truly", "dull", 'so-so "film"'] and train.text_b is None
    assert train.label_names == ("neg", "neutral", "pos")
    assert train.labels.tolist() == [2, 0, 1] and train.labels.dtype == np.int32
    assert train.index == ["0", "1", "2"]


def test_tsv_pairs_keep_bare_quotes(tmp_path):
    path = _write(tmp_path / "dev.tsv", 'a\tb\tlabel\nhe said "hi\tok\t1\nx\ty\t0\n')
    dev = read_user_file(path, text_column="a", text_pair_column="b")
    assert dev.text_a == ['he said "hi', "x"] and dev.text_b == ["ok", "y"]
    assert dev.label_names == ("0", "1") and dev.labels.tolist() == [1, 0]


def test_jsonl_integer_labels_sort_by_value(tmp_path):
    rows = [{"text": "a", "label": 10}, {"text": "b", "label": 9}, {"text": "c", "label": -1}]
    path = _write(tmp_path / "t.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    train = read_user_file(path, text_column="text")
    assert train.label_names == ("-1", "9", "10") and train.labels.tolist() == [2, 1, 0]
    # Validation read with the training file's labels keeps their ids.
    dev = read_user_file(
        _write(tmp_path / "d.jsonl", '{"text": "z", "label": 9}\n'),
        text_column="text",
        label_names=train.label_names,
    )
    assert dev.labels.tolist() == [1]


def test_regression_and_test_file_without_labels(tmp_path):
    path = _write(tmp_path / "r.csv", "s,score\nx,0.5\ny,4\n")
    scores = read_user_file(path, text_column="s", label_column="score", task_type="regression")
    assert scores.labels.tolist() == [0.5, 4.0] and scores.label_names is None
    test = read_user_file(path, text_column="s", label_column=None)
    assert test.labels is None and test.text_a == ["x", "y"]


def test_sorted_labels_is_a_fixed_order():
    assert sorted_labels(["b", "a", "b"]) == ("a", "b")
    assert sorted_labels(["2", "10", "1"]) == ("1", "2", "10")
    assert sorted_labels(["1", "x"]) == ("1", "x")


@pytest.mark.parametrize(
    "name,text,kwargs,message",
    [
        (
            "t.csv",
            "text,lab\nx,1\n",
            {},
            "t.csv:1: no column 'label' in the header (found text, lab)",
        ),
        (
            "t.jsonl",
            '{"text": "x", "label": 1}\n{"text": "y"}\n',
            {},
            "t.jsonl:2: no field 'label'",
        ),
        ("t.csv", "", {}, "t.csv: no examples"),
        ("t.csv", "text,label\n", {}, "t.csv: no examples"),
        ("t.jsonl", "\n", {}, "t.jsonl: no examples"),
        (
            "t.csv",
            "text,label\nx,1\ny,many\n",
            {"task_type": "regression"},
            "t.csv:3: 'many' in column 'label' is not a number",
        ),
        ("t.csv", "text,label\nx,1\ny,inf\n", {"task_type": "regression"}, "t.csv:3: 'inf'"),
        (
            "t.csv",
            "text,label\nx,pos\ny,maybe\n",
            {"label_names": ("neg", "pos")},
            "t.csv:3: label 'maybe' is not in the training file's labels (neg, pos)",
        ),
        ("t.tsv", "text\tlabel\nx\t1\textra\n", {}, "t.tsv:2: 3 fields, but the header has 2"),
        ("t.jsonl", '{"text": "x", "label": 1.5}\n', {}, "t.jsonl:1: label 1.5 in 'label'"),
        ("t.jsonl", "[1]\n", {}, "t.jsonl:1: expected a JSON object"),
        ("t.jsonl", '{"text": 3, "label": 1}\n', {}, "t.jsonl:1: 'text' is int, not text"),
        ("t.txt", "x\n", {}, "t.txt: unknown file type '.txt'"),
    ],
)
def test_bad_files_are_one_line_naming_file_and_line(tmp_path, name, text, kwargs, message):
    path = _write(tmp_path / name, text)
    with pytest.raises(ValueError) as error:
        read_user_file(path, text_column="text", **kwargs)
    assert str(error.value).startswith(f"{tmp_path}/{message}")
    assert "\n" not in str(error.value)


def test_user_task_metrics():
    task = user_task(
        ("a", "b", "c"), files={"train": "t.csv", "dev": "d.csv"}, text_column="text",
        text_pair_column=None, label_column="label", train_examples=100,
    )  # fmt: skip
    assert task.metrics == ("accuracy", "macro_f1") and task.train_steps == 10
    scores = glue_metrics(task, [0, 1, 2, 2], [0, 1, 1, 2])
    # Macro F1: class a 1.0, b 2/3, c 2/3.
    assert scores == pytest.approx({"accuracy": 0.75, "macro_f1": (1 + 2 / 3 + 2 / 3) / 3})
    assert task.submission_labels(np.array([2, 0])) == ["c", "a"]
    regression = user_task(
        None, files={"train": "t.csv", "dev": "d.csv"}, text_column="text",
        text_pair_column=None, label_column="label", train_examples=1,
    )  # fmt: skip
    assert regression.metrics == ("pearson", "spearman") and regression.is_regression
    # No score range: predictions are written as predicted, not clipped.
    assert regression.submission_labels(np.array([-1.5, 7.0])) == ["-1.500", "7.000"]
