"""The `albert-keras` command, a thin shell over the jobs: `pretrain`, `finetune-glue`,
`finetune-squad`, `finetune-tokens`, `finetune-choice`, `distill`, `study`, `convert`,
`export`, `predict`, `demo`.

Each subcommand has a module with `add_arguments(parser)` and `run(args) -> int`. Only the chosen
subcommand's module is imported, and those here import no TensorFlow until `run`, so `--help`,
`--version` and argument errors answer at once. TensorFlow's logging is quieted before it loads
(`--verbose` keeps it). Bad input, a refused output folder, a full disk or a read-only folder
end in one line and exit 2; Ctrl-C in one line saying what was kept and what a rerun does
(exit 130).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import os
import sys

from albert_keras_cli import __version__, prompt_exit
from albert_keras_cli.help_formatter import HelpFormatter
from albert_keras_cli.quiet_logging import configure_logging, import_tensorflow
from albert_keras_contracts.output_folder import os_error_line

SUBCOMMANDS = {
    "pretrain": ("albert_keras_cli.pretrain", "Pretrain on TFRecord shards."),
    "finetune-glue": ("albert_keras_cli.finetune_glue", "Fine-tune and evaluate on a GLUE task."),
    "finetune-squad": ("albert_keras_cli.finetune_squad", "Fine-tune and evaluate on SQuAD."),
    "finetune-tokens": (
        "albert_keras_cli.finetune_tokens",
        "Fine-tune a word tagger (NER, POS) on CoNLL-style files.",
    ),
    "finetune-choice": (
        "albert_keras_cli.finetune_choice",
        "Fine-tune multiple choice on RACE-style JSON or SWAG-style CSV.",
    ),
    "distill": ("albert_keras_cli.distill", "Distil a pretrained ALBERT into a smaller student."),
    "convert": ("albert_keras_cli.convert", "Import or export checkpoints."),
    "demo": ("albert_keras_cli.demo", "Run the whole chain on an embedded corpus."),
    "export": ("albert_keras_cli.export", "Export a classifier as a SavedModel over raw strings."),
    "predict": (
        "albert_keras_cli.predict",
        "Score a saved model on GLUE or SQuAD dev, or predict text and answer questions.",
    ),
    "study": ("albert_keras_cli.study", "Run the paper's ablations (Tables 3-5) end to end."),
}


# `albert-keras --help`'s first line: whole sentences (the module docstring's first line stops
# mid-sentence).
DESCRIPTION = (
    "ALBERT (A Lite BERT) in Keras: pretrain, fine-tune, distil, convert, export and predict. "
    "Run `albert-keras COMMAND --help` for a command's flags and their defaults."
)


def main(argv: list[str] | None = None) -> int:
    """Runs the command line `argv` (default `sys.argv[1:]`); returns the exit code.

    Without `argv` (as the `albert-keras` program), the process also ends within a moment of
    the command's last line, its exit handlers run but not Python's teardown of TensorFlow
    (`albert_keras_cli.prompt_exit`).
    """
    if argv is not None:
        return _run(list(argv))
    prompt_exit.exit_promptly()
    try:
        code = _run(sys.argv[1:])
    except SystemExit as stop:  # --help, a flag error: argparse's own exit
        prompt_exit.set_exit_code(stop.code)
        raise
    prompt_exit.set_exit_code(code)
    return code


def _run(argv: list[str]) -> int:
    """`main`'s work: parses `argv`, runs the command, returns the exit code."""
    verbose = "--verbose" in argv
    configure_logging(verbose)
    parser = argparse.ArgumentParser(prog="albert-keras", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"albert-keras {__version__}")
    # Before or after the subcommand: `albert-keras --verbose pretrain ...` or `... pretrain
    # --verbose`; read from argv above, before anything imports TensorFlow.
    common = argparse.ArgumentParser(add_help=False)
    for flags in (parser, common):
        flags.add_argument(
            "--verbose",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show TensorFlow's own log lines (hidden by default)",
        )
    subparsers = parser.add_subparsers(dest="command", required=True)
    chosen = next((a for a in argv if a in SUBCOMMANDS), None)
    modules = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = subparsers.add_parser(
            name,
            help=help_text,
            parents=[common],
            # Every flag's default in its help (or "(required)"), the same way in every command.
            formatter_class=HelpFormatter,
        )
        if name == chosen:
            if not module_name.startswith("albert_keras_cli."):
                import_tensorflow(verbose)  # the module loads it: quietly, first
            modules[name] = importlib.import_module(module_name)
            modules[name].add_arguments(sub)
    args = parser.parse_args(argv)
    try:
        # A command's own flag checks (files that must exist, ...) answer before TensorFlow.
        check = getattr(modules[args.command], "check_arguments", None)
        if check is not None:
            check(args)
        import_tensorflow(verbose)  # every job needs it; loaded here with its start-up lines hidden
        return int(modules[args.command].run(args) or 0)
    except (ValueError, FileNotFoundError) as error:
        print(f"albert-keras {args.command}: error: {error}", file=sys.stderr)
        return 2
    except IsADirectoryError as error:
        # A folder given where a file is expected: said so, not a traceback (issue 43).
        where = error.filename or "an input"
        print(f"albert-keras {args.command}: error: {where} is a folder: give a file",
              file=sys.stderr)  # fmt: skip
        return 2
    except OSError as error:
        if error.errno not in _ONE_LINE_ERRNOS:
            raise
        where = getattr(args, "output_dir", None) or getattr(args, "output", None) or "the output"
        print(f"albert-keras {args.command}: error: {os_error_line(error, where)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Files are renamed into place only when whole and the lock goes with the process:
        # what an interrupted command leaves is said in one line, not a 40-line traceback.
        print(f"\nalbert-keras {args.command}: interrupted; {interrupted(args)}", file=sys.stderr)
        return 130


# A full disk, a read-only or forbidden folder: the user's to fix, said in one line.
_ONE_LINE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS)
# Commands whose rerun continues from checkpoints in --output_dir/checkpoints.
_RESUMABLE = ("pretrain", "distill")


def interrupted(args: argparse.Namespace) -> str:
    """What an interrupted command kept, and what rerunning it does.

    Example:
    >>> interrupted(argparse.Namespace(command="finetune-glue", output_dir="out"))
    'fine-tuning keeps no checkpoint: rerun the same command to start it again'
    """
    output_dir = getattr(args, "output_dir", None)
    if args.command in _RESUMABLE and output_dir:
        state = os.path.join(output_dir, "checkpoints", "checkpoint.json")
        try:
            with open(state, encoding="utf-8") as file:
                step = json.load(file)["step"]
        except (OSError, ValueError, KeyError, TypeError):
            return "no checkpoint was saved yet: rerun the same command to start again"
        return (
            f"the checkpoint of step {step} is kept in {os.path.dirname(state)}: "
            "rerun the same command to resume from it"
        )
    if args.command == "study":
        return (
            f"the finished runs and the last checkpoint of the one in progress are kept in "
            f"{output_dir}: rerun the same command to resume"
        )
    if args.command.startswith("finetune"):
        return "fine-tuning keeps no checkpoint: rerun the same command to start it again"
    return "only whole files were kept: rerun the same command to start it again"


if __name__ == "__main__":
    sys.exit(main())
