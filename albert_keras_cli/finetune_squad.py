"""`albert-keras finetune-squad`: the flags of `albert_keras.training.finetune_squad`."""

from __future__ import annotations

import argparse

from albert_keras_cli.job_arguments import add_overwrite_flag, add_strategy_flag, job_arguments
from albert_keras_cli.pretrain import add_mixed_precision_flag


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", required=True, choices=("1.1", "2.0"))
    parser.add_argument("--train_file", help="SQuAD JSON for training (train-v2.0.json)")
    parser.add_argument("--predict_file", help="SQuAD JSON to predict (dev-v2.0.json)")
    parser.add_argument(
        "--source",
        choices=("json", "tfds"),
        default="json",
        help="json: --train_file / --predict_file; tfds: tensorflow_datasets squad/v1.1 or "
        "squad/v2.0 (network on first use; --tfds_data_dir)",
    )
    parser.add_argument("--tfds_data_dir", help="tensorflow_datasets data folder")
    parser.add_argument(
        "--model", required=True, help="a saved AlbertBackbone / AlbertPretrainer / any model "
        "with a .backbone (.keras); its backbone is fine-tuned",
    )  # fmt: skip
    parser.add_argument("--output_dir", required=True)
    add_overwrite_flag(parser, "finetune-squad")
    parser.add_argument("--spm_model", help="none: spm.model or the only *.model beside --model")
    parser.add_argument("--head", choices=("simple", "v2"), help="none: simple (1.1), v2 (2.0)")
    parser.add_argument("--max_seq_length", type=int, default=384)
    parser.add_argument("--doc_stride", type=int, default=128)
    parser.add_argument("--max_query_length", type=int, default=64)
    parser.add_argument("--batch_size", type=int, default=48)
    parser.add_argument("--epochs", type=float, default=2.0, help="0: predict with the model as is")
    parser.add_argument("--learning_rate", type=float, help="none: 5e-5 (1.1), 3e-5 (2.0)")
    parser.add_argument("--warmup_proportion", type=float, default=0.1)
    parser.add_argument("--n_best_size", type=int, default=20)
    parser.add_argument("--max_answer_length", type=int, default=30)
    add_strategy_flag(parser)
    parser.add_argument("--seed", type=int, default=12345)
    add_mixed_precision_flag(parser)


def run(args: argparse.Namespace) -> int:
    """Runs `finetune_squad` with the parsed flags; prints the scores."""
    from albert_keras.training.finetune_squad import finetune_squad

    summary = finetune_squad(**job_arguments(args, finetune_squad, verbose="auto"))
    scores = ", ".join(
        f"{k} {v:.2f}" for k, v in summary.get("metrics", {}).items() if isinstance(v, float)
    )
    print(f"SQuAD {args.version}: {summary['predict_examples']} questions {scores} "
          f"-> {args.output_dir}")  # fmt: skip
    return 0
