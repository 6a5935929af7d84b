"""`job_arguments`: a command's parsed flags as its job function's keyword arguments; the
flags several commands share (`--overwrite`, `--strategy`), defined once."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable

from albert_keras_settings.choices import PRECISIONS, STRATEGIES

# Flags of the command line itself (`--verbose` shows TensorFlow's log lines), never a job's.
CLI_FLAGS = ("command", "verbose")


def job_arguments(args: argparse.Namespace, job: Callable, **values) -> dict:
    """The keyword arguments of `job` that `args` holds, by name, with `values` on top.

    Every command's flags are named after its job function's parameters (`--batch_size` ->
    `batch_size`), so one mapping serves every command; `values` sets the ones a flag does not
    give as they are (`config` parsed from `--config`, `"none"` read as `None`, ...).

    Args:
        args: the parsed flags.
        job: the function the command runs (e.g. `albert_keras.training.pretrain`).
        **values: arguments set here rather than read from `args`.

    Example:
    >>> def job(records, *, batch_size=32, config=None):
    ...     pass
    >>> flags = argparse.Namespace(records="r/*", batch_size=8, config=["num_layers=2"], verbose=1)
    >>> job_arguments(flags, job, config={"num_layers": 2})
    {'records': 'r/*', 'batch_size': 8, 'config': {'num_layers': 2}}
    """
    parameters = inspect.signature(job).parameters
    unknown = sorted(set(values) - set(parameters))
    if unknown:
        raise TypeError(f"{job.__name__} takes no argument(s) {', '.join(unknown)}")
    arguments = {
        name: getattr(args, name)
        for name in parameters
        if hasattr(args, name) and name not in CLI_FLAGS
    }
    arguments.update(values)
    return arguments


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


def add_strategy_flag(parser: argparse.ArgumentParser) -> None:
    """`--strategy`, as every command that trains across devices takes it.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_strategy_flag(parser)
    >>> parser.parse_args(["--strategy", "mirrored"]).strategy
    'mirrored'
    """
    parser.add_argument(
        "--strategy",
        default="auto",
        choices=STRATEGIES,
        help="how training spreads over devices (albert_keras.training.get_strategy); auto: "
        "a TPU, else several workers (TF_CONFIG), else every GPU, else the CPU",
    )


def add_mixed_precision_flag(parser: argparse.ArgumentParser) -> None:
    """`--mixed_precision`, as every training command takes it."""
    parser.add_argument(
        "--mixed_precision",
        default="auto",
        choices=PRECISIONS,
        help="auto: bfloat16 where the hardware computes it natively (TPU, GPU >= 8.0, CPU with "
        "AVX512_BF16 / AMX and oneDNN), float16 on GPU 7.x, else float32; printed at start",
    )


def add_overwrite_flag(parser: argparse.ArgumentParser, command: str) -> None:
    """`--overwrite`, worded for `command` (`"pretrain"`): what it removes, and only that.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_overwrite_flag(parser, "pretrain")
    >>> parser.parse_args(["--overwrite"]).overwrite
    True
    """
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help=f"when --output_dir holds an earlier `albert-keras {command}` run with other "
        "arguments, remove only the files that run wrote (listed in its .albert-keras.json) "
        "and start anew; other files, and folders of other commands, are never touched. "
        "Without it such a folder is refused; the same arguments resume",
    )
