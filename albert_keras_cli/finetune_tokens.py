"""`albert-keras finetune-tokens`: the flags of `albert_keras.jobs.finetune_tokens_job`,
generated from `FinetuneTokensSettings`, and its summary line."""

from __future__ import annotations

from albert_keras_cli.job_command import JobCommand
from albert_keras_settings.finetune_tokens_settings import FinetuneTokensSettings


def _report(settings: FinetuneTokensSettings, summary: dict) -> None:
    """The validation scores."""
    scores = ", ".join(f"{k} {v:.4f}" for k, v in summary["metrics"].items())
    print(
        f"token tagging, validation ({summary['num_examples']} sentences, "
        f"{len(summary['labels'])} tags): {scores} -> {settings.output_dir}"
    )


COMMAND = JobCommand(
    FinetuneTokensSettings, "albert_keras.jobs.finetune_tokens_job:finetune_tokens", _report
)
add_arguments, check_arguments, run = COMMAND.add_arguments, COMMAND.check_arguments, COMMAND.run
