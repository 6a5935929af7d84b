"""`DistillSettings`: every setting of `albert-keras distill`, each default written once."""

from __future__ import annotations

import dataclasses
import math

from albert_keras_settings.pretrain_settings import PretrainSettings, check_training_numbers
from albert_keras_settings.setting import REQUIRED, check_choices, check_positive, setting
from albert_keras_settings.shared_settings import overwrite_setting

# How the student starts: the teacher's layers, random weights, or the first where it can.
STUDENT_INITS = ("auto", "teacher", "random")
# Where `AlbertDistiller`'s cosine term is taken: the masked positions, or every real token.
COSINE_POSITIONS = ("masked", "tokens")

_PRETRAINING = {field.name: field for field in dataclasses.fields(PretrainSettings)}


def _as_in_pretraining(name: str):
    """The `PretrainSettings` field `name` again (its default, help and choices): distillation
    trains as pretraining does, so these settings are pretraining's, written once there."""
    field = _PRETRAINING[name]
    meta = field.metadata
    default = REQUIRED if field.default is dataclasses.MISSING else field.default
    return setting(default, meta["help"], choices=meta["choices"], metavar=meta["metavar"])


def check_distillation_loss(
    temperature: float,
    soft_target_weight: float,
    mlm_weight: float,
    cosine_weight: float,
    cosine_positions: str,
) -> None:
    """Raises `ValueError` for a loss `AlbertDistiller` cannot make: T <= 0, a negative weight,
    all weights 0, or unknown cosine positions. The settings and the model both check with it.

    Example:
    >>> check_distillation_loss(2.0, 5.0, 2.0, 0.0, "masked")
    >>> check_distillation_loss(2.0, 0.0, 0.0, 0.0, "masked")
    Traceback (most recent call last):
    ValueError: loss weights (0.0, 0.0, 0.0): each must be >= 0 and one > 0
    """
    if not math.isfinite(temperature) or temperature <= 0:  # (nan <= 0 is False)
        raise ValueError(f"temperature={temperature} must be > 0")
    weights = (soft_target_weight, mlm_weight, cosine_weight)
    finite = all(math.isfinite(weight) for weight in weights)
    if not finite or min(weights) < 0 or max(weights) == 0:
        raise ValueError(f"loss weights {weights}: each must be >= 0 and one > 0")
    if cosine_positions not in COSINE_POSITIONS:
        raise ValueError(f"cosine_positions={cosine_positions!r} is not one of {COSINE_POSITIONS}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class DistillSettings:
    """The settings of one distillation run (`albert_keras.distill.distill`).

    Made from keyword arguments or from `albert-keras distill`'s flags, which are generated from
    these fields (`albert_keras_settings.settings_flags`); checked when made, so a bad value fails
    before anything is read or written. Frozen: `dataclasses.replace` gives a changed copy.

    Args:
        teacher: a saved `AlbertPretrainer` (`model.keras` of `albert-keras pretrain`).
        student: `"teacher"` (its architecture), an `AlbertBackbone` preset or a JSON file of
            backbone arguments; the vocabulary is always the teacher's.
        config: student backbone arguments overriding those (`--config num_layers=2`).
        records: glob of training shards (the teacher's, ideally).
        output_dir: the run's folder (`albert_keras_contracts.output_folder`); the same settings resume.
        student_init: `"teacher"` (`warm_start`), `"random"`, or `"auto"`: the teacher's
            weights where the widths allow it.
        temperature, soft_target_weight, mlm_weight, cosine_weight, cosine_positions: see
            `AlbertDistiller` (DistilBERT's 2.0, 5.0, 2.0, 1.0).
        batch_size ... seed (but spm_model): `PretrainSettings`' own, defaults included.
        spm_model: copied beside the student; `None`: the only `*.model` beside the teacher.

    Example:
    >>> s = DistillSettings(teacher="t.keras", records="r/*", output_dir="student/",
    ...                     max_steps=200)
    >>> s.student, s.student_init, s.batch_size, s.warmup_steps_or_default()
    ('teacher', 'auto', 32, 5)
    >>> DistillSettings(teacher="t.keras", records="r/*", output_dir="s/", temperature=0)
    Traceback (most recent call last):
    ValueError: temperature=0 must be > 0
    """

    teacher: str = setting(help="a saved AlbertPretrainer (.keras)")
    student: str = setting(
        "teacher",
        "'teacher' (its architecture), an AlbertBackbone preset, or a JSON file of backbone "
        "arguments; --config overrides on top (e.g. --config num_layers=2)",
    )
    config: dict = setting({}, "student backbone arguments overriding those", flag=False)
    records: str = _as_in_pretraining("records")
    output_dir: str = _as_in_pretraining("output_dir")
    overwrite: bool = overwrite_setting("distill")
    student_init: str = setting(
        "auto",
        "teacher: copy the teacher's layers (every other one; the shared block itself); "
        "random; auto: teacher when the widths match",
        choices=STUDENT_INITS,
    )
    temperature: float = setting(2.0, "T: softens both distributions of the soft-target term")
    soft_target_weight: float = setting(5.0, "weight of the soft-target term")
    mlm_weight: float = setting(2.0, "weight of the masked-LM term (the records' labels)")
    cosine_weight: float = setting(1.0, "weight of the hidden states' cosine term")
    cosine_positions: str = setting(
        "masked",
        "where the cosine term is taken: the masked positions, or every real token (DistilBERT)",
        choices=COSINE_POSITIONS,
    )
    batch_size: int = _as_in_pretraining("batch_size")
    max_steps: int = _as_in_pretraining("max_steps")
    learning_rate: float = _as_in_pretraining("learning_rate")
    warmup_steps: int | None = _as_in_pretraining("warmup_steps")
    dynamic_masking: bool = _as_in_pretraining("dynamic_masking")
    eval_records: str | None = _as_in_pretraining("eval_records")
    eval_steps: int = _as_in_pretraining("eval_steps")
    checkpoint_every: int = _as_in_pretraining("checkpoint_every")
    strategy: str = _as_in_pretraining("strategy")
    deterministic: bool = _as_in_pretraining("deterministic")
    mixed_precision: str = _as_in_pretraining("mixed_precision")
    jit_compile: str = _as_in_pretraining("jit_compile")
    steps_per_execution: int = _as_in_pretraining("steps_per_execution")
    spm_model: str | None = setting(None, "copied beside the student; none: the teacher's")
    accept_old_text_path: bool = _as_in_pretraining("accept_old_text_path")
    seed: int = _as_in_pretraining("seed")

    def __post_init__(self):
        if self.config is None:  # config=None reads as no overrides, as before the settings
            object.__setattr__(self, "config", {})
        if isinstance(self.jit_compile, bool):  # jit_compile=True reads as "true"
            object.__setattr__(self, "jit_compile", str(self.jit_compile).lower())
        check_choices(self)
        check_positive(self, "batch_size", "max_steps", "checkpoint_every", "steps_per_execution")
        check_distillation_loss(
            self.temperature,
            self.soft_target_weight,
            self.mlm_weight,
            self.cosine_weight,
            self.cosine_positions,
        )
        check_training_numbers(self)

    def warmup_steps_or_default(self) -> int:
        """`warmup_steps`, or the official 2.5% of `max_steps` where it is `None`, as
        pretraining's (`PretrainSettings.warmup_steps_or_default`)."""
        return PretrainSettings.warmup_steps_or_default(self)
