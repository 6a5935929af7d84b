"""`job_arguments`: a command's parsed flags as its job function's keyword arguments; the
`--overwrite` flag every training command shares."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable

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
    """Prints a training job's last line: its steps and final (held-out, else training) means.

    Example:
    >>> print_run("pretrained", {"steps": {"total": 10}, "eval": {}, "train": {"loss": 2.5}}, "run/")
    pretrained 10 steps -> run/: loss 2.5000
    """
    final = summary["eval"] or summary["train"]
    print(
        f"{verb} {summary['steps']['total']} steps -> {output_dir}: "
        + ", ".join(f"{k} {v:.4f}" for k, v in final.items())
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
