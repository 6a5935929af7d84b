"""`DistillSettings` (issue 31): the flags generated from it are `albert-keras distill`'s as they
were, a bad value fails when the settings are made, and the job records the same run config
whether it is given a settings object or keywords."""

import argparse
import json

import pytest

from albert_keras_cli import distill as distill_cli
from albert_keras_settings import DistillSettings
from albert_keras_settings.settings_flags import settings_from_args

STRATEGIES = ("auto", "tpu", "gpu", "mirrored", "multi_worker", "one_device", "cpu")
PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")

# `albert-keras distill`'s flags as they were written by hand before the settings (HEAD 2fb6449):
# flag -> (default, type, choices, required); a switch's type is "switch".
TODAY = {
    "--teacher": (None, str, None, True),
    "--student": ("teacher", str, None, False),
    "--config": ([], str, None, False),  # repeatable
    "--records": (None, str, None, True),
    "--output_dir": (None, str, None, True),
    "--overwrite": (False, "switch", None, False),
    "--student_init": ("auto", str, ("auto", "teacher", "random"), False),
    "--temperature": (2.0, float, None, False),
    "--soft_target_weight": (5.0, float, None, False),
    "--mlm_weight": (2.0, float, None, False),
    "--cosine_weight": (1.0, float, None, False),
    "--cosine_positions": ("masked", str, ("masked", "tokens"), False),
    "--batch_size": (32, int, None, False),
    "--max_steps": (10_000, int, None, False),
    "--learning_rate": (0.00176, float, None, False),
    "--warmup_steps": (None, int, None, False),
    "--dynamic_masking": (False, "switch", None, False),
    "--eval_records": (None, str, None, False),
    "--eval_steps": (100, int, None, False),
    "--checkpoint_every": (1000, int, None, False),
    "--strategy": ("auto", str, STRATEGIES, False),
    "--deterministic": (False, "switch", None, False),  # issue 44
    "--mixed_precision": ("auto", str, PRECISIONS, False),
    "--jit_compile": ("auto", str, ("auto", "true", "false"), False),
    "--steps_per_execution": (1, int, None, False),
    "--spm_model": (None, str, None, False),
    "--accept_old_text_path": (False, "switch", None, False),  # issue 42
    "--seed": (12345, int, None, False),
}


class _RecordingParser(argparse.ArgumentParser):
    """Keeps the actions `add_argument` returns (argparse lists them only privately)."""

    def __init__(self):
        super().__init__(prog="distill")
        self.recorded = []

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        if hasattr(self, "recorded"):  # not the parser's own --help, added in __init__
            self.recorded.append(action)
        return action


def _parser():
    parser = _RecordingParser()
    distill_cli.add_arguments(parser)
    return parser


def test_the_generated_flags_are_todays():
    flags = {}
    for action in _parser().recorded:
        kind = "switch" if action.nargs == 0 else (action.type or str)
        choices = tuple(action.choices) if action.choices else None
        flags[action.option_strings[0]] = (action.default, kind, choices, action.required)
        assert action.option_strings == [action.option_strings[0]]  # no aliases
    assert flags == TODAY
    required = ["--teacher", "t", "--records", "r", "--output_dir", "o"]
    config = _parser().parse_args([*required, "--config", "a=1", "--config", "b=x"]).config
    assert config == ["a=1", "b=x"]  # repeatable


def test_flags_read_back_as_settings():
    argv = ["--teacher", "t.keras", "--records", "r/*", "--output_dir", "out",
            "--config", "num_layers=2", "--overwrite", "--jit_compile", "false",
            "--warmup_steps", "7", "--cosine_positions", "tokens"]  # fmt: skip
    args = _parser().parse_args(argv)
    settings = settings_from_args(DistillSettings, args, config={"num_layers": 2})
    assert settings == DistillSettings(
        teacher="t.keras",
        records="r/*",
        output_dir="out",
        config={"num_layers": 2},
        overwrite=True,
        jit_compile="false",
        warmup_steps=7,
        cosine_positions="tokens",
    )
    assert settings.warmup_steps_or_default() == 7
    # Without --warmup_steps: 2.5% of max_steps, the official 3,125 of 125,000.
    assert (
        DistillSettings(teacher="t", records="r", output_dir="o").warmup_steps_or_default() == 250
    )


REQUIRED = {"teacher": "t.keras", "records": "r/*", "output_dir": "out"}


