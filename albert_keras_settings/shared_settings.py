"""The settings several jobs take, each worded once: `--overwrite`, `--strategy`,
`--deterministic`, `--mixed_precision`, and the fine-tuning jobs' `--spm_model`,
`--accept_old_text_path` and `--dropout`."""

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


def accept_old_text_path_setting(what: str) -> Any:
    """The `accept_old_text_path` setting (`albert_keras_contracts.text_path`), default False.

    Args:
        what: str. What the job reads that records a text path (`"records"`, `"model"`).
    """
    return setting(
        False,
        f"use {what} made by an older text path (ids other than the official ALBERT code's: "
        "'' read as \", no digit-comma split) as they are; without it they are refused",
    )


def dropout_setting() -> Any:
    """The fine-tuning jobs' `dropout` setting: before the new head, the official 0.1."""
    return setting(
        0.1,
        "dropout before the new head (the official 0.1); the draws are per replica, so a run "
        "over other replicas draws other masks (0: any replica layout trains alike)",
    )


def strategy_setting() -> Any:
    """The `strategy` setting (`albert_keras.training.get_strategy`), default `auto`."""
    return setting(
        "auto",
        "how training spreads over devices (albert_keras.training.get_strategy); auto: a TPU, "
        "else several workers (TF_CONFIG), else every GPU, else the CPU",
        choices=STRATEGIES,
    )


def deterministic_setting() -> Any:
    """The `deterministic` setting (TensorFlow's op determinism, docs/scaling.md), default False."""
    return setting(
        False,
        "TensorFlow's op determinism: a rerun repeats every bit, and several workers equal one "
        "process (docs/scaling.md); some steps run slower. It stays on in a Python process",
    )


def mixed_precision_setting() -> Any:
    """The `mixed_precision` setting (`albert_keras.training.choose_precision`), default `auto`."""
    return setting(
        "auto",
        "auto: bfloat16 where the hardware computes it natively (TPU, GPU >= 8.0, CPU with "
        "AVX512_BF16 / AMX and oneDNN), float16 on GPU 7.x, else float32; printed at start",
        choices=PRECISIONS,
    )
