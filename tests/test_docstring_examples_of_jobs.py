"""The docstring examples of `albert_keras.jobs`, `.serving` and `.distill` (whole jobs,
SavedModels), run as doctests: see tests/docstring_runner.py. A file of their own so that
pytest-xdist runs them beside the other examples (tests/test_docstring_examples.py)."""

import pytest
from docstring_runner import (  # noqa: F401
    DOCTESTS,
    doctest_files,
    example_cases,
    is_a_job_example,
    run_example,
)

EXAMPLES = [test for test in DOCTESTS if is_a_job_example(test)]


# make test-all only (issue 46): whole runs whose lines faster tests also run.
SLOW = {
    "albert_keras.distill.albert_distiller.AlbertDistiller",  # tests/distill/ fit it
    "albert_keras.jobs.distill_job.distill",
    "albert_keras.jobs.finetune_choice_job.finetune_choice",  # test_finetune_tokens_and_choice
    "albert_keras.jobs.finetune_glue_job.finetune_glue",
    "albert_keras.jobs.finetune_tokens_job.finetune_tokens",
    "albert_keras.jobs.pretrain_job.pretrain",
    "albert_keras.serving.export_saved_model.export_saved_model",
    # 40 s: a SQuAD answerer's export, as test_question_answering_export's slow tests make.
    "albert_keras.serving.question_answering_export.export_question_answerer",
    "albert_keras.serving.task_exports.export_multiple_choice",
    "albert_keras.serving.task_exports.export_token_classifier",
    "albert_keras.serving.warmup_requests.warm_up",
}


@pytest.mark.parametrize("test", example_cases(EXAMPLES, SLOW))
def test_docstring_example(test, doctest_files, tmp_path, monkeypatch):  # noqa: F811
    run_example(test, doctest_files, tmp_path, monkeypatch)
