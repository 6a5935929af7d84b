"""`JobCommand`: the command line of a job, its flags generated from its settings class."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from albert_keras_cli.config_flags import add_config_flag, parse_config_flags
from albert_keras_settings.settings_flags import add_settings_flags, settings_from_args

# The fine-tuning commands' `--init_from`, as `pretrain` and `distill` name "start from these
# weights"; `--model`, their name for it before, still works.
INIT_FROM_ALIASES = {"init_from": ("--model",)}


class JobCommand:
    """`add_arguments`, `check_arguments` and `run` of a job's command, as `main` calls them.

    The flags are one per settings field (`add_settings_flags`), plus `--config KEY=VALUE`
    where the job takes backbone overrides; the settings are made before TensorFlow loads (a
    bad value is one line in a second); `run` imports the job, calls it with the settings and
    prints its last line.

    Args:
        settings_class: the job's settings dataclass (`albert_keras_settings`).
        job: str. `"module:function"` of the job, imported only when the command runs.
        report: callable `(settings, summary)` printing the command's last line.
        aliases: dict. Field name -> extra flag names (`{"init_from": ("--model",)}`).
        config_help: str or None. With it, a `--config` flag so described.

    Example:
    >>> from albert_keras_settings import PretrainSettings
    >>> command = JobCommand(PretrainSettings, "albert_keras.jobs:pretrain", print,
    ...                      config_help="override a preset argument")
    >>> parser = argparse.ArgumentParser()
    >>> command.add_arguments(parser)
    >>> args = parser.parse_args(["--records", "r/*.tfrecord", "--output_dir", "run/",
    ...                           "--config", "num_layers=2"])
    >>> command.settings(args).config, command.settings(args).batch_size
    ({'num_layers': 2}, 32)
    """

    def __init__(
        self,
        settings_class: type,
        job: str,
        report: Callable,
        *,
        aliases: dict | None = None,
        config_help: str | None = None,
    ):
        self.settings_class = settings_class
        self.job = job
        self.report = report
        self.aliases = aliases
        self.config_help = config_help

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """One flag per settings field (and `--config` where the job takes one)."""
        add_settings_flags(parser, self.settings_class, aliases=self.aliases)
        if self.config_help:
            add_config_flag(parser, self.config_help)

    def settings(self, args: argparse.Namespace):
        """The settings the parsed flags give (checked as they are made)."""
        if self.config_help:
            return settings_from_args(
                self.settings_class, args, config=parse_config_flags(args.config)
            )
        return settings_from_args(self.settings_class, args)

    def check_arguments(self, args: argparse.Namespace) -> None:
        """Makes the settings before TensorFlow loads: a bad value is one line in a second."""
        self.settings(args)

    def run(self, args: argparse.Namespace) -> int:
        """Runs the job with the parsed flags; prints its last line."""
        settings = self.settings(args)
        module, name = self.job.split(":")
        job = getattr(importlib.import_module(module), name)
        self.report(settings, job(settings, verbose="auto"))
        return 0
