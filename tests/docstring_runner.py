"""The runner of every docstring example of the packages as a doctest, for
tests/test_docstring_examples.py and tests/test_docstring_examples_of_jobs.py (two files, so
pytest-xdist's `--dist loadfile` can run the two halves on two workers at once).

One case per docstring, named after it (`albert_keras.layers.validation.check_positive`). Each
runs in a fresh folder holding the files the examples name: `corpus/*.txt` (a small text corpus),
`spm.model` (a SentencePiece vocabulary trained on it by `pipelines.train_vocab`),
`records/*.tfrecord` (pretraining records written from both by
`pipelines.write_pretraining_data`, 32 tokens), `albert.keras` (an untrained `AlbertPretrainer`
of 2 layers, H 16, E 8, on that vocabulary), from tests/data ALBERT's release vocabulary as
`30k-clean.model` and two SQuAD 2.0 dev articles as `squad-dev.json`, and, beside the dev
checkout, GLUE's own files from ../shared/data as `glue_data/` (the examples show their
counts; GLUE's licences keep them out of the project): a docstring naming `glue_data` skips
when ../shared/data is absent.
Besides the module's own names, examples may use `np`, `tf`, `keras` and `os` unimported, as in
keras-hub's docstring tests.
"""

import doctest
import importlib
import os
import pathlib
import pkgutil
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

SHARED_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"  # as conftest.py
TEST_DATA = pathlib.Path(__file__).resolve().parent / "data"  # committed, in every checkout
PACKAGES = (
    "albert_keras",
    "albert_keras_contracts",
    "pipelines",
    "albert_keras_cli",
    "albert_keras_settings",
)
OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# Names an example may use for real data (linked into its folder; skipped when absent).
SHARED_FILES = {
    "30k-clean.model": TEST_DATA / "vocab" / "30k-clean.reconstructed.model",
    "glue_data": SHARED_DATA / "glue",
    "squad-dev.json": TEST_DATA / "squad" / "squad-v2.0-dev-part.json",
}

# Two files of twelve paragraphs (a blank line between them), four plain sentences each.
_SUBJECTS = ("the cat", "a dog", "the old bird", "we", "my friend", "the children")
_VERBS = ("sat on", "ran across", "looked at", "walked to", "liked", "found")
_OBJECTS = ("the mat", "the green park", "a tall tree", "the blue sky", "the river", "a house")


def _corpus_text(file_index: int) -> str:
    paragraphs = []
    for p in range(12):
        sentences = []
        for s in range(4):
            k = 7 * file_index + 5 * p + 3 * s
            sentence = f"{_SUBJECTS[k % 6]} {_VERBS[(k // 6 + s) % 6]} {_OBJECTS[(k + p) % 6]}."
            sentences.append(sentence[0].upper() + sentence[1:])
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


def _module_names():
    names = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            if info.name.rsplit(".", 1)[-1] != "__main__":  # importing one runs the command
                names.append(info.name)
    return sorted(names)


def _docstring_tests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = []
    for name in _module_names():
        module = importlib.import_module(name)
        tests.extend(test for test in finder.find(module) if test.examples)
    return sorted(tests, key=lambda test: test.name)


DOCTESTS = _docstring_tests()
# The examples that run whole jobs or write SavedModels, in a file of their own.
JOB_MODULES = ("albert_keras.jobs.", "albert_keras.serving.", "albert_keras.distill.")


def example_cases(examples: list, slow: set) -> list:
    """`examples` as pytest cases, those named in `slow` marked slow (a name that is not an
    example is an error: a renamed example would otherwise run in `make test` unnoticed)."""
    unknown = slow - {test.name for test in examples}
    assert not unknown, f"not docstring examples: {sorted(unknown)}"
    return [
        pytest.param(test, marks=[pytest.mark.slow] if test.name in slow else [], id=test.name)
        for test in examples
    ]


def is_a_job_example(test) -> bool:
    return test.name.startswith(JOB_MODULES)


@pytest.fixture(scope="session")
def doctest_files(tmp_path_factory):
    """The files the examples name, made once: copied into each example's own folder."""
    from albert_keras.models import AlbertBackbone, AlbertPretrainer
    from pipelines.pretraining_data import write_pretraining_data
    from pipelines.tokenization import spm_vocabulary_size
    from pipelines.train_vocab import train_vocab

    root = tmp_path_factory.mktemp("doctest_files")
    (root / "corpus").mkdir()
    for index, name in enumerate(("a.txt", "b.txt")):
        (root / "corpus" / name).write_text(_corpus_text(index))
    train_vocab(str(root / "corpus" / "*.txt"), str(root / "spm"), vocab_size=50)
    os.remove(root / "spm.summary.json")
    vocabulary_size = spm_vocabulary_size(str(root / "spm.model"))
    write_pretraining_data(
        input=str(root / "corpus" / "*.txt"),
        spm_model=str(root / "spm.model"),
        output_dir=str(root / "records"),
        max_seq_length=32,
        max_predictions_per_seq=5,
        dupe_factor=2,
        num_shards=2,
        seed=1,
        progress=False,
    )
    keras.utils.set_random_seed(1)
    backbone = AlbertBackbone(
        vocabulary_size,
        num_layers=2,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        embedding_dim=8,
        max_sequence_length=32,
    )
    AlbertPretrainer(backbone).save(root / "albert.keras")
    return root


def run_example(test, doctest_files, tmp_path, monkeypatch):
    """Runs one docstring's examples in `tmp_path` with the files; fails with the report."""
    source = "\n".join(example.source for example in test.examples)
    for name, target in SHARED_FILES.items():
        if name in source:
            if not target.exists():
                pytest.skip(f"needs {target} (only present beside the dev checkout)")
            os.symlink(target, tmp_path / name)
    shutil.copytree(doctest_files, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    # As keras-hub's docstring tests: `np`, `tf`, `keras` and `os` as if imported, beside the
    # module's own names. A copy: the runner clears the names it ran with.
    globs = {"np": np, "tf": tf, "keras": keras, "os": os, **test.globs}
    test = doctest.DocTest(
        test.examples, globs, test.name, test.filename, test.lineno, test.docstring
    )
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    report = []
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
