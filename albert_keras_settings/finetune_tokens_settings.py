"""`FinetuneTokensSettings`: every setting of `albert-keras finetune-tokens`."""

from __future__ import annotations

import dataclasses

from albert_keras_settings.own_files_settings import OwnFilesSettings
from albert_keras_settings.setting import setting
from albert_keras_settings.shared_settings import overwrite_setting


@dataclasses.dataclass(frozen=True, kw_only=True)
class FinetuneTokensSettings(OwnFilesSettings):
    """The settings of one token-tagging run (`albert_keras.jobs.finetune_tokens_job`): CoNLL-
    style files (one word and its tag a line, a blank line between sentences).

    Example:
    >>> s = FinetuneTokensSettings(train_file="train.txt", validation_file="dev.txt",
    ...                            init_from="albert.keras", output_dir="ner/")
    >>> s.max_seq_length, s.learning_rate, s.epochs
    (128, 5e-05, 3)
    >>> FinetuneTokensSettings(train_file="train.txt", validation_file="dev.txt",
    ...                        init_from="albert.keras", output_dir="ner/", batch_size=0)
    Traceback (most recent call last):
    ValueError: --batch_size=0 must be a positive integer
    """

    train_file: str = setting(help="CoNLL-style training file: 'WORD ... TAG' a line")
    validation_file: str = setting(help="CoNLL-style validation file: scored at the end")
    overwrite: bool = overwrite_setting("finetune-tokens")
