"""`albert-keras demo` / `python -m albert_keras.demo`: the whole chain on an embedded corpus."""

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output_dir", default="demo_output")
    parser.add_argument("--corpus", help="glob(s) of your text (default: installed docstrings)")
    parser.add_argument("--heldout", help="glob(s) of held-out text (with --corpus)")
    parser.add_argument("--input_format", default="text", choices=("text", "sentences"))
    parser.add_argument("--vocab_size", type=int, default=8000)
    parser.add_argument("--max_seq_length", type=int, default=64)
    parser.add_argument("--dupe_factor", type=int, default=4)
    parser.add_argument(
        "--config", default="{}", help='backbone overrides as JSON, e.g. {"num_layers": 6}'
    )
    parser.add_argument("--pretrain_steps", type=int, default=600)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--finetune_task", help="a GLUE task name (with --glue_dir)")
    parser.add_argument("--glue_dir")
    parser.add_argument("--finetune_steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=12345)


def run(args: argparse.Namespace) -> int:
    from albert_keras.demo.run_demo import run_demo

    run_demo(
        args.output_dir,
        corpus=args.corpus,
        heldout=args.heldout,
        input_format=args.input_format,
        vocab_size=args.vocab_size,
        max_seq_length=args.max_seq_length,
        dupe_factor=args.dupe_factor,
        config=json.loads(args.config),
        pretrain_steps=args.pretrain_steps,
        batch_size=args.batch_size,
        finetune_task=args.finetune_task,
        glue_dir=args.glue_dir,
        finetune_steps=args.finetune_steps,
        seed=args.seed,
    )
    return 0
