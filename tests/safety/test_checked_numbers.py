"""Numbers are checked where they are read (issue 43): a learning rate, step count, stride,
length or probability that is not finite or not in range is refused in one line naming the flag,
when the settings are made, before TensorFlow loads and before any folder is made."""

import math

import pytest

from albert_keras_cli.main import main
from albert_keras_settings import (
    DistillSettings,
    FinetuneGlueSettings,
    FinetuneSquadSettings,
    PretrainSettings,
    WriterSettings,
)

NAN, INF = math.nan, math.inf
PRETRAIN = {"records": "r/*", "output_dir": "run"}
DISTILL = {"teacher": "t.keras", "records": "r/*", "output_dir": "s"}
GLUE = {"task": "RTE", "glue_dir": "glue", "init_from": "m.keras", "output_dir": "o"}
SQUAD = {"version": "2.0", "train_file": "t.json", "predict_file": "d.json",
         "init_from": "m.keras", "output_dir": "o"}  # fmt: skip
WRITER = {"input": "c.txt", "spm_model": "spm.model", "output_dir": "out"}


@pytest.mark.parametrize(
    "cls, good, change, message",
    [
        (PretrainSettings, PRETRAIN, {"learning_rate": NAN},
         "--learning_rate=nan must be a finite number > 0"),
        (PretrainSettings, PRETRAIN, {"learning_rate": INF},
         "--learning_rate=inf must be a finite number > 0"),
        (PretrainSettings, PRETRAIN, {"learning_rate": 0.0},
         "--learning_rate=0.0 must be a finite number > 0"),
        (PretrainSettings, PRETRAIN, {"warmup_steps": -1},
         "--warmup_steps=-1 must be an integer >= 0"),
        (PretrainSettings, PRETRAIN, {"eval_steps": -5}, "--eval_steps=-5 must be an integer"),
        (PretrainSettings, PRETRAIN, {"max_seq_length": 0},
         "--max_seq_length=0 must be an integer >= 1"),
        (DistillSettings, DISTILL, {"learning_rate": NAN}, "--learning_rate=nan must be a fin"),
        (DistillSettings, DISTILL, {"temperature": NAN}, "temperature=nan must be > 0"),
        (DistillSettings, DISTILL, {"mlm_weight": INF}, "loss weights (5.0, inf, 1.0): each"),
        (FinetuneGlueSettings, GLUE, {"learning_rate": NAN},
         "--learning_rate must be >= 0, got nan"),
        (FinetuneGlueSettings, GLUE, {"learning_rate": INF},
         "--learning_rate must be >= 0, got inf"),
        (FinetuneSquadSettings, SQUAD, {"learning_rate": NAN},
         "--learning_rate=nan must be a finite number > 0"),
        (FinetuneSquadSettings, SQUAD, {"epochs": INF}, "--epochs=inf must be a finite number"),
        (FinetuneSquadSettings, SQUAD, {"epochs": NAN}, "--epochs=nan must be a finite number"),
        (FinetuneSquadSettings, SQUAD, {"warmup_proportion": NAN},
         "--warmup_proportion=nan must be a finite number >= 0 and <= 1"),
        # 384 - 64 - 3 = 317 context pieces per window: a stride of 318 would skip one.
        (FinetuneSquadSettings, SQUAD, {"doc_stride": 318, "max_seq_length": 384, "max_query_length": 64},
         ("--doc_stride=318 is longer than a window's context (317 = --max_seq_length 384 - "
          "--max_query_length 64 - 3)")),
        (FinetuneSquadSettings, SQUAD, {"max_seq_length": 40, "max_query_length": 37, "doc_stride": 1},
         "--max_seq_length=40 leaves no room for a context after a 37-piece question"),
        (WriterSettings, WRITER, {"masked_lm_prob": NAN}, "masked_lm_prob=nan must be in (0, 1)"),
        (WriterSettings, WRITER, {"checkpoint_seconds": NAN},
         "checkpoint_seconds=nan must be a finite number >= 0"),
    ],
)  # fmt: skip
def test_a_number_out_of_range_is_refused_naming_the_flag(cls, good, change, message):
    with pytest.raises(ValueError) as error:
        cls(**{**good, **change})
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_the_edges_stay_valid():
    lengths = {"max_seq_length": 384, "max_query_length": 64}
    assert FinetuneSquadSettings(**SQUAD, **lengths, doc_stride=317).doc_stride == 317
    assert FinetuneSquadSettings(**SQUAD, warmup_proportion=1.0).warmup_proportion == 1.0
    assert PretrainSettings(**PRETRAIN, warmup_steps=0).warmup_steps_or_default() == 0
    assert FinetuneGlueSettings(**GLUE, learning_rate=0.0).learning_rate == 0.0  # frozen runs


@pytest.mark.parametrize(
    "argv, message",
    [
        (["pretrain", "--records", "r/*", "--config", "dropout=NaN"],
         "albert-keras pretrain: error: --config 'dropout=NaN': NaN is not a number a setting"),
        (["pretrain", "--records", "r/*", "--learning_rate", "nan"],
         "albert-keras pretrain: error: --learning_rate=nan must be a finite number > 0"),
        (["finetune-squad", "--version", "2.0", "--train_file", "t.json", "--predict_file",
          "d.json", "--init_from", "m.keras", "--doc_stride", "400", "--max_seq_length", "384",
          "--max_query_length", "64"],
         "albert-keras finetune-squad: error: --doc_stride=400 is longer than a window's"),
        # Two names of one setting, two values: refused (the last one silently won).
        (["finetune-glue", "--task", "RTE", "--glue_dir", "g", "--init_from", "a.keras",
          "--model", "b.keras"],
         ("albert-keras finetune-glue: error: --init_from='a.keras' and --model='b.keras' name "
          "one setting: give one of them")),
        (["finetune-squad", "--version", "2.0", "--train_file", "t.json", "--predict_file",
          "d.json", "--model", "b.keras", "--init_from", "a.keras"],
         "albert-keras finetune-squad: error: --model='b.keras' and --init_from='a.keras'"),
    ],
)  # fmt: skip
def test_the_command_refuses_in_one_line_and_makes_no_folder(argv, message, tmp_path, capsys):
    out = tmp_path / "out"
    assert main([*argv, "--output_dir", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), lines
    assert not out.exists()


def test_both_names_with_one_value_are_one_setting(capsys):
    import argparse

    from albert_keras_cli import finetune_glue

    parser = argparse.ArgumentParser()
    finetune_glue.add_arguments(parser)
    args = parser.parse_args(["--task", "RTE", "--glue_dir", "g", "--init_from", "a.keras",
                              "--model", "a.keras", "--output_dir", "o"])  # fmt: skip
    assert finetune_glue.COMMAND.settings(args).init_from == "a.keras"
