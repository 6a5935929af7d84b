"""`FinetuneChoiceSettings`: every setting of `albert-keras finetune-choice`."""

from __future__ import annotations

import dataclasses

from albert_keras_settings.own_files_settings import OwnFilesSettings
from albert_keras_settings.setting import setting
from albert_keras_settings.shared_settings import overwrite_setting

# `albert_keras.multiple_choice` says what each holds; "auto": swag for .csv, else race.
CHOICE_FORMATS = ("auto", "race", "swag")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FinetuneChoiceSettings(OwnFilesSettings):
    """The settings of one multiple-choice run (`albert_keras.jobs.finetune_choice_job`):
    RACE-style JSON or SWAG-style CSV files.

    Example:
    >>> s = FinetuneChoiceSettings(train_file="train.csv", validation_file="val.csv",
    ...                            init_from="albert.keras", output_dir="swag/")
    >>> s.format, s.learning_rate, s.batch_size
    ('auto', 1e-05, 8)
    """

    train_file: str = setting(
        help="training file: RACE-style JSON (file, JSON lines or a folder of them) or SWAG CSV"
    )
    format: str = setting(
        "auto", "race, swag, or auto: swag for .csv files", choices=CHOICE_FORMATS
    )
    # Each example is as many sequences as it has options: RACE's official 32 examples of 4
    # options do not fit most accelerators, and tiny batches fit the CPU.
    batch_size: int = setting(8, "examples per step (each is one sequence per option)")
    # ALBERT's official RACE learning rate (its README's RACE row).
    learning_rate: float = setting(1e-5, "the peak learning rate (AdamWeightDecay)")
    overwrite: bool = overwrite_setting("finetune-choice")
