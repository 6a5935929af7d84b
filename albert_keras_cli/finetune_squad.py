"""`albert-keras finetune-squad`: the flags of `albert_keras.jobs.finetune_squad_job`, generated
from `FinetuneSquadSettings`, and its summary line."""

from __future__ import annotations

from albert_keras_cli.job_command import INIT_FROM_ALIASES, JobCommand
from albert_keras_settings import FinetuneSquadSettings

ALIASES = INIT_FROM_ALIASES


def _report(settings: FinetuneSquadSettings, summary: dict) -> None:
    """The scores on the predict file."""
    scores = ", ".join(
        f"{k} {v:.2f}" for k, v in summary.get("metrics", {}).items() if isinstance(v, float)
    )
    print(
        f"SQuAD {settings.version}: {summary['predict_examples']} questions {scores} "
        f"-> {settings.output_dir}"
    )


COMMAND = JobCommand(
    FinetuneSquadSettings,
    "albert_keras.jobs.finetune_squad_job:finetune_squad",
    _report,
    aliases=ALIASES,
)
add_arguments, check_arguments, run = COMMAND.add_arguments, COMMAND.check_arguments, COMMAND.run
