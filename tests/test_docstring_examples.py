"""Every docstring example of the packages but those of jobs, exports and distillation
(tests/test_docstring_examples_of_jobs.py), run as a doctest: see tests/docstring_runner.py."""

import pytest
from docstring_runner import (  # noqa: F401
    DOCTESTS,
    doctest_files,
    example_cases,
    is_a_job_example,
    run_example,
)

EXAMPLES = [test for test in DOCTESTS if not is_a_job_example(test)]


# make test-all only (issue 46): whole runs whose lines faster tests also run.
SLOW = {
    "albert_keras.glue.glue_dataset.glue_dataset",
    "albert_keras.glue.glue_evaluation.GlueEvaluation",
    "albert_keras.models.albert_classifier.AlbertClassifier",
    "albert_keras.training.periodic_training.PeriodicTraining",
}


@pytest.mark.parametrize("test", example_cases(EXAMPLES, SLOW))
def test_docstring_example(test, doctest_files, tmp_path, monkeypatch):  # noqa: F811
    run_example(test, doctest_files, tmp_path, monkeypatch)
