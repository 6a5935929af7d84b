"""`albert-keras finetune-glue`: the flags of `albert_keras.jobs.finetune_glue_job`, generated
from `FinetuneGlueSettings`, and its summary line."""

from __future__ import annotations

from albert_keras_cli.job_command import INIT_FROM_ALIASES, JobCommand
from albert_keras_settings import FinetuneGlueSettings
from albert_keras_settings.finetune_glue_settings import TASKS  # noqa: F401 (predict's, tests')

ALIASES = INIT_FROM_ALIASES


def _report(settings: FinetuneGlueSettings, summary: dict) -> None:
    """The dev scores."""
    from albert_keras.training.warmup_early_stopping import early_stop_note

    scores = ", ".join(f"{k} {v:.4f}" for k, v in summary["metrics"].items())
    print(
        f"{summary['task']} {summary['split']} ({summary['num_examples']} examples): {scores}"
        f" -> {settings.output_dir}{early_stop_note(summary)}"
    )


COMMAND = JobCommand(
    FinetuneGlueSettings,
    "albert_keras.jobs.finetune_glue_job:finetune_glue",
    _report,
    aliases=ALIASES,
)
add_arguments, check_arguments, run = COMMAND.add_arguments, COMMAND.check_arguments, COMMAND.run
