"""`albert-keras pretrain`: the flags of `albert_keras.training.pretrain`, and its summary line."""

from __future__ import annotations

import argparse

from albert_keras_cli.config_flags import add_config_flag, parse_config_flags
from albert_keras_cli.job_arguments import (
    STRATEGIES,  # noqa: F401  (tests/cli checks it against albert_keras.training.strategy's)
    add_overwrite_flag,
    add_strategy_flag,
    job_arguments,
    print_run,
)
from pipelines.precision_names import PRECISIONS


def add_mixed_precision_flag(parser: argparse.ArgumentParser) -> None:
    """`--mixed_precision`, as every training command takes it."""
    parser.add_argument(
        "--mixed_precision",
        default="auto",
        choices=PRECISIONS,
        help="auto: bfloat16 where the hardware computes it natively (TPU, GPU >= 8.0, CPU with "
        "AVX512_BF16 / AMX and oneDNN), float16 on GPU 7.x, else float32; printed at start",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `albert-keras pretrain` flags."""
    parser.add_argument("--records", required=True, help="glob of training TFRecord shards")
    parser.add_argument("--output_dir", required=True)
    add_overwrite_flag(parser, "pretrain")
    parser.add_argument("--preset", default="albert_base", help="an AlbertBackbone preset")
    add_config_flag(parser, "override a preset argument")
    parser.add_argument("--sentence_objective", default="sop", choices=["sop", "nsp", "none"])
    parser.add_argument("--batch_size", type=int, default=32, help="global batch size")
    parser.add_argument("--max_steps", type=int, default=10_000)
    parser.add_argument("--learning_rate", type=float, default=0.00176, help="peak (LAMB)")
    parser.add_argument(
        "--warmup_steps", type=int, default=None, help="none: 2.5%% of max_steps (official)"
    )
    parser.add_argument("--max_seq_length", type=int, default=None, help="none: the records'")
    parser.add_argument(
        "--max_predictions_per_seq", type=int, default=None, help="none: the records'"
    )
    parser.add_argument("--dynamic_masking", action="store_true", help="re-mask every batch")
    parser.add_argument("--eval_records", default=None, help="glob of held-out TFRecord shards")
    parser.add_argument(
        "--eval_steps", type=int, default=100, help="at most this many batches; 0: all"
    )
    parser.add_argument("--checkpoint_every", type=int, default=1000, help="steps")
    add_strategy_flag(parser)
    add_mixed_precision_flag(parser)
    parser.add_argument("--jit_compile", default="auto", choices=["auto", "true", "false"])
    parser.add_argument("--steps_per_execution", type=int, default=1)
    parser.add_argument("--spm_model", default=None, help="copied beside the model")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument(
        "--init_from",
        default=None,
        help="start from these weights (heads too when present): a .keras file, a run folder, "
        "a release name such as albert_base_v2, hf://ORG/NAME, a keras-hub name, a folder",
    )
    parser.add_argument(
        "--gradient_accumulation_steps",
        type=int,
        default=1,
        help="split each --batch_size batch into this many forward passes (same updates)",
    )


def run(args: argparse.Namespace) -> int:
    """Runs `pretrain` with the parsed flags; prints where the outputs are."""
    from albert_keras.training.pretrain_job import pretrain

    summary = pretrain(
        **job_arguments(
            args,
            pretrain,
            config=parse_config_flags(args.config),
            sentence_objective=None
            if args.sentence_objective == "none"
            else args.sentence_objective,
        )
    )
    print_run("pretrained", summary, args.output_dir)
    return 0
