"""`albert-keras finetune-squad`: the flags of `albert_keras.jobs.finetune_squad_job`, generated
from `FinetuneSquadSettings`, and its summary line."""

from __future__ import annotations

import argparse

from albert_keras_settings import FinetuneSquadSettings
from albert_keras_settings.settings_flags import add_settings_flags, settings_from_args

# `--init_from` as `pretrain` and `distill` name "start from these weights"; `--model`, this
# command's name before, still works.
ALIASES = {"init_from": ("--model",)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `albert-keras finetune-squad` flags: one per `FinetuneSquadSettings` field."""
    add_settings_flags(parser, FinetuneSquadSettings, aliases=ALIASES)


def check_arguments(args: argparse.Namespace) -> None:
    """Makes the settings before TensorFlow loads: a bad value is one line in a second."""
    settings_from_args(FinetuneSquadSettings, args)


def run(args: argparse.Namespace) -> int:
    """Runs `finetune_squad` with the parsed flags; prints the scores."""
    settings = settings_from_args(FinetuneSquadSettings, args)

    from albert_keras.jobs.finetune_squad_job import finetune_squad

    summary = finetune_squad(settings, verbose="auto")
    scores = ", ".join(
        f"{k} {v:.2f}" for k, v in summary.get("metrics", {}).items() if isinstance(v, float)
    )
    print(
        f"SQuAD {settings.version}: {summary['predict_examples']} questions {scores} "
        f"-> {settings.output_dir}"
    )
    return 0
