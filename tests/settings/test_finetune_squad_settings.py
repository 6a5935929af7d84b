"""`FinetuneSquadSettings`: `albert-keras finetune-squad`'s flags as they were, generated from
it; a bad value refused when the settings are made; the job records the same run however its
settings are given."""

import argparse
import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import pytest

from albert_keras_cli import finetune_squad as squad_cli
from albert_keras_settings import FinetuneSquadSettings
from albert_keras_settings.settings_flags import add_settings_flags, settings_from_args

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STRATEGIES = ("auto", "tpu", "gpu", "mirrored", "multi_worker", "one_device", "cpu")
PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")

# The flags before #31 (dest, flag names, default, choices, required, type), read off the
# hand-written parser; the one change: `--model` is now an alias of `--init_from`.
TODAY = [
    ("version", ("--version",), None, ("1.1", "2.0"), True, str),
    ("train_file", ("--train_file",), None, None, False, str),
    ("predict_file", ("--predict_file",), None, None, False, str),
    ("source", ("--source",), "json", ("json", "tfds"), False, str),
    ("tfds_data_dir", ("--tfds_data_dir",), None, None, False, str),
    ("init_from", ("--init_from", "--model"), None, None, True, str),
    ("output_dir", ("--output_dir",), None, None, True, str),
    ("overwrite", ("--overwrite",), False, None, False, None),
    ("spm_model", ("--spm_model",), None, None, False, str),
    ("accept_old_text_path", ("--accept_old_text_path",), False, None, False, None),  # issue 42
    ("head", ("--head",), None, ("simple", "v2"), False, str),
    # None: the model's own length, the stride and question scaled to it (issue 46).
    ("max_seq_length", ("--max_seq_length",), None, None, False, int),
    ("doc_stride", ("--doc_stride",), None, None, False, int),
    ("max_query_length", ("--max_query_length",), None, None, False, int),
    ("batch_size", ("--batch_size",), 48, None, False, int),
    ("epochs", ("--epochs",), 2.0, None, False, float),
    ("max_steps", ("--max_steps",), None, None, False, int),  # finetune-glue's name (#30)
    ("learning_rate", ("--learning_rate",), None, None, False, float),
    ("warmup_proportion", ("--warmup_proportion",), 0.1, None, False, float),
    ("n_best_size", ("--n_best_size",), 20, None, False, int),
    ("max_answer_length", ("--max_answer_length",), 30, None, False, int),
    ("strategy", ("--strategy",), "auto", STRATEGIES, False, str),
    ("deterministic", ("--deterministic",), False, None, False, None),  # issue 44
    ("seed", ("--seed",), 12345, None, False, int),
    ("mixed_precision", ("--mixed_precision",), "auto", PRECISIONS, False, str),
    ("strict", ("--strict",), False, None, False, None),  # issue 43
]
REQUIRED = ["--version", "2.0", "--predict_file", "dev.json", "--train_file", "train.json"]


def _parser(add=squad_cli.add_arguments):
    parser = argparse.ArgumentParser()
    add(parser)
    return parser


def _flags(parser):
    return [
        (a.dest, tuple(a.option_strings), a.default, a.choices, a.required, a.type)
        for a in parser._actions
        if a.dest != "help"
    ]


def test_the_generated_flags_are_todays():
    assert _flags(_parser()) == TODAY
    # Nothing of the command's own: its parser is the dataclass's, with the alias.
    from_dataclass = _parser(
        lambda p: add_settings_flags(p, FinetuneSquadSettings, aliases=squad_cli.ALIASES)
    )
    assert _flags(from_dataclass) == TODAY
    assert [f.name for f in dataclasses.fields(FinetuneSquadSettings)] == [t[0] for t in TODAY]


def test_model_and_init_from_are_one_setting():
    old = _parser().parse_args([*REQUIRED, "--model", "m.keras", "--output_dir", "o"])
    new = _parser().parse_args([*REQUIRED, "--init_from", "m.keras", "--output_dir", "o"])
    assert settings_from_args(FinetuneSquadSettings, old) == settings_from_args(
        FinetuneSquadSettings, new
    )
    assert settings_from_args(FinetuneSquadSettings, new).init_from == "m.keras"
    assert settings_from_args(FinetuneSquadSettings, new).learning_rate_or_default() == 3e-5


GOOD = {"version": "2.0", "train_file": "t.json", "predict_file": "d.json",
        "init_from": "m.keras", "output_dir": "o"}  # fmt: skip


