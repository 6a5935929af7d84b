"""The docstring examples of `albert_keras.jobs`, `.serving` and `.distill` (whole jobs,
SavedModels), run as doctests: see tests/docstring_runner.py. A file of their own so that
pytest-xdist runs them beside the other examples (tests/test_docstring_examples.py)."""

import pytest
from docstring_runner import DOCTESTS, doctest_files, is_a_job_example, run_example  # noqa: F401

EXAMPLES = [test for test in DOCTESTS if is_a_job_example(test)]


@pytest.mark.parametrize("test", EXAMPLES, ids=[test.name for test in EXAMPLES])
def test_docstring_example(test, doctest_files, tmp_path, monkeypatch):  # noqa: F811
    run_example(test, doctest_files, tmp_path, monkeypatch)
