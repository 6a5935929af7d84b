"""`albert-keras pretrain`: the flags of `albert_keras.jobs.pretrain`, generated from
`PretrainSettings`, and its summary line."""

from __future__ import annotations

from albert_keras_cli.job_arguments import print_run
from albert_keras_cli.job_command import JobCommand
from albert_keras_settings import PretrainSettings


def _report(settings: PretrainSettings, summary: dict) -> None:
    print_run("pretrained", summary, settings.output_dir)


COMMAND = JobCommand(
    PretrainSettings,
    "albert_keras.jobs.pretrain_job:pretrain",
    _report,
    config_help="override a preset argument",
)
add_arguments, check_arguments, run = COMMAND.add_arguments, COMMAND.check_arguments, COMMAND.run
