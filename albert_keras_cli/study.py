"""`albert-keras study SPEC --output_dir DIR`: run (or resume) an ablation study."""

from __future__ import annotations

import argparse
import os
import shlex

from albert_keras_cli.config_flags import add_config_flag, parse_config_flags
from albert_keras_cli.help_formatter import RawEpilogHelpFormatter
from albert_keras_cli.job_arguments import add_overwrite_flag
from albert_keras_settings.study_settings import describe_study_keys

# Also in `albert_keras.study.study_spec.BUILTIN_CELLS` (not imported here: it loads TensorFlow).
BUILTIN_SPECS = ("table3", "table4", "table5", "quick")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # The epilog lists every spec key with its default, one a line: printed as written.
    parser.formatter_class = RawEpilogHelpFormatter
    parser.epilog = (
        "spec keys (a .yaml / .json spec sets them, --config KEY=VALUE over it), with their "
        f"defaults:\n{describe_study_keys()}\n\nThe committed studies' specs: "
        "docs/study/table3/spec.json, docs/study/table4/spec.json, docs/study/table5/spec.json "
        "(albert-keras study docs/study/table5/spec.json --output_dir out/study/table5)."
    )
    parser.add_argument(
        "spec",
        help=f"a built-in ({', '.join(BUILTIN_SPECS)}: a few minutes on a CPU) or a .yaml / "
        ".json spec file (keys below)",
    )
    parser.add_argument("--output_dir", required=True, help="the study's folder (resumable)")
    add_overwrite_flag(parser, "study")
    parser.add_argument(
        "--corpus", help="glob(s) of pretraining text, commas between them (the spec's `corpus`)"
    )
    parser.add_argument(
        "--heldout", help="glob(s) of held-out text, taken out of the corpus (commas too)"
    )
    parser.add_argument(
        "--spm_model",
        help="SentencePiece model for records and fine-tuning; none (and none in the spec): "
        "the study trains one on the corpus' training files",
    )
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
    """The command that reproduces the study, rebuilt from the parsed flags.

    Paths are printed as typed, except that an absolute one is made relative to the folder the
    study runs from: the command goes into report.md for other readers, who have no copy of
    this machine's folders.
    """
    words = ["albert-keras", "study", portable_path(args.spec), "--output_dir"]
    words.append(portable_path(args.output_dir))
    for key in ("corpus", "heldout", "spm_model", "glue_dir"):
        if getattr(args, key) is not None:
            paths = getattr(args, key).split(",")
            words += [f"--{key}", ",".join(portable_path(path) for path in paths)]
    for item in args.config:
        words += ["--config", item]
    return " ".join(shlex.quote(word) for word in words)


def portable_path(path: str) -> str:
    """`path` as typed, or relative to the current folder when it is absolute.

    Args:
        path: str. A path or glob as the user typed it.

    Example:
    >>> import os
    >>> portable_path(os.path.join(os.getcwd(), "out", "vocab", "books8k.model"))
    'out/vocab/books8k.model'
    >>> portable_path("../shared/data/corpus/*.txt")
    '../shared/data/corpus/*.txt'
    """
    if not os.path.isabs(path):
        return path
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows: no relative path exists
        return path
