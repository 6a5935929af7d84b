"""`albert-keras export --model MODEL.keras --output_dir OUT/`: a SavedModel over raw strings.

    albert-keras export --model sst2/model.keras --output_dir served/sst2/   # no other flag
    albert-keras export --model squad/model.keras --output_dir served/squad/  # (question, context)
    albert-keras export --model model.keras --output_dir served/ --spm_model 30k-clean.model \\
        --max_seq_length 128

A classifier's SavedModel has the signatures `serving_default(text)`, `pairs(text_a, text_b)`
and `tokenize(text)` (`albert_keras.serving.export_saved_model`); a question answerer's
(`finetune-squad`'s model) `serving_default(question, context)` returns the answer, its
characters in the context and its scores (`albert_keras.serving.export_question_answerer`;
one window per question, see there); a token classifier's (`finetune-tokens`'s)
`serving_default(text)` the words, their tags and character offsets, a multiple-choice model's
(`finetune-choice`'s) `serving_default(context, options)` the probabilities and the choice
(`albert_keras.serving.export_token_classifier` / `export_multiple_choice`). OUT/ is export's own folder: a folder holding other
files, or another command's output, is refused; `--overwrite` replaces only an earlier
export's SavedModel.

The flags are the other commands' names: `--model` the model used as it is (as `predict`),
`--output_dir` the folder written, `--max_seq_length` the length it reads. The positional
`MODEL OUT/` of earlier versions still works (hidden from `--help`); giving a thing both ways
is refused.
"""

from __future__ import annotations

import argparse
import os

from albert_keras_contracts.output_folder import check_apart

LOAD_LINE = (
    "to load it: `import tensorflow_text` (its ops are in the graph), then tf.saved_model.load"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the `export` flags to `parser`."""
    parser.description = (
        "Export a classifier or a question answerer (.keras) as a TF SavedModel taking raw strings."
    )
    parser.add_argument(
        "--model",
        help="the model to export (required): an AlbertClassifier or AlbertQuestionAnswerer "
        ".keras (finetune-glue's or finetune-squad's model.keras)",
    )
    parser.add_argument("--output_dir", help="the SavedModel folder to write (required)")
    # The positional spelling of earlier versions, kept working and hidden.
    for name in ("model_file", "output_folder"):
        parser.add_argument(name, nargs="?", help=argparse.SUPPRESS)
    parser.add_argument(
        "--spm_model",
        help="SentencePiece .model, for a model saved without a preprocessor (a model that "
        "carries its own needs none)",
    )
    parser.add_argument(
        "--max_seq_length",
        type=int,
        default=None,
        help="with --spm_model: the length it was fine-tuned at; none: the model's "
        "max_sequence_length",
    )
    parser.add_argument(  # the old name, hidden
        "--sequence_length", dest="max_seq_length", type=int, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier export in --output_dir made from another model or settings",
    )
    # The usage as argparse writes it, with the two required flags out of brackets: argparse
    # cannot be told they are required (it would refuse the positional spelling of old).
    usage = parser.format_usage().removeprefix("usage: ").rstrip("\n")
    for flag in ("--model MODEL", "--output_dir OUTPUT_DIR"):
        usage = usage.replace(f"[{flag}]", flag)
    parser.usage = usage.replace("%", "%%").replace(parser.prog, "%(prog)s", 1)


def check_arguments(args: argparse.Namespace) -> None:
    """Flag errors in one line, before TensorFlow loads; sets `args.model` / `args.output_dir`
    from the positional spelling.

    Args:
        args: `export`'s parsed flags.

    Raises:
        ValueError / FileNotFoundError: a flag missing, given twice, or naming no file.

    Example:
    >>> args = argparse.Namespace(model=None, output_dir=None, model_file=None,
    ...                           output_folder="served", spm_model=None, max_seq_length=None)
    >>> check_arguments(args)
    Traceback (most recent call last):
    ValueError: give --model MODEL.keras and --output_dir DIR
    """
    for flag, positional in (("model", "model_file"), ("output_dir", "output_folder")):
        given = getattr(args, positional, None)
        if given is not None and getattr(args, flag) is not None:
            raise ValueError(
                f"--{flag} {getattr(args, flag)} and the positional {given} both given: "
                f"give only --{flag}"
            )
        if given is not None:  # moved, so a second check (main's, then run's) passes
            setattr(args, flag, given)
            setattr(args, positional, None)
    if args.model is None or args.output_dir is None:
        raise ValueError("give --model MODEL.keras and --output_dir DIR")
    if os.path.isdir(args.model):
        raise ValueError(f"--model {args.model} is a folder: give the .keras file")
    if not os.path.isfile(args.model):
        raise FileNotFoundError(f"--model {args.model}: no such file")
    if args.spm_model and os.path.isdir(args.spm_model):
        raise ValueError(
            f"--spm_model {args.spm_model} is a folder: give the SentencePiece .model file in it"
        )
    if args.spm_model and not os.path.isfile(args.spm_model):
        raise FileNotFoundError(f"--spm_model {args.spm_model}: no such file")
    if args.max_seq_length is not None and not args.spm_model:
        raise ValueError("--max_seq_length needs --spm_model (the saved preprocessor has one)")
    # Never over what it reads: the SavedModel folder is no input, holds none, lies in none.
    check_apart(
        "--output_dir", args.output_dir, {"--model": args.model, "--spm_model": args.spm_model}
    )


def run(args: argparse.Namespace) -> int:
    """Loads, exports, and prints the signatures; errors raise ValueError / FileNotFoundError."""
    from albert_keras.convert import load_any_model
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    from albert_keras.serving import (
        export_multiple_choice,
        export_question_answerer,
        export_saved_model,
        export_token_classifier,
    )

    check_arguments(args)  # again: main() runs it first, a caller of run() may not
    model = load_any_model(args.model)
    preprocessor = None
    if args.spm_model:
        length = args.max_seq_length or getattr(model, "backbone", model).max_sequence_length
        preprocessor = AlbertPreprocessor(AlbertTokenizer(args.spm_model), length)
    arguments = {
        "model": os.path.abspath(args.model),
        "spm_model": args.spm_model and os.path.abspath(args.spm_model),
        "sequence_length": args.max_seq_length,
    }
    # A tagger and a chooser by their class; a question answerer has a span head ("simple" or
    # "v2"), a classifier `num_classes`.
    export = {
        "AlbertTokenClassifier": export_token_classifier,
        "AlbertMultipleChoice": export_multiple_choice,
    }.get(type(model).__name__) or (
        export_question_answerer if getattr(model, "head", None) else export_saved_model
    )
    signatures = export(
        model, args.output_dir, preprocessor, overwrite=args.overwrite, arguments=arguments
    )
    print(f"wrote {args.output_dir}")
    for name, outputs in signatures.items():
        print(f"  signature {name}: {', '.join(outputs)}")
    print(f"  {LOAD_LINE}")
    return 0
