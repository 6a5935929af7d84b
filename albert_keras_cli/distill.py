"""`albert-keras distill`: the flags of `albert_keras.distill.distill`, generated from
`DistillSettings`, and its summary line."""

from __future__ import annotations

import argparse

from albert_keras_cli.config_flags import add_config_flag, parse_config_flags
from albert_keras_cli.job_arguments import print_run
from albert_keras_settings import DistillSettings
from albert_keras_settings.settings_flags import add_settings_flags, settings_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `albert-keras distill` flags: one per `DistillSettings` field, and `--config`."""
    add_settings_flags(parser, DistillSettings)
    add_config_flag(parser, "override a student backbone argument")


def check_arguments(args: argparse.Namespace) -> None:
    """Makes the settings before TensorFlow loads: a bad value is one line in a second."""
    settings_from_args(DistillSettings, args, config=parse_config_flags(args.config))


def run(args: argparse.Namespace) -> int:
    """Runs `distill` with the parsed flags; prints where the outputs are."""
    from albert_keras.jobs.distill_job import distill

    settings = settings_from_args(DistillSettings, args, config=parse_config_flags(args.config))
    print_run("distilled", distill(settings), settings.output_dir)
    return 0
