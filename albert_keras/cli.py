"""The `albert-keras` command: a thin shell over functions that tests call directly.

Each subcommand lives in its own module, which provides `add_arguments(parser)` and
`run(args) -> int`. Modules are imported only when their subcommand runs, so `--help` is fast.
"""

import argparse
import importlib
import sys

SUBCOMMANDS = {
    "pretrain": ("albert_keras.training.pretrain_job", "Pretrain on TFRecord shards."),
    "finetune-glue": (
        "albert_keras.training.finetune_glue",
        "Fine-tune and evaluate on a GLUE task.",
    ),
    "distill": (
        "albert_keras.distill.distill_job",
        "Distil a pretrained ALBERT into a smaller student.",
    ),
    "convert": ("albert_keras.convert.convert_command", "Import or export checkpoints."),
    "demo": ("albert_keras.demo", "Run the whole chain on an embedded corpus."),
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="albert-keras", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    # Only the chosen subcommand's module is imported (TensorFlow start-up is seconds).
    chosen = next((a for a in argv if a in SUBCOMMANDS), None)
    modules = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text)
        if name == chosen:
            modules[name] = importlib.import_module(module_name)
            modules[name].add_arguments(sub)
    args = parser.parse_args(argv)
    try:
        return int(modules[args.command].run(args) or 0)
    except (ValueError, FileNotFoundError) as error:
        print(f"albert-keras {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
