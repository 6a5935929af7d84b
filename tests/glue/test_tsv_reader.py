"""GLUE's TSV layout: the five tasks of the shared fixture (written in GLUE's own layouts, see
tests/glue_data.py) and synthetic files for the other tasks."""

import csv
import json

import numpy as np
import pytest

from albert_keras.glue import GLUE_TASKS, glue_tsv_path, read_glue_tsv

SPLITS = [(t, s) for t in ("CoLA", "MRPC", "RTE", "SST-2", "STS-B") for s in ("dev", "train")]


@pytest.mark.parametrize("task,split", SPLITS)
def test_splits_have_the_written_row_and_label_counts(shared_data, task, split):
    # The counts the writer kept while writing, not what a reader found.
    rows, label_counts = json.loads((shared_data / "glue" / "COUNTS.json").read_text())[
        f"{task}/{split}"
    ]
    examples = read_glue_tsv(shared_data / "glue", task, split)
    assert len(examples) == rows
    assert len(examples.index) == len(examples.text_a) == len(examples.labels) == rows
    assert (examples.text_b is None) == (task in ("CoLA", "SST-2"))
    if label_counts is None:  # STS-B: similarity scores in [0, 5]
        assert examples.labels.dtype == np.float32
        assert examples.labels.min() == 0.0 and examples.labels.max() == 5.0
    else:
        assert examples.label_counts() == label_counts


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_rows_land_in_the_right_fields(shared_data):
    glue = shared_data / "glue"
    cola = read_glue_tsv(glue, "CoLA", "train")  # no header: the first line is an example
    first = _rows(glue / "CoLA" / "train.tsv")[0]
    assert cola.text_a[0] == first[3] and cola.labels[0] == int(first[1])
    assert cola.index[:2] == ["0", "1"]
    mrpc = read_glue_tsv(glue, "MRPC", "train")  # QUOTE_NONE: bare quotes stay in the text
    rows = _rows(glue / "MRPC" / "train.tsv")
    quoted = next(i for i, row in enumerate(rows[1:]) if '"' in row[3] or '"' in row[4])
    assert (mrpc.text_a[quoted], mrpc.text_b[quoted]) == (rows[quoted + 1][3], rows[quoted + 1][4])
    stsb = read_glue_tsv(glue, "STS-B", "dev")
    rows = _rows(glue / "STS-B" / "dev.tsv")
    assert (stsb.text_a[0], stsb.text_b[0]) == (rows[1][7], rows[1][8])
    assert stsb.labels[:2].tolist() == [5.0, 0.0] and stsb.index[0] == "0"
    rte = read_glue_tsv(glue, "RTE", "dev")
    assert rte.label_names[rte.labels[0]] == _rows(glue / "RTE" / "dev.tsv")[1][3]


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


MNLI_TRAIN_HEADER = (
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
    "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label"
)


STSB_HEADER = (
    "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
)


def _mnli_row(i, premise, hypothesis, *labels):
    return "\t".join(
        [str(i), "p", "q", "fiction", "(", "(", "(", "(", premise, hypothesis, *labels]
    )


def test_mnli_layouts_train_dev_and_test(tmp_path):
    _write(tmp_path / "MNLI/train.tsv", [MNLI_TRAIN_HEADER,
        _mnli_row(0, 'He said "no".', "He refused.", "entailment", "entailment"),
        _mnli_row(1, "A cat.", "A dog.", "neutral", "contradiction")])  # fmt: skip
    dev_header = MNLI_TRAIN_HEADER.replace("label1\t", "label1\tlabel2\tlabel3\tlabel4\tlabel5\t")
    _write(tmp_path / "MNLI/dev_mismatched.tsv", [dev_header,
        _mnli_row(7, "x", "y", "neutral", "neutral", "entailment", "neutral", "neutral", "neutral")])  # fmt: skip
    test_header = "\t".join(MNLI_TRAIN_HEADER.split("\t")[:10])
    _write(tmp_path / "MNLI/test_matched.tsv", [test_header, _mnli_row(0, "a", "b"),
        _mnli_row(1, "c", "d")])  # fmt: skip

    train = read_glue_tsv(tmp_path, "MNLI", "train")
    assert train.text_a == ['He said "no".', "A cat."] and train.text_b == ["He refused.", "A dog."]
    # gold_label (the last column), in the official order (contradiction, entailment, neutral)
    assert train.labels.tolist() == [1, 0]
    dev = read_glue_tsv(tmp_path, "MNLI", "dev_mismatched")
    assert dev.labels.tolist() == [2] and dev.index == ["7"]
    test = read_glue_tsv(tmp_path, "MNLI", "test_matched")
    assert test.labels is None and test.index == ["0", "1"] and test.text_b == ["b", "d"]


def test_test_files_of_single_sentence_and_qqp_tasks(tmp_path):
    _write(tmp_path / "CoLA/test.tsv", ["index\tsentence", "0\tJohn left.", "1\tLeft John."])
    cola = read_glue_tsv(tmp_path, "CoLA", "test")
    assert cola.text_a == ["John left.", "Left John."] and cola.labels is None
    _write(tmp_path / "QQP/dev.tsv", ["id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate",
                                      "12\t1\t2\tWhy?\tHow?\t0", "13\t3\t4\tA?\tA?\t1"])  # fmt: skip
    _write(tmp_path / "QQP/test.tsv", ["id\tquestion1\tquestion2", "0\tWho?\tWhom?"])
    qqp = read_glue_tsv(tmp_path, "QQP", "dev")
    assert qqp.index == ["12", "13"] and qqp.labels.tolist() == [0, 1] and qqp.text_b[1] == "A?"
    assert read_glue_tsv(tmp_path, "QQP", "test").text_a == ["Who?"]
    _write(tmp_path / "diagnostic/diagnostic.tsv", ["index\tsentence1\tsentence2", "0\ta\tb", ""])
    ax = read_glue_tsv(tmp_path, "AX", "test")  # a trailing blank line is no example
    assert len(ax) == 1 and ax.labels is None


