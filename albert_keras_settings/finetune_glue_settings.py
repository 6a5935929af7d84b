"""`FinetuneGlueSettings`: every setting of `albert-keras finetune-glue`, each default written
once."""

from __future__ import annotations

import dataclasses
import math

from albert_keras_contracts.catalogue import get_glue_task, import_task_module
from albert_keras_contracts.catalogue import trainable_task_names as _trainable_task_names
from albert_keras_settings.choices import JIT_COMPILE
from albert_keras_settings.setting import check_choices, check_number, paths_as_strings, setting
from albert_keras_settings.shared_settings import (
    accept_old_text_path_setting,
    deterministic_setting,
    dropout_setting,
    fine_tuning_spm_setting,
    mixed_precision_setting,
    overwrite_setting,
    strategy_setting,
)

# GLUE's trainable tasks, as the catalogue holds them (a `--task_module` may add more).
TASKS = _trainable_task_names()
SOURCES = ("tsv", "tfds")
# The user's own files (`--train_file`): what their label column holds.
TASK_TYPES = ("classification", "regression")
# Flags that only mean something with `--train_file`.
USER_FILE_FLAGS = ("validation_file", "test_file", "text_pair_column")

# Unset (None), these take the official `run_glue.sh` value for the task.
POSITIVE = ("max_steps", "batch_size", "max_seq_length", "eval_every")
NON_NEGATIVE = ("learning_rate", "warmup_steps", "patience")
# Settings that may be given as `pathlib.Path` from Python; kept as `str` (what a flag gives).
PATHS = (
    "glue_dir", "init_from", "output_dir", "spm_model", "train_file", "validation_file",
    "test_file",
)  # fmt: skip


