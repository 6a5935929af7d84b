"""Every training command's flags are its settings class's fields, and nothing else."""

import argparse
import dataclasses
import importlib

import pytest

from albert_keras_cli.job_arguments import print_run
from albert_keras_cli.main import SUBCOMMANDS
from albert_keras_settings import (
    DistillSettings,
    FinetuneGlueSettings,
    FinetuneSquadSettings,
    PretrainSettings,
)
from albert_keras_settings.finetune_choice_settings import FinetuneChoiceSettings
from albert_keras_settings.finetune_tokens_settings import FinetuneTokensSettings

_OWN_FILES = [
    "--train_file",
    "t",
    "--validation_file",
    "v",
    "--init_from",
    "m",
    "--output_dir",
    "o",
]

# command -> (its required flags, its settings class)
COMMANDS = {
    "pretrain": (["--records", "r/*", "--output_dir", "o"], PretrainSettings),
    "distill": (
        ["--teacher", "t.keras", "--records", "r/*", "--output_dir", "o"],
        DistillSettings,
    ),
    "finetune-glue": (
        ["--task", "RTE", "--init_from", "m.keras", "--output_dir", "o"],
        FinetuneGlueSettings,
    ),
    "finetune-squad": (
        ["--version", "2.0", "--init_from", "m.keras", "--output_dir", "o"],
        FinetuneSquadSettings,
    ),
    "finetune-tokens": (_OWN_FILES, FinetuneTokensSettings),
    "finetune-choice": (_OWN_FILES, FinetuneChoiceSettings),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_flag_is_a_setting_and_every_setting_a_flag(command):
    parser = argparse.ArgumentParser()
    importlib.import_module(SUBCOMMANDS[command][0]).add_arguments(parser)
    argv, settings_class = COMMANDS[command]
    flags = set(vars(parser.parse_args(argv)))
    fields = {field.name for field in dataclasses.fields(settings_class)}
    assert flags - fields == set(), f"{command}: flags that set nothing"
    assert fields - flags == set(), f"{command}: settings no flag sets"


def test_print_run_prefers_held_out_means_and_says_which(capsys):
    summary = {"steps": {"total": 5}, "eval": {"mlm_accuracy": 0.25}, "train": {"loss": 3.0},
               "eval_examples": 1600}  # fmt: skip
    print_run("distilled", summary, "out/")
    assert capsys.readouterr().out == (
        "distilled 5 steps -> out/: held-out (1,600 examples): mlm_accuracy 0.2500\n"
    )
    print_run("distilled", {**summary, "eval": {}}, "out/")
    assert capsys.readouterr().out == (
        "distilled 5 steps -> out/: training means of the last period (no --eval_records): "
        "loss 3.0000\n"
    )
