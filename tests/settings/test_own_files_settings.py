"""`finetune-tokens` / `finetune-choice` settings: defaults, one-line errors, generated flags."""

import argparse

import pytest

from albert_keras_cli import finetune_choice, finetune_tokens
from albert_keras_settings.finetune_choice_settings import FinetuneChoiceSettings
from albert_keras_settings.finetune_tokens_settings import FinetuneTokensSettings

REQUIRED = {"train_file": "t", "validation_file": "v", "init_from": "m", "output_dir": "o"}


def test_defaults_differ_where_the_tasks_do():
    tokens, choice = FinetuneTokensSettings(**REQUIRED), FinetuneChoiceSettings(**REQUIRED)
    assert (tokens.learning_rate, tokens.batch_size) == (5e-5, 16)
    assert (choice.learning_rate, choice.batch_size, choice.format) == (1e-5, 8, "auto")
    assert tokens.test_file is None and tokens.max_steps is None and tokens.epochs == 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"batch_size": 0}, "--batch_size=0 must be a positive integer"),
        ({"max_steps": -1}, "--max_steps=-1 must be a positive integer"),
        ({"max_seq_length": 2}, "--max_seq_length=2 leaves no room for text"),
        ({"learning_rate": float("nan")}, "--learning_rate=nan must be a finite number > 0"),
        ({"warmup_proportion": 1.0}, "--warmup_proportion=1.0 must be a finite number"),
        ({"dropout": -0.1}, "--dropout=-0.1 must be a finite number"),
        ({"strategy": "abacus"}, "--strategy='abacus': expected one of"),
    ],
)
def test_bad_values_are_one_line(change, message):
    for settings_class in (FinetuneTokensSettings, FinetuneChoiceSettings):
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            settings_class(**REQUIRED, **change)
    with pytest.raises(ValueError, match="--format='csv': expected one of auto, race, swag"):
        FinetuneChoiceSettings(**REQUIRED, format="csv")


def test_flags_are_generated_from_the_fields():
    parser = argparse.ArgumentParser()
    finetune_choice.add_arguments(parser)
    args = parser.parse_args(
        ["--train_file", "a.csv", "--validation_file", "b.csv", "--init_from", "m.keras",
         "--output_dir", "out", "--format", "swag", "--max_steps", "7"]
    )  # fmt: skip
    settings = finetune_choice.COMMAND.settings(args)
    assert (settings.format, settings.max_steps, settings.test_file) == ("swag", 7, None)
    parser = argparse.ArgumentParser()
    finetune_tokens.add_arguments(parser)
    with pytest.raises(SystemExit):  # --train_file is required
        parser.parse_args(["--validation_file", "b.txt", "--init_from", "m", "--output_dir", "o"])
