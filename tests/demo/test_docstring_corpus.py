"""The demo's embedded corpus and task: real prose from installed docstrings, no download."""

import pathlib

import pytest

from albert_keras.demo.docstring_corpus import (
    docstring_paragraphs,
    docstrings,
    extract_docstring_corpus,
    reference_topics,
)
from albert_keras.demo.source_task import write_source_task


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    return out, extract_docstring_corpus(
        out,
        sources=("stdlib", "keras", "reference"),
        max_megabytes_per_source=0.15,
        heldout_every=5,
    )


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_corpus_is_prose_split_into_train_and_heldout(corpus):
    _out, summary = corpus
    assert set(summary["sources"]) == {"stdlib", "keras", "reference"}
    for split in ("train", "heldout"):
        for path in summary[f"{split}_files"]:
            text = pathlib.Path(path).read_text(encoding="utf-8")
            paragraphs = [p for p in text.split("\n\n") if p.strip()]
            assert paragraphs, path
            assert not any(p.lstrip().startswith(">>>") for p in paragraphs)
            assert all("\n" not in p.strip("\n") for p in paragraphs)  # one line per docstring
    train = set(pathlib.Path(summary["train_files"][0]).read_text().split("\n\n"))
    heldout = set(pathlib.Path(summary["heldout_files"][0]).read_text().split("\n\n"))
    assert not (train & heldout) - {"", "\n"}  # no paragraph is both trained on and held out
    assert summary["sources"]["stdlib"]["megabytes"] >= 0.15


def test_code_and_parameter_lists_are_dropped(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        'def f(x):\n    """Adds one to the number that it is given and returns the result.\n\n'
        "    Args:\n        x: int. The number.\n\n"
        '    >>> f(1)\n    2\n    """\n'
    )
    assert docstring_paragraphs(source) == [
        "Adds one to the number that it is given and returns the result."
    ]


def test_one_line_per_docstring_its_prose_paragraphs_joined(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        '"""A module that holds one function and nothing else worth a mention here."""\n'
        'def f(x):\n    """Adds one to the number that it is given and returns the result.\n\n'
        "    The number may be negative; the result is then closer to zero than it was.\n"
        "    Nothing else changes.\n\n"
        "    Args:\n        x: int. The number.\n\n"
        '    >>> f(1)\n    2\n    """\n'
    )
    assert docstrings(source) == [
        "A module that holds one function and nothing else worth a mention here.",
        (
            "Adds one to the number that it is given and returns the result. The number may be "
            "negative; the result is then closer to zero than it was. Nothing else changes."
        ),
    ]


def test_reference_topics_are_prose_without_grammar_or_code():
    topics = reference_topics()
    assert len(topics) > 50
    text = "\n".join(topics)
    assert "An assignment statement evaluates the expression list (remember that this" in text
    assert "::=" not in text  # the grammar rules are indented blocks, dropped
    assert all("\n" not in topic for topic in topics)


def test_source_task_is_balanced_and_heldout(corpus, tmp_path):
    out, _ = corpus
    task = write_source_task(out, tmp_path / "task", train_per_class=20, dev_per_class=5)
    assert task.labels == ("keras", "reference", "stdlib")
    train = (tmp_path / "task" / "train.tsv").read_text().splitlines()
    dev = (tmp_path / "task" / "dev.tsv").read_text().splitlines()
    assert train[0] == "sentence\tlabel" and len(train) == 1 + 3 * 20
    labels = [line.rsplit("\t", 1)[1] for line in dev[1:]]
    assert sorted(set(labels)) == list(task.labels) and len(labels) == 15
    assert not set(train[1:]) & set(dev[1:])
