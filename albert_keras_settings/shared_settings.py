"""The settings several jobs take, each worded once: `--overwrite`, `--strategy`,
`--mixed_precision`, and the fine-tuning jobs' `--spm_model`."""

from __future__ import annotations

from typing import Any

from albert_keras_settings.choices import PRECISIONS, STRATEGIES
from albert_keras_settings.setting import setting


def overwrite_help(command: str) -> str:
    """`--overwrite`'s help, worded for `command` (`"pretrain"`): what it removes, and only that.

    Example:
    >>> overwrite_help("pretrain")[:60]
    'when --output_dir holds an earlier `albert-keras pretrain` r'
    """
    return (
        f"when --output_dir holds an earlier `albert-keras {command}` run with other arguments, "
        "remove only the files that run wrote (listed in its .albert-keras.json) and start "
        "anew; other files, and folders of other commands, are never touched. Without it such "
        "a folder is refused; the same arguments resume"
    )


def overwrite_setting(command: str) -> Any:
    """The `overwrite` setting of `albert-keras COMMAND` (default False)."""
    return setting(False, overwrite_help(command))


def fine_tuning_spm_setting() -> Any:
    """The fine-tuning jobs' `spm_model` setting: by default the vocabulary beside `--init_from`."""
    return setting(
        None, "SentencePiece .model; none: spm.model or the only *.model beside --init_from"
    )


def strategy_setting() -> Any:
    """The `strategy` setting (`albert_keras.training.get_strategy`), default `auto`."""
    return setting(
        "auto",
        "how training spreads over devices (albert_keras.training.get_strategy); auto: a TPU, "
        "else several workers (TF_CONFIG), else every GPU, else the CPU",
        choices=STRATEGIES,
    )


def mixed_precision_setting() -> Any:
    """The `mixed_precision` setting (`albert_keras.training.choose_precision`), default `auto`."""
    return setting(
        "auto",
        "auto: bfloat16 where the hardware computes it natively (TPU, GPU >= 8.0, CPU with "
        "AVX512_BF16 / AMX and oneDNN), float16 on GPU 7.x, else float32; printed at start",
        choices=PRECISIONS,
    )
