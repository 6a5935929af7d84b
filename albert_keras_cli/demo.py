"""`albert-keras demo`: the whole chain on an embedded corpus (`albert_keras.demo.run_demo`).

Importing this module imports no TensorFlow (`--help` stays fast); `run` does.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib

from albert_keras_cli.config_flags import add_config_flag, parse_config_flags

# Flag -> (type, help); the defaults are run_demo.DEFAULTS (`demo_defaults`).
_SETTINGS = {
    "vocab_size": (int, "SentencePiece pieces (a small corpus gets fewer)"),
    "max_seq_length": (int, "tokens per example"),
    "max_predictions_per_seq": (int, "masked positions per example"),
    "dupe_factor": (int, "differently masked copies of the training text"),
    "paragraphs_per_document": (int, "paragraphs per SOP document (text format)"),
    "pretrain_steps": (int, "pretraining steps"),
    "batch_size": (int, "pretraining and fine-tuning batch"),
    "learning_rate": (float, "LAMB's peak learning rate"),
    "warmup_steps": (int, "pretraining warmup steps"),
    "finetune_steps": (int, "fine-tuning steps (for each of the two models)"),
    "finetune_learning_rate": (float, "AdamWeightDecay's peak learning rate"),
    "corpus_megabytes": (float, "text read per source of the embedded corpus"),
    "seed": (int, "every random draw"),
}


def demo_defaults() -> dict:
    """`albert_keras.demo.run_demo.DEFAULTS`, read without importing `albert_keras` (whose
    `__init__` loads TensorFlow: `--help` must answer at once)."""
    spec = importlib.util.find_spec("albert_keras")
    path = pathlib.Path(spec.origin).parent / "demo" / "run_demo.py"
    module_spec = importlib.util.spec_from_file_location("albert_keras_cli._run_demo", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)  # imports the standard library and pipelines only
    return module.DEFAULTS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output_dir", default="demo_output", help="everything goes here")
    parser.add_argument("--corpus", help="glob(s) of your text; none: the embedded corpus")
    parser.add_argument("--heldout", help="glob(s) of held-out text (with --corpus)")
    parser.add_argument(
        "--input_format",
        default="text",
        choices=("text", "sentences"),
        help="text: prose; sentences: one a line, a blank line between documents",
    )
    add_config_flag(parser, "override a backbone argument of the demo's model")
    defaults = demo_defaults()
    for name, (kind, text) in _SETTINGS.items():
        parser.add_argument(f"--{name}", type=kind, default=defaults[name], help=text)
    parser.add_argument("--finetune_task", help="a GLUE task name (with --glue_dir); none: the "
                        "docstring-source task made from the corpus")  # fmt: skip
    parser.add_argument("--glue_dir", help="GLUE's download, for --finetune_task")


def check_arguments(args: argparse.Namespace) -> None:
    """Says what comes, before the seconds of loading TensorFlow (nothing to check here)."""
    print(f"albert-keras demo: loading TensorFlow, then 5 stages into {args.output_dir}/",
          flush=True)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from albert_keras.demo.run_demo import run_demo

    settings = {k: getattr(args, k) for k in _SETTINGS if getattr(args, k) is not None}
    run_demo(
        args.output_dir,
        corpus=args.corpus,
        heldout=args.heldout,
        input_format=args.input_format,
        config=parse_config_flags(args.config),
        finetune_task=args.finetune_task,
        glue_dir=args.glue_dir,
        **settings,
    )
    return 0
