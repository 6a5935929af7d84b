"""`albert-keras study SPEC --output_dir DIR`: run (or resume) an ablation study."""

from __future__ import annotations

import argparse
import shlex

from albert_keras_cli.config_flags import add_config_flag, parse_config_flags
from albert_keras_cli.job_arguments import add_overwrite_flag

# Also in `albert_keras.study.study_spec.BUILTIN_CELLS` (not imported here: it loads TensorFlow).
BUILTIN_SPECS = ("table3", "table4", "table5")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "spec", help=f"a built-in ({', '.join(BUILTIN_SPECS)}) or a .yaml / .json spec file"
    )
    parser.add_argument("--output_dir", required=True, help="the study's folder (resumable)")
    add_overwrite_flag(parser, "study")
    parser.add_argument("--corpus", help="glob of pretraining text (the spec's `corpus`)")
    parser.add_argument("--heldout", help="glob of held-out text, taken out of the corpus")
    parser.add_argument("--spm_model", help="SentencePiece model for records and fine-tuning")
    parser.add_argument("--glue_dir", help="GLUE's download: GLUE_DIR/SST-2/train.tsv, ...")
    parser.add_argument(
        "--report_only",
        action="store_true",
        help="only rewrite report.md / report.json / plots from the runs finished so far",
    )
    add_config_flag(
        parser, "override a spec key (steps, seeds, tasks, ..., backbone.ARG), e.g. steps=2000"
    )


def run(args: argparse.Namespace) -> int:
    from albert_keras.study.run_study import run_study

    overrides = {
        key: value
        for key in ("corpus", "heldout", "spm_model", "glue_dir")
        if (value := getattr(args, key)) is not None
    }
    overrides.update(parse_config_flags(args.config))
    report = run_study(
        args.spec,
        args.output_dir,
        overrides=overrides,
        command=command_line(args),
        report_only=args.report_only,
        overwrite=args.overwrite,
    )
    done = sum(len(row["seeds"]) for row in report["rows"])
    print(f"study {args.spec}: {done} runs -> {args.output_dir}/report.md")
    return 0


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces the study, rebuilt from the parsed flags."""
    words = ["albert-keras", "study", args.spec, "--output_dir", args.output_dir]
    for key in ("corpus", "heldout", "spm_model", "glue_dir"):
        if getattr(args, key) is not None:
            words += [f"--{key}", getattr(args, key)]
    for item in args.config:
        words += ["--config", item]
    return " ".join(shlex.quote(word) for word in words)
