"""`albert-keras distill`: the flags of `albert_keras.jobs.distill`, generated from
`DistillSettings`, and its summary line."""

from __future__ import annotations

from albert_keras_cli.job_arguments import print_run
from albert_keras_cli.job_command import JobCommand
from albert_keras_settings import DistillSettings


def _report(settings: DistillSettings, summary: dict) -> None:
    print_run("distilled", summary, settings.output_dir)


COMMAND = JobCommand(
    DistillSettings,
    "albert_keras.jobs.distill_job:distill",
    _report,
    config_help="override a student backbone argument",
)
add_arguments, check_arguments, run = COMMAND.add_arguments, COMMAND.check_arguments, COMMAND.run