@dataclasses.dataclass(frozen=True, kw_only=True)
class FinetuneGlueSettings:
    """The settings of one GLUE fine-tuning run (`albert_keras.jobs.finetune_glue_job`).

    Made from keyword arguments or from `albert-keras finetune-glue`'s flags, which are
    generated from these fields (`albert_keras_settings.settings_flags`); checked when made, so a
    bad value fails before anything is read or written. Frozen: `dataclasses.replace` gives a
    changed copy.

    Args:
        task: str or `albert_keras.glue.GlueTask`. `"CoLA"`, `"SST-2"`, `"MRPC"`, `"STS-B"`,
            `"QQP"`, `"MNLI"`, `"QNLI"`, `"RTE"` or `"WNLI"` (AX predictions come with MNLI), or
            a task a `task_module` registers (`albert_keras_contracts.catalogue.register_task`);
            `None` with `train_file`: the user's own files (`albert_keras.glue.user_files`).
        train_file, validation_file, test_file: the user's own CSV / TSV / JSON lines files,
            their columns named by `text_column`, `text_pair_column` and `label_column`;
            `task_type` says whether the label is a class (any spelling) or a number.
        init_from: the weights to start from (`--init_from`, or `--model` as before): a `.keras`
            path holding an `AlbertBackbone` or a model with a `.backbone` (`AlbertPretrainer`,
            `AlbertClassifier`), or such a model in memory.
        output_dir: the run's folder: new, empty or an earlier `finetune-glue` run's.
        max_steps, batch_size, learning_rate, warmup_steps, eval_every: `None` takes the
            official value for the task (`FinetuneGlueSettings` does not know the task's
            numbers; `finetune_glue` fills them in).
        max_seq_length: `None` takes the model's own: the length `init_from` was trained at
            (its saved preprocessor's), else its positions, at most the official 512.
        ...: one per field below; each field's help says what it does.

    Example:
    >>> s = FinetuneGlueSettings(task="RTE", glue_dir="glue/", init_from="m.keras",
    ...                          output_dir="out/", max_steps=100)
    >>> s.patience, s.batch_size, s.strategy
    (5, None, 'auto')
    >>> FinetuneGlueSettings(task="RTE", glue_dir="glue/", init_from="m.keras",
    ...                      output_dir="out/", batch_size=-4)
    Traceback (most recent call last):
    ValueError: --batch_size must be positive, got -4
    """

    task: str | None = setting(
        None, f"one of {', '.join(TASKS)} (MNLI also predicts AX); none: --train_file's task"
    )
    glue_dir: str | None = setting(None, "GLUE's download: GLUE_DIR/SST-2/train.tsv, ...")
    task_module: str | None = setting(
        None,
        "a Python module to import first, whose register_task(...) calls add GLUE-like tasks "
        "(albert_keras_contracts.catalogue) that --task then names",
    )
    init_from: str = setting(
        help="start from these weights: a saved AlbertBackbone, AlbertPretrainer or "
        "AlbertClassifier (.keras); its backbone is fine-tuned"
    )
    output_dir: str = setting(
        help="the run's folder: model.keras, metrics.json, dev_predictions/, submission/"
    )
    overwrite: bool = overwrite_setting("finetune-glue")
    # The user's own files instead of a GLUE task (albert_keras.glue.user_files reads them).
    train_file: str | None = setting(
        None, "fine-tune on your own labelled file instead of --task: .csv, .tsv or .jsonl"
    )
    validation_file: str | None = setting(
        None, "with --train_file: the labelled file scored (and early-stopped on)"
    )
    test_file: str | None = setting(
        None, "with --train_file: a file to predict (labels not needed), to submission/"
    )
    text_column: str = setting("text", "with --train_file: the column of the (first) text")
    text_pair_column: str | None = setting(
        None, "with --train_file: the column of the second text, for pair tasks"
    )
    label_column: str = setting("label", "with --train_file: the column of the label")
    task_type: str = setting(
        "classification",
        "with --train_file: classification (labels of any spelling, found in the training "
        "file) or regression (a number)",
        choices=TASK_TYPES,
    )
    spm_model: str | None = fine_tuning_spm_setting()
    accept_old_text_path: bool = accept_old_text_path_setting("a model")
    source: str = setting(
        "tsv", "tsv: --glue_dir; tfds: tensorflow_datasets glue/* (network)", choices=SOURCES
    )
    max_steps: int | None = setting(None, "none: the official steps for the task")
    batch_size: int | None = setting(None, "none: the official batch for the task")
    max_seq_length: int | None = setting(
        None,
        "none: the model's own (the length --init_from was trained at, which its saved "
        "preprocessor records, else its positions), at most the official 512",
    )
    learning_rate: float | None = setting(
        None, "none: the official peak learning rate for the task"
    )
    warmup_steps: int | None = setting(None, "none: the official warmup fraction")
    eval_every: int | None = setting(
        None, "steps between dev evaluations; none: the official checkpoint interval"
    )
    dropout: float = dropout_setting()
    patience: int = setting(5, "stop after this many evaluations without improvement (0: never)")
    seed: int = setting(12345, "seeds the classifier head, dropout and the data order")
    strategy: str = strategy_setting()
    deterministic: bool = deterministic_setting()
    mixed_precision: str = mixed_precision_setting()
    jit_compile: str = setting(
        "auto",
        "XLA: auto is Keras's choice (on for GPU / TPU); true also pays on CPU for long runs "
        "and for predicting (benchmarks/inference.py --xla on), after a one-time compile",
        choices=JIT_COMPILE,
    )

    def __post_init__(self):
        paths_as_strings(self, *PATHS)  # (a keras.Model given as init_from stays)
        if isinstance(self.jit_compile, bool):  # jit_compile=False reads as "false"
            object.__setattr__(self, "jit_compile", str(self.jit_compile).lower())
        check_choices(self)
        # `not value > 0` rather than `value <= 0`: a nan (or inf) is refused too (issue 43).
        for name in POSITIVE:
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"--{name} must be positive, got {value}")
        for name in NON_NEGATIVE:
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"--{name} must be >= 0, got {value}")
        check_number("dropout", self.dropout, at_least=0, below=1)
        if self.train_file is not None:
            if self.task is not None:
                raise ValueError("give --task (a GLUE task) or --train_file (your own), not both")
            if self.validation_file is None:
                raise ValueError("--train_file needs --validation_file (the labelled file scored)")
            return
        given = [name for name in USER_FILE_FLAGS if getattr(self, name) is not None]
        if given:
            raise ValueError(f"--{given[0]} needs --train_file")
        if self.task is None:
            raise ValueError("--task (a GLUE task) or --train_file (your own data) is required")
        if self.task_module is not None:
            import_task_module(self.task_module)  # before the task is looked up
        get_glue_task(self.task)  # an unknown name: one line naming the catalogue's tasks
        if self.source == "tsv" and not self.glue_dir:
            raise ValueError("--glue_dir is required with --source tsv")