@pytest.mark.parametrize(
    "change, message",
    [
        ({"version": "3.0"}, "--version='3.0': expected one of 1.1, 2.0"),
        ({"source": "csv"}, "--source='csv': expected one of json, tfds"),
        ({"head": "v3"}, "--head='v3': expected one of simple, v2"),
        ({"strategy": "gpus"}, "--strategy='gpus': expected one of auto, tpu, gpu,"),
        ({"mixed_precision": "fp16"}, "--mixed_precision='fp16': expected one of auto,"),
        ({"batch_size": 0}, "--batch_size=0 must be a positive integer"),
        ({"doc_stride": -1}, "--doc_stride=-1 must be a positive integer"),
        ({"max_seq_length": 3.5}, "--max_seq_length=3.5 must be a positive integer"),
        ({"epochs": -1}, "--epochs=-1 must be a finite number >= 0"),
        ({"warmup_proportion": 1.5}, "--warmup_proportion=1.5 must be a finite number >= 0 and"),
        ({"train_file": None}, "--predict_file (and --train_file unless --epochs 0) are"),
        ({"predict_file": None, "epochs": 0}, "--predict_file (and --train_file unless"),
        ({"max_steps": 0}, "--max_steps=0 must be a positive integer"),
        ({"max_steps": 2.5}, "--max_steps=2.5 must be a positive integer"),
        # --max_steps trains, whatever --epochs says: it needs the training file.
        ({"train_file": None, "epochs": 0, "max_steps": 5}, "--predict_file (and --train_file"),
    ],
)
def test_a_bad_value_fails_when_the_settings_are_made(change, message):
    with pytest.raises(ValueError) as error:
        FinetuneSquadSettings(**{**GOOD, **change})
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_what_is_valid_stays_valid():
    assert FinetuneSquadSettings(**{**GOOD, "train_file": None, "epochs": 0}).head is None
    tfds = FinetuneSquadSettings(version="1.1", source="tfds", init_from="m", output_dir="o")
    assert (tfds.train_file, tfds.learning_rate_or_default()) == (None, 5e-5)
    paths = FinetuneSquadSettings(**{**GOOD, "output_dir": pathlib.Path("o")})
    assert paths == FinetuneSquadSettings(**GOOD)  # a Path and its str: the same setting


def test_a_bad_flag_value_is_one_line_before_tensorflow_loads():
    probe = (
        "import sys\nfrom albert_keras_cli.main import main\ncode = main(sys.argv[1:])\n"
        "print('EXIT', code, 'tensorflow' in sys.modules)"
    )
    argv = ["finetune-squad", *REQUIRED, "--model", "m.keras", "--output_dir", "o",
            "--batch_size", "0"]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
        check=False,
    )
    assert result.stdout.strip().splitlines()[-1] == "EXIT 2 False", result.stderr
    assert result.stderr.strip() == (
        "albert-keras finetune-squad: error: --batch_size=0 must be a positive integer"
    )


# === The job records the same run however its settings are given ===

SQUAD = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{
    "context": "the cat sat on the mat in the park .",
    "qas": [{"id": f"q{i}", "question": "where did the cat sit ?", "is_impossible": False,
             "answers": [{"text": "on the mat", "answer_start": 12}]} for i in range(3)]}]}]}  # fmt: skip


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_settings_and_keywords_record_the_same_run(tmp_path, tiny_spm):
    import albert_keras as ak
    from albert_keras.jobs.finetune_squad_job import finetune_squad

    ak.AlbertBackbone(vocabulary_size=64, num_layers=1, num_heads=2, embedding_dim=8,
                      hidden_dim=16, intermediate_dim=32,
                      max_sequence_length=32).save(tmp_path / "backbone.keras")  # fmt: skip
    (tmp_path / "dev.json").write_text(json.dumps(SQUAD))
    keywords = {"version": "2.0", "predict_file": tmp_path / "dev.json",
                "init_from": tmp_path / "backbone.keras", "spm_model": tiny_spm, "epochs": 0,
                "max_seq_length": 32, "doc_stride": 16, "max_query_length": 8,
                "batch_size": 4, "strategy": "cpu", "mixed_precision": "float32"}  # fmt: skip
    settings = FinetuneSquadSettings(**keywords, output_dir=str(tmp_path / "a"))
    by_settings = finetune_squad(settings)
    by_keywords = finetune_squad(**keywords, output_dir=tmp_path / "b")
    # Over a settings object, keywords replace its fields.
    finetune_squad(settings, output_dir=tmp_path / "c", seed=7)

    recorded = {
        run: json.loads((tmp_path / run / ".albert-keras.json").read_text())["arguments"]
        for run in "abc"
    }
    # Keys, order and values as the job recorded before #31 (a folder it wrote still matches).
    assert list(recorded["a"].items()) == [
        ("version", "2.0"), ("source", "json"), ("train", None),
        ("predict", str(tmp_path / "dev.json")), ("model", str(tmp_path / "backbone.keras")),
        ("spm_model", str(tiny_spm)), ("head", None), ("mixed_precision", "float32"),
        ("max_seq_length", 32), ("doc_stride", 16), ("max_query_length", 8), ("batch_size", 4),
        ("epochs", 0), ("learning_rate", 3e-5), ("warmup_proportion", 0.1), ("n_best_size", 20),
        ("max_answer_length", 30), ("seed", 12345), ("strategy", "cpu"),
    ]  # fmt: skip
    assert list(recorded["b"].items()) == list(recorded["a"].items())
    assert recorded["c"] == {**recorded["a"], "seed": 7}
    for summary in (by_settings, by_keywords):
        summary.pop("wall_seconds")
    assert by_settings == by_keywords
    assert (by_settings["predict_examples"], by_settings["head"], by_settings["steps"]) == (
        3,
        "v2",
        0,
    )
