"""The demo's embedded corpus and task: real prose from installed docstrings, no download."""

import pathlib

import pytest

from albert_keras.demo.docstring_corpus import docstring_paragraphs, extract_docstring_corpus
from albert_keras.demo.source_task import write_source_task


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    return out, extract_docstring_corpus(
        out, sources=("stdlib", "keras", "numpy"), max_megabytes_per_source=0.15, heldout_every=5
    )


def test_corpus_is_prose_split_into_train_and_heldout(corpus):
    _out, summary = corpus
    assert set(summary["sources"]) == {"stdlib", "keras", "numpy"}
    for split in ("train", "heldout"):
        for path in summary[f"{split}_files"]:
            text = pathlib.Path(path).read_text(encoding="utf-8")
            paragraphs = [p for p in text.split("\n\n") if p.strip()]
            assert paragraphs, path
            assert not any(p.lstrip().startswith(">>>") for p in paragraphs)
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


def test_source_task_is_balanced_and_heldout(corpus, tmp_path):
    out, _ = corpus
    task = write_source_task(out, tmp_path / "task", train_per_class=20, dev_per_class=5)
    assert task.labels == ("keras", "numpy", "stdlib")
    train = (tmp_path / "task" / "train.tsv").read_text().splitlines()
    dev = (tmp_path / "task" / "dev.tsv").read_text().splitlines()
    assert train[0] == "sentence\tlabel" and len(train) == 1 + 3 * 20
    labels = [line.rsplit("\t", 1)[1] for line in dev[1:]]
    assert sorted(set(labels)) == list(task.labels) and len(labels) == 15
    assert not set(train[1:]) & set(dev[1:])
