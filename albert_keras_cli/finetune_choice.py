"""`albert-keras finetune-choice`: the flags of `albert_keras.jobs.finetune_choice_job`,
generated from `FinetuneChoiceSettings`, and its summary line."""

from __future__ import annotations

from albert_keras_cli.job_command import JobCommand
from albert_keras_settings.finetune_choice_settings import FinetuneChoiceSettings


def _report(settings: FinetuneChoiceSettings, summary: dict) -> None:
    """The validation accuracy."""
    print(
        f"multiple choice, validation ({summary['num_examples']} examples, "
        f"{summary['num_options']} options): accuracy {summary['metrics']['accuracy']:.4f}"
        f" -> {settings.output_dir}"
    )


COMMAND = JobCommand(
    FinetuneChoiceSettings, "albert_keras.jobs.finetune_choice_job:finetune_choice", _report
)
add_arguments, check_arguments, run = COMMAND.add_arguments, COMMAND.check_arguments, COMMAND.run
