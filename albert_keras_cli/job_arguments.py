"""What the training commands share that their settings classes do not give: the last line
(`print_run`), and `--overwrite` for the commands without a settings class."""

from __future__ import annotations

import argparse

from albert_keras_settings.shared_settings import overwrite_help


def print_run(verb: str, summary: dict, output_dir: str) -> None:
    """Prints a training job's last line: its steps and final means, saying which they are:
    held-out (`--eval_records`, with the examples counted) or, without held-out records, the
    training means of the last checkpoint period.

    Example:
    >>> print_run("pretrained", {"steps": {"total": 10}, "eval": {}, "train": {"loss": 2.5}}, "run/")
    pretrained 10 steps -> run/: training means of the last period (no --eval_records): loss 2.5000
    >>> print_run("pretrained", {"steps": {"total": 10}, "eval": {"loss": 2.75},
    ...                          "eval_examples": 64, "train": {"loss": 2.5}}, "run/")
    pretrained 10 steps -> run/: held-out (64 examples): loss 2.7500
    """
    if summary["eval"]:
        examples = summary.get("eval_examples")
        which = "held-out" + (f" ({examples:,} examples)" if examples else "")
        final = summary["eval"]
    else:
        which, final = "training means of the last period (no --eval_records)", summary["train"]
    print(
        f"{verb} {summary['steps']['total']} steps -> {output_dir}: {which}: "
        + ", ".join(f"{k} {v:.4f}" for k, v in final.items())
    )


def add_overwrite_flag(parser: argparse.ArgumentParser, command: str) -> None:
    """`--overwrite`, worded for `command` (`"study"`) by `overwrite_help`.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_overwrite_flag(parser, "study")
    >>> parser.parse_args(["--overwrite"]).overwrite
    True
    """
    parser.add_argument("--overwrite", action="store_true", help=overwrite_help(command))
