"""`albert-keras finetune-glue`: the flags of `albert_keras.jobs.finetune_glue_job`, generated
from `FinetuneGlueSettings`, and its summary line."""

from __future__ import annotations

import argparse

from albert_keras_settings import FinetuneGlueSettings
from albert_keras_settings.finetune_glue_settings import TASKS  # noqa: F401 (predict's, tests')
from albert_keras_settings.settings_flags import add_settings_flags, settings_from_args

# `--init_from` as `pretrain` and `distill` name "start from these weights"; `--model`, this
# command's name before, still works.
ALIASES = {"init_from": ("--model",)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `albert-keras finetune-glue` flags: one per `FinetuneGlueSettings` field."""
    add_settings_flags(parser, FinetuneGlueSettings, aliases=ALIASES)


def check_arguments(args: argparse.Namespace) -> None:
    """Makes the settings before TensorFlow loads: a bad value is one line in a second."""
    settings_from_args(FinetuneGlueSettings, args)


def run(args: argparse.Namespace) -> int:
    """Runs `finetune_glue` with the parsed flags; prints the dev scores."""
    settings = settings_from_args(FinetuneGlueSettings, args)

    from albert_keras.jobs.finetune_glue_job import finetune_glue
    from albert_keras.training.warmup_early_stopping import early_stop_note

    summary = finetune_glue(settings, verbose="auto")
    scores = ", ".join(f"{k} {v:.4f}" for k, v in summary["metrics"].items())
    print(
        f"{summary['task']} {summary['split']} ({summary['num_examples']} examples): {scores}"
        f" -> {settings.output_dir}{early_stop_note(summary)}"
    )
    return 0