def test_every_registered_split_has_a_path():
    for task in GLUE_TASKS.values():
        for split in task.splits:
            path = glue_tsv_path("/glue", task, split)
            assert path.parent.name == task.directory and path.suffix == ".tsv"


@pytest.mark.parametrize(
    "task,lines,message",
    [
        ("RTE", ["index\tsentence1\tsentence2\tlabel", "0\ta\tb"], r"RTE/train.tsv:2: expected 4 "),
        ("RTE", ["index\tsentence1\tsentence2\tlabel", "0\ta\tb\tmaybe"], r":2: label 'maybe' "),
        ("CoLA", ["src\t1\t\tok", "src\t2\t\tbad label"], r"CoLA/train.tsv:2: label '2'"),
        ("CoLA", ["src\t1\tok"], r"CoLA/train.tsv:1: expected 4 tab-separated fields, found 3"),
        ("STS-B", [STSB_HEADER, "\t".join(["0"] * 9 + ["high"])], r":2: score 'high'"),
        ("STS-B", [STSB_HEADER, "\t".join(["0"] * 9 + ["nan"])], r":2: score 'nan'"),
        # Outside GLUE's [0, 5]: these trained without a word.
        (
            "STS-B",
            [STSB_HEADER, "\t".join(["0"] * 10), "\t".join(["0"] * 9 + ["17.5"])],
            r"STS-B/train.tsv:3: score '17.5' is outside STS-B's \[0, 5\]$",
        ),
        (
            "STS-B",
            [STSB_HEADER, "\t".join(["0"] * 9 + ["-3"])],
            r"STS-B/train.tsv:2: score '-3' is outside STS-B's \[0, 5\]$",
        ),
    ],
)
def test_bad_rows_name_the_file_and_line(tmp_path, task, lines, message):
    _write(tmp_path / GLUE_TASKS[task].directory / "train.tsv", lines)
    with pytest.raises(ValueError, match=message):
        read_glue_tsv(tmp_path, task, "train")


def test_missing_and_unreadable_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no RTE folder"):
        read_glue_tsv(tmp_path, "RTE", "train")
    (tmp_path / "RTE").mkdir()
    with pytest.raises(FileNotFoundError, match=r"RTE/dev.tsv: not found"):
        read_glue_tsv(tmp_path, "RTE", "dev")
    (tmp_path / "RTE/train.tsv").write_bytes(b"index\tsentence1\tsentence2\tlabel\n0\t\xff\tb\tx\n")
    with pytest.raises(ValueError, match=r"RTE/train.tsv: not UTF-8 text"):
        read_glue_tsv(tmp_path, "RTE", "train")
    with pytest.raises(ValueError, match=r"RTE has no split 'dev_matched'"):
        read_glue_tsv(tmp_path, "RTE", "dev_matched")
    with pytest.raises(ValueError, match=r"unknown GLUE task 'SQuAD'"):
        read_glue_tsv(tmp_path, "SQuAD", "train")


@pytest.mark.parametrize(
    "task,lines,message",
    [
        # RTE without sentence2: read by position, the label became sentence B in every row.
        (
            "RTE",
            ["index\tsentence1\tlabel", "0\tA man sleeps.\tentailment"],
            (
                r"RTE/train.tsv:1: the header has no 'sentence2' column \(RTE train needs "
                r"sentence1, sentence2, label, index; found index, sentence1, label\)"
            ),
        ),
        # SST-2 without its label column: an IndexError before.
        ("SST-2", ["sentence", "a fine film"], r"SST-2/train.tsv:1: the header has no 'label' "),
        # No header at all: the first example is not taken for one.
        ("RTE", ["0\ta\tb\tentailment"], r"RTE/train.tsv:1: the header has no 'sentence1', "),
        ("QQP", ["id\tquestion1\tquestion2", "0\ta\tb"], r"QQP/train.tsv:1: .*'is_duplicate'"),
        ("MRPC", ["Quality\t#1 String", "1\ta"], r"MRPC/train.tsv:1: .*no '#2 String' column"),
        ("CoLA", ["src\t1\tok", "src\t1\t\tok"], r"CoLA/train.tsv:1: expected 4 .* found 3"),
        ("RTE", [], r"RTE/train.tsv:1: the header has no .* found an empty line"),
    ],
)
def test_a_file_lacking_a_needed_column_is_refused(tmp_path, task, lines, message):
    _write(tmp_path / GLUE_TASKS[task].directory / "train.tsv", lines)
    with pytest.raises(ValueError, match=message):
        read_glue_tsv(tmp_path, task, "train")


def test_columns_are_found_by_name_in_any_order(tmp_path):
    _write(tmp_path / "RTE/train.tsv", ["label\tsentence2\tindex\tsentence1",
                                        "entailment\tB.\t7\tA."])  # fmt: skip
    rte = read_glue_tsv(tmp_path, "RTE", "train")
    assert (rte.index, rte.text_a, rte.text_b, rte.labels.tolist()) == (["7"], ["A."], ["B."], [0])
