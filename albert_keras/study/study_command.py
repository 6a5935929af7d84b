"""`albert-keras study SPEC --output_dir DIR`: run (or resume) an ablation study."""

from __future__ import annotations

import argparse
import shlex

from albert_keras.study.study_spec import BUILTIN_CELLS, parse_overrides


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "spec", help=f"a built-in ({', '.join(BUILTIN_CELLS)}) or a .yaml / .json spec file"
    )
    parser.add_argument("--output_dir", required=True, help="the study's folder (resumable)")
    parser.add_argument("--corpus", help="glob of pretraining text (the spec's `corpus`)")
    parser.add_argument("--heldout", help="glob of held-out text, taken out of the corpus")
    parser.add_argument("--spm_model", help="SentencePiece model for records and fine-tuning")
    parser.add_argument("--glue_dir", help="GLUE's download: GLUE_DIR/SST-2/train.tsv, ...")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a spec key, e.g. steps=2000, seeds=[1,2,3], backbone.hidden_dim=512, "
        'tasks=["SST-2"] (repeatable; values are JSON where they parse)',
    )


def run(args: argparse.Namespace) -> int:
    from albert_keras.study.run_study import run_study

    overrides = {
        key: value
        for key in ("corpus", "heldout", "spm_model", "glue_dir")
        if (value := getattr(args, key)) is not None
    }
    overrides.update(parse_overrides(args.config))
    report = run_study(args.spec, args.output_dir, overrides=overrides, command=command_line(args))
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
