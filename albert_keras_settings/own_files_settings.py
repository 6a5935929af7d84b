"""`OwnFilesSettings`: what `finetune-tokens` and `finetune-choice` share, each default once."""

from __future__ import annotations

import dataclasses

from albert_keras_settings.setting import (
    check_choices,
    check_number,
    check_positive_values,
    paths_as_strings,
)
from albert_keras_settings.setting import setting as _setting
from albert_keras_settings.shared_settings import (
    accept_old_text_path_setting,
    deterministic_setting,
    dropout_setting,
    fine_tuning_spm_setting,
    mixed_precision_setting,
    strategy_setting,
)

PATHS = ("train_file", "validation_file", "test_file", "init_from", "output_dir", "spm_model")


@dataclasses.dataclass(frozen=True, kw_only=True)
class OwnFilesSettings:
    """The settings of fine-tuning on a user's own train / validation (/ test) files, shared by
    `FinetuneTokensSettings` and `FinetuneChoiceSettings` (which set `command` and the
    defaults that differ).

    Args:
        train_file, validation_file, test_file: the data (the job's reader says the format).
        init_from: the `.keras` model whose backbone is fine-tuned.
        output_dir: the run's folder: new, empty or an earlier run's of the same command.
        ...: one per field below; each field's help says what it does.
    """

    train_file: str = _setting(help="the training file")
    validation_file: str = _setting(help="the validation file: scored every epoch and at the end")
    test_file: str | None = _setting(None, "a file to predict (its labels, if any, are not read)")
    init_from: str = _setting(
        help="start from these weights: a saved AlbertBackbone, AlbertPretrainer or task model "
        "(.keras); its backbone is fine-tuned"
    )
    output_dir: str = _setting(
        help="the run's folder: model.keras, metrics.json, validation and test predictions"
    )
    spm_model: str | None = fine_tuning_spm_setting()
    accept_old_text_path: bool = accept_old_text_path_setting("a model")
    max_seq_length: int = _setting(128, "pieces per packed sequence ([CLS] and [SEP] included)")
    batch_size: int = _setting(16, "examples per step")
    epochs: int = _setting(3, "passes over the training file")
    max_steps: int | None = _setting(None, "stop after this many steps; none: the epochs' steps")
    learning_rate: float = _setting(5e-5, "the peak learning rate (AdamWeightDecay)")
    warmup_proportion: float = _setting(0.1, "the share of steps the learning rate rises over")
    dropout: float = dropout_setting()
    seed: int = _setting(12345, "seeds the head, dropout and the data order")
    strategy: str = strategy_setting()
    deterministic: bool = deterministic_setting()
    mixed_precision: str = mixed_precision_setting()

    def __post_init__(self):
        paths_as_strings(self, *PATHS)
        check_choices(self)
        check_positive_values(
            max_seq_length=self.max_seq_length, batch_size=self.batch_size, epochs=self.epochs
        )
        if self.max_steps is not None:
            check_positive_values(max_steps=self.max_steps)
        if self.max_seq_length < 3:
            raise ValueError(f"--max_seq_length={self.max_seq_length} leaves no room for text")
        check_number("learning_rate", self.learning_rate, above=0)
        check_number("warmup_proportion", self.warmup_proportion, at_least=0, below=1)
        check_number("dropout", self.dropout, at_least=0, below=1)
