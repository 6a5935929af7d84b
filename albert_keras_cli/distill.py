"""`albert-keras distill`: the flags of `albert_keras.distill.distill`, and its summary line."""

from __future__ import annotations

import argparse

from albert_keras_cli.config_flags import add_config_flag, parse_config_flags
from albert_keras_cli.job_arguments import (
    add_overwrite_flag,
    add_strategy_flag,
    job_arguments,
    print_run,
)
from albert_keras_cli.pretrain import add_mixed_precision_flag

# `albert_keras.distill`'s STUDENT_INITS and COSINE_POSITIONS (tests/distill checks they agree):
# importing it here would load TensorFlow for `--help`.
STUDENT_INITS = ("auto", "teacher", "random")
COSINE_POSITIONS = ("masked", "tokens")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `albert-keras distill` flags."""
    parser.add_argument("--teacher", required=True, help="a saved AlbertPretrainer (.keras)")
    parser.add_argument(
        "--student",
        default="teacher",
        help="'teacher' (its architecture), an AlbertBackbone preset, or a JSON file of "
        "backbone arguments; --config overrides on top (e.g. --config num_layers=2)",
    )
    add_config_flag(parser, "override a student backbone argument")
    parser.add_argument("--records", required=True, help="glob of training TFRecord shards")
    parser.add_argument("--output_dir", required=True)
    add_overwrite_flag(parser, "distill")
    parser.add_argument(
        "--student_init", default="auto", choices=STUDENT_INITS,
        help="teacher: copy the teacher's layers (every other one; the shared block itself); "
        "random; auto: teacher when the widths match",
    )  # fmt: skip
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--soft_target_weight", type=float, default=5.0)
    parser.add_argument("--mlm_weight", type=float, default=2.0)
    parser.add_argument("--cosine_weight", type=float, default=1.0)
    parser.add_argument("--cosine_positions", default="masked", choices=COSINE_POSITIONS)
    parser.add_argument("--batch_size", type=int, default=32, help="global batch size")
    parser.add_argument("--max_steps", type=int, default=10_000)
    parser.add_argument("--learning_rate", type=float, default=0.00176, help="peak (LAMB)")
    parser.add_argument("--warmup_steps", type=int, default=None, help="none: 2.5%% of steps")
    parser.add_argument("--dynamic_masking", action="store_true", help="re-mask every batch")
    parser.add_argument("--eval_records", default=None, help="glob of held-out TFRecord shards")
    parser.add_argument("--eval_steps", type=int, default=100, help="at most this many; 0: all")
    parser.add_argument("--checkpoint_every", type=int, default=1000, help="steps")
    add_strategy_flag(parser)
    add_mixed_precision_flag(parser)
    parser.add_argument("--jit_compile", default="auto", choices=["auto", "true", "false"])
    parser.add_argument("--steps_per_execution", type=int, default=1)
    parser.add_argument(
        "--spm_model", default=None, help="copied beside the student; none: the teacher's"
    )
    parser.add_argument("--seed", type=int, default=12345)


def run(args: argparse.Namespace) -> int:
    """Runs `distill` with the parsed flags; prints where the outputs are."""
    from albert_keras.distill.distill_job import distill

    summary = distill(**job_arguments(args, distill, config=parse_config_flags(args.config)))
    print_run("distilled", summary, args.output_dir)
    return 0
