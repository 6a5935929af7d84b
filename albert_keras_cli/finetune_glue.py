"""`albert-keras finetune-glue`: the flags of `albert_keras.training.finetune_glue`."""

from __future__ import annotations

import argparse

from albert_keras_cli.job_arguments import add_overwrite_flag, job_arguments
from albert_keras_cli.pretrain import add_mixed_precision_flag

# The trainable tasks of `albert_keras.glue.GLUE_TASKS` (tests/cli checks they agree): importing
# it here would load TensorFlow for `--help`.
TASKS = ("CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE", "WNLI")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--task", required=True, help=f"one of {', '.join(TASKS)} (MNLI also predicts AX)"
    )
    parser.add_argument("--glue_dir", help="GLUE's download: GLUE_DIR/SST-2/train.tsv, ...")
    parser.add_argument(
        "--model",
        required=True,
        help="a saved AlbertBackbone, AlbertPretrainer "
        "or AlbertClassifier (.keras); its backbone is fine-tuned",
    )
    parser.add_argument("--output_dir", required=True)
    add_overwrite_flag(parser, "finetune-glue")
    parser.add_argument(
        "--spm_model",
        help="SentencePiece .model; none: spm.model or the only *.model beside --model",
    )
    parser.add_argument(
        "--source",
        choices=("tsv", "tfds"),
        default="tsv",
        help="tsv: --glue_dir; tfds: tensorflow_datasets glue/* (network)",
    )
    parser.add_argument("--max_steps", type=int, help="none: the official steps for the task")
    parser.add_argument("--batch_size", type=int, help="none: the official batch for the task")
    parser.add_argument("--max_seq_length", type=int, help="none: the official length (512)")
    parser.add_argument(
        "--learning_rate", type=float, help="none: the official peak learning rate for the task"
    )
    parser.add_argument("--warmup_steps", type=int, help="none: the official warmup fraction")
    parser.add_argument("--eval_every", type=int, help="steps between dev evaluations; none: the official "
                        "checkpoint interval")  # fmt: skip
    parser.add_argument(
        "--patience",
        type=int,
        default=5,
        help="stop after this many evaluations without improvement (0: never)",
    )
    parser.add_argument("--seed", type=int, default=12345)
    add_mixed_precision_flag(parser)
    parser.add_argument(
        "--jit_compile",
        choices=("auto", "true", "false"),
        default="auto",
        help="XLA: auto is Keras's choice (on for GPU / TPU); true also pays on CPU for long "
        "runs and for predicting (benchmarks/inference.py --xla on), after a one-time compile",
    )


def run(args: argparse.Namespace) -> int:
    """Runs `finetune_glue` with the parsed flags; prints the dev scores."""
    from albert_keras.training.finetune_glue import finetune_glue
    from albert_keras.training.warmup_early_stopping import early_stop_note

    if args.source == "tsv" and not args.glue_dir:
        raise ValueError("--glue_dir is required with --source tsv")
    summary = finetune_glue(
        **job_arguments(
            args,
            finetune_glue,
            jit_compile={"auto": "auto", "true": True, "false": False}[args.jit_compile],
            verbose="auto",
        )
    )
    scores = ", ".join(f"{k} {v:.4f}" for k, v in summary["metrics"].items())
    print(
        f"{summary['task']} {summary['split']} ({summary['num_examples']} examples): {scores}"
        f" -> {args.output_dir}{early_stop_note(summary)}"
    )
    return 0