@pytest.mark.parametrize(
    "value, message",
    [
        ({"batch_size": 0}, "--batch_size=0 must be a positive integer"),
        ({"max_steps": -1}, "--max_steps=-1 must be a positive integer"),
        ({"checkpoint_every": 2.5}, "--checkpoint_every=2.5 must be a positive integer"),
        ({"steps_per_execution": 0}, "--steps_per_execution=0 must be a positive integer"),
        ({"student_init": "half"}, "--student_init='half': expected one of auto, teacher, random"),
        ({"cosine_positions": "all"}, "--cosine_positions='all': expected one of masked, tokens"),
        ({"strategy": "gpus"}, "--strategy='gpus': expected one of auto, tpu, gpu, mirrored"),
        ({"mixed_precision": "fp16"}, "--mixed_precision='fp16': expected one of auto, float32"),
        ({"jit_compile": "yes"}, "--jit_compile='yes': expected one of auto, true, false"),
        ({"temperature": 0.0}, "temperature=0.0 must be > 0"),
        ({"mlm_weight": -1.0}, "loss weights (5.0, -1.0, 1.0): each must be >= 0 and one > 0"),
        (
            {"soft_target_weight": 0.0, "mlm_weight": 0.0, "cosine_weight": 0.0},
            "loss weights (0.0, 0.0, 0.0): each must be >= 0 and one > 0",
        ),
    ],
)
def test_a_bad_value_fails_when_the_settings_are_made(value, message):
    with pytest.raises(ValueError) as error:
        DistillSettings(**REQUIRED, **value)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_bad_value_fails_in_the_job_before_anything_is_read_or_written(tmp_path):
    from albert_keras.jobs import distill

    out = tmp_path / "out"
    # The teacher and records do not exist: the batch size is what is named.
    with pytest.raises(ValueError, match="--batch_size=0 must be a positive integer"):
        distill(teacher="no.keras", records="none/*", output_dir=str(out), batch_size=0)
    with pytest.raises(TypeError, match="DistillSettings has no setting 'batchsize'"):
        distill(teacher="no.keras", records="none/*", output_dir=str(out), batchsize=8)
    with pytest.raises(TypeError, match="DistillSettings needs teacher"):
        distill(records="none/*", output_dir=str(out))
    assert not out.exists()


def test_jit_compile_and_config_as_python_callers_gave_them():
    settings = DistillSettings(**REQUIRED, jit_compile=True, config=None)
    assert (settings.jit_compile, settings.config) == ("true", {})


@pytest.fixture(scope="module")
def teacher_and_records(tmp_path_factory):
    import keras
    from synthetic_records import SEQ_LENGTH, VOCABULARY_SIZE, write_synthetic_records

    import albert_keras as ak

    root = tmp_path_factory.mktemp("distill_settings")
    write_synthetic_records(root / "train-0.tfrecord", 64, seed=0)
    keras.utils.set_random_seed(1)
    teacher = ak.AlbertPretrainer(
        ak.AlbertBackbone(
            vocabulary_size=VOCABULARY_SIZE, num_layers=2, num_heads=2, embedding_dim=8,
            hidden_dim=16, intermediate_dim=32, max_sequence_length=SEQ_LENGTH,
        ),
        "sop",
    )  # fmt: skip
    teacher.save(root / "model.keras")
    return root / "model.keras", root / "train-0.tfrecord", teacher.backbone.get_config()


def test_settings_or_keywords_record_the_same_run_config(
    teacher_and_records, tmp_path, monkeypatch
):
    from albert_keras.jobs import distill, distill_job

    teacher, records, backbone = teacher_and_records
    # The run config is recorded when the folder opens; the training itself is not needed here.
    run = distill_job._Distill  # JobRun's steps after the folder opens do nothing here
    for step in ("prepare", "build", "fit", "save"):
        monkeypatch.setattr(run, step, lambda self, *args: None)
    monkeypatch.setattr(run, "evaluate", lambda self, folder, model: {})
    monkeypatch.setattr(run, "summary", lambda self, model, figures: self.run_config)
    given = {"teacher": str(teacher), "records": str(records), "batch_size": 16,
             "max_steps": 40, "mixed_precision": "float32", "mlm_weight": 3.0}  # fmt: skip
    settings = DistillSettings(**given, output_dir=str(tmp_path / "a"))
    by_settings = distill(settings)
    by_keywords = distill(**given, output_dir=str(tmp_path / "b"))
    over_settings = distill(settings, output_dir=str(tmp_path / "c"))
    recorded = [
        json.loads((tmp_path / name / ".albert-keras.json").read_text())["arguments"]
        for name in "abc"
    ]
    assert recorded[0] == recorded[1] == recorded[2] == by_settings == by_keywords == over_settings
    # The keys and values distill recorded before the settings, in their order: a run folder
    # written then resumes with the same command now.
    student = {k: v for k, v in backbone.items() if k not in ("name", "trainable", "dtype")}
    assert list(recorded[0].items()) == [
        ("files", [str(records)]),
        ("num_examples", 64),
        ("teacher", str(teacher)),
        ("teacher_bytes", teacher.stat().st_size),
        ("student", student),
        ("student_init", "teacher"),
        ("temperature", 2.0),
        ("loss_weights", [5.0, 3.0, 1.0]),
        ("cosine_positions", "masked"),
        ("batch_size", 16),
        ("max_steps", 40),
        ("learning_rate", 0.00176),
        ("warmup_steps", 1),
        ("max_seq_length", 32),
        ("max_predictions_per_seq", 5),
        ("dynamic_masking", False),
        ("checkpoint_every", 1000),
        ("mixed_precision", "float32"),
        ("seed", 12345),
    ]
