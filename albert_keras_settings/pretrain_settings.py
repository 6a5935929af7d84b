"""`PretrainSettings`: every setting of `albert-keras pretrain`, each default written once."""

from __future__ import annotations

import dataclasses

from albert_keras_settings.choices import JIT_COMPILE, SENTENCE_OBJECTIVES
from albert_keras_settings.setting import (
    check_choices,
    check_integer,
    check_number,
    check_positive,
    setting,
)
from albert_keras_settings.shared_settings import (
    accept_old_text_path_setting,
    deterministic_setting,
    mixed_precision_setting,
    overwrite_setting,
    strategy_setting,
)

# The official run: 3,125 warmup steps of 125,000.
OFFICIAL_WARMUP_FRACTION = 3125 / 125_000


def check_training_numbers(settings) -> None:
    """Refuses, in one line naming the flag, a learning rate that is not a finite number > 0 and
    a warmup, length or evaluation count that is not a whole number >= 0 (>= 1 for lengths):
    a `--learning_rate nan` trained NaN weights and exited 0 before. Pretraining's and
    distillation's settings both check with it."""
    check_number("learning_rate", settings.learning_rate, above=0)
    check_integer("warmup_steps", settings.warmup_steps)
    check_integer("eval_steps", settings.eval_steps)
    check_integer("seed", settings.seed)
    for name in ("max_seq_length", "max_predictions_per_seq"):
        check_integer(name, getattr(settings, name, None), at_least=1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PretrainSettings:
    """The settings of one pretraining run (`albert_keras.jobs.pretrain`).

    Made from keyword arguments or from `albert-keras pretrain`'s flags, which are generated from
    these fields (`albert_keras_settings.settings_flags`); checked when made, so a bad value fails
    before anything is read or written. Frozen: `dataclasses.replace` gives a changed copy.

    Args:
        records: glob of training shards (`albert_keras_contracts.record_format`); `gs://` works.
        output_dir: the run's folder (`albert_keras_contracts.output_folder`): `model.keras`,
            `backbone.keras`, `summary.json`, `checkpoints/`, `logs/`; the same settings resume.
        preset: an `AlbertBackbone` preset.
        config: backbone arguments overriding the preset's (`--config num_layers=2`).
        sentence_objective: `"sop"`, `"nsp"` or `"none"`.
        ...: one per field below; each field's help says what it does.

    Example:
    >>> s = PretrainSettings(records="r/*.tfrecord", output_dir="run/", max_steps=200)
    >>> s.learning_rate, s.warmup_steps_or_default()
    (0.00176, 5)
    >>> PretrainSettings(records="r/*", output_dir="run/", batch_size=0)
    Traceback (most recent call last):
    ValueError: --batch_size=0 must be a positive integer
    """

    records: str = setting(help="glob of training TFRecord shards")
    output_dir: str = setting(help="the run's folder; the same settings resume a run")
    overwrite: bool = overwrite_setting("pretrain")
    preset: str = setting("albert_base", "an AlbertBackbone preset")
    config: dict = setting({}, "backbone arguments overriding the preset's", flag=False)
    sentence_objective: str = setting("sop", "the sentence loss", choices=SENTENCE_OBJECTIVES)
    batch_size: int = setting(32, "global batch size")
    max_steps: int = setting(10_000, "optimizer steps in all")
    learning_rate: float = setting(0.00176, "peak (LAMB)")
    warmup_steps: int | None = setting(None, "none: 2.5% of max_steps (official)")
    max_seq_length: int | None = setting(None, "none: the records'")
    max_predictions_per_seq: int | None = setting(None, "none: the records'")
    dynamic_masking: bool = setting(False, "re-mask every batch")
    eval_records: str | None = setting(None, "glob of held-out TFRecord shards")
    eval_steps: int = setting(100, "at most this many batches; 0: all")
    checkpoint_every: int = setting(1000, "steps")
    strategy: str = strategy_setting()
    deterministic: bool = deterministic_setting()
    mixed_precision: str = mixed_precision_setting()
    jit_compile: str = setting("auto", "XLA; auto: on except on a CPU", choices=JIT_COMPILE)
    steps_per_execution: int = setting(1, "steps per compiled call (large values help TPUs)")
    spm_model: str | None = setting(None, "copied beside the model")
    accept_old_text_path: bool = accept_old_text_path_setting("records")
    seed: int = setting(12345, "seeds the initial weights, the data order and dynamic masks")
    init_from: str | None = setting(
        None,
        "start from these weights (heads too when present): a .keras file, a run folder, a "
        "release name such as albert_base_v2, hf://ORG/NAME, a keras-hub name, a folder",
    )
    gradient_accumulation_steps: int = setting(
        1, "split each --batch_size batch into this many forward passes (same updates)"
    )

    def __post_init__(self):
        if isinstance(self.jit_compile, bool):  # jit_compile=True reads as "true"
            object.__setattr__(self, "jit_compile", str(self.jit_compile).lower())
        if self.sentence_objective is None:
            object.__setattr__(self, "sentence_objective", "none")
        check_choices(self)
        check_positive(
            self,
            "batch_size",
            "max_steps",
            "checkpoint_every",
            "steps_per_execution",
            "gradient_accumulation_steps",
        )
        check_training_numbers(self)

    def warmup_steps_or_default(self) -> int:
        """`warmup_steps`, or the official 2.5% of `max_steps` where it is `None`."""
        if self.warmup_steps is None:
            return round(self.max_steps * OFFICIAL_WARMUP_FRACTION)
        return self.warmup_steps
