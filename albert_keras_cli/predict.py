"""`albert-keras predict`: a saved classifier on a GLUE dev file or on lines of text.

    albert-keras predict --model sst2/model.keras --task SST-2 --glue_dir glue_data
    albert-keras predict --model sst2/model.keras --input reviews.txt --output reviews.jsonl
    printf 'a film I loved\\n' | albert-keras predict --model sst2/model.keras
    albert-keras predict --model mrpc/model.keras --input pairs.tsv --pairs

With `--task` it prints GLUE's metrics on the task's dev split(s) (and writes them as JSON to
`--output`); otherwise it writes one JSON line per input line, in order (`{"label": 1,
"probabilities": [...]}`, or `{"score": ...}` for STS-B), to `--output` or stdout. The model
reads text through the preprocessor saved in it (as `finetune-glue` saves it): the same ids it
was trained on and that its exported SavedModel serves. A classifier saved without one (before
`finetune-glue` saved it) needs `--spm_model` (and `--sequence_length`, its fine-tuning length).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from albert_keras_cli.finetune_glue import TASKS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the `predict` flags to `parser`."""
    parser.description = "Score a saved classifier on a GLUE dev file, or predict lines of text."
    parser.add_argument(
        "--model", required=True, help="an AlbertClassifier .keras (finetune-glue's model.keras)"
    )
    parser.add_argument(
        "--task", help=f"score on this GLUE task's dev split(s): one of {', '.join(TASKS)}"
    )
    parser.add_argument("--glue_dir", help="with --task: GLUE's download (GLUE_DIR/SST-2/dev.tsv)")
    parser.add_argument(
        "--input", help="a UTF-8 text file, one example per line ; none: stdin ('-' too)"
    )
    parser.add_argument(
        "--pairs", action="store_true", help="each input line is TEXT_A<tab>TEXT_B (pair tasks)"
    )
    parser.add_argument(
        "--output",
        help="the file to write: JSON lines, or with --task the metrics as JSON "
        "(none: predictions to stdout; with --task, printed only)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace --output when it exists (refused else)"
    )
    parser.add_argument("--batch_size", type=int, default=32, help="examples per batch")
    parser.add_argument(
        "--spm_model",
        help="only for a classifier saved without a preprocessor (before finetune-glue saved "
        "one): the SentencePiece .model it was fine-tuned with (text lower-cased, as GLUE's)",
    )
    parser.add_argument(
        "--sequence_length",
        type=int,
        help="with --spm_model: the length it was fine-tuned at; none: the model's "
        "max_sequence_length",
    )


def check_arguments(args: argparse.Namespace) -> None:
    """Flag errors in one line, before TensorFlow loads; raises ValueError / FileNotFoundError."""
    from pipelines.output_folder import check_new_file

    if os.path.isdir(args.model):
        raise ValueError(f"--model {args.model} is a folder: give the .keras file")
    if not os.path.isfile(args.model):
        raise FileNotFoundError(f"--model {args.model}: no such file")
    if args.batch_size <= 0:
        raise ValueError(f"--batch_size must be positive, got {args.batch_size}")
    if args.spm_model is not None:
        if os.path.isdir(args.spm_model):
            raise ValueError(f"--spm_model {args.spm_model} is a folder: give the .model file")
        if not os.path.isfile(args.spm_model):
            raise FileNotFoundError(f"--spm_model {args.spm_model}: no such file")
    elif args.sequence_length is not None:
        raise ValueError("--sequence_length needs --spm_model (a saved preprocessor has its own)")
    if args.sequence_length is not None and args.sequence_length < 3:
        raise ValueError(
            f"--sequence_length {args.sequence_length} leaves no room for [CLS] a [SEP]"
        )
    if args.task is not None:
        if args.input is not None or args.pairs:
            raise ValueError("--task scores a GLUE dev file: it takes --glue_dir, not --input")
        if args.task not in TASKS:
            raise ValueError(f"--task {args.task}: choose one of {', '.join(TASKS)}")
        if not args.glue_dir:
            raise ValueError("--task needs --glue_dir (GLUE's download)")
        folder = os.path.join(args.glue_dir, args.task)
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"--glue_dir {args.glue_dir}: no {args.task}/ folder in it")
    elif args.glue_dir is not None:
        raise ValueError("--glue_dir needs --task")
    elif args.input not in (None, "-") and not os.path.isfile(args.input):
        raise FileNotFoundError(f"--input {args.input}: no such file")
    if args.output is not None:
        if args.input not in (None, "-") and os.path.abspath(args.output) == os.path.abspath(
            args.input
        ):
            raise ValueError(f"--output {args.output} is the --input file")
        check_new_file(args.output, overwrite=args.overwrite)


def run(args: argparse.Namespace) -> int:
    """Loads the model, predicts, writes; errors raise ValueError / FileNotFoundError."""
    from albert_keras.convert import load_any_model
    from albert_keras.serving.text_predictions import (
        check_text_classifier,
        predict_texts,
        score_glue_dev,
    )

    check_arguments(args)  # again: main() runs it first, a caller of run() may not
    texts = None if args.task else read_lines(args.input, args.pairs)
    model = load_any_model(args.model)
    if args.spm_model:
        _attach_preprocessor(model, args)
    check_text_classifier(model, args.model)
    if args.task:
        scores = score_glue_dev(model, args.task, args.glue_dir, args.batch_size)
        for split, entry in scores["splits"].items():
            metrics = ", ".join(f"{k} {v:.4f}" for k, v in entry["metrics"].items())
            print(f"{scores['task']} {split} ({entry['num_examples']} examples): {metrics}")
        if args.output:
            _write(args.output, json.dumps({"model": args.model, **scores}, indent=2) + "\n")
        return 0
    texts_a, texts_b = texts
    predictions = predict_texts(model, texts_a, texts_b, args.batch_size)
    lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions)
    if args.output:
        _write(args.output, lines)
        print(f"{len(predictions)} predictions -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(lines)
    return 0


def read_lines(path: str | None, pairs: bool) -> tuple[list[str], list[str] | None]:
    """The examples of a text file (stdin for None or '-'): one per line, in order.

    Returns `(texts_a, texts_b)`; `texts_b` is None unless `pairs` (each line `a<TAB>b`).
    A line that is not UTF-8, or a pair line without exactly one tab, is a ValueError naming
    the file and line.

    Example:
    >>> _ = open("lines.txt", "w", encoding="utf-8").write("a film I loved\\nmeh\\n")
    >>> read_lines("lines.txt", pairs=False)
    (['a film I loved', 'meh'], None)
    """
    name = "stdin" if path in (None, "-") else path
    if path in (None, "-"):
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as file:
            data = file.read()
    texts_a, texts_b = [], []
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"{name} line {number}: not UTF-8 ({error.reason})") from None
        if pairs:
            fields = line.split("\t")
            if len(fields) != 2:
                raise ValueError(
                    f"{name} line {number}: --pairs needs TEXT_A<tab>TEXT_B, found "
                    f"{len(fields) - 1} tab(s)"
                )
            texts_a.append(fields[0])
            texts_b.append(fields[1])
        else:
            texts_a.append(line)
    return texts_a, texts_b if pairs else None


def _attach_preprocessor(model, args: argparse.Namespace) -> None:
    """Gives a classifier saved without a preprocessor the one GLUE fine-tuning uses."""
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

    if getattr(model, "preprocessor", None) is not None:
        raise ValueError(
            f"--spm_model: {args.model} carries its own preprocessor (vocabulary and sequence "
            "length): drop --spm_model and --sequence_length"
        )
    backbone = getattr(model, "backbone", None)
    if backbone is None:
        raise ValueError(f"{args.model}: {type(model).__name__} is not an AlbertClassifier")
    length = args.sequence_length or backbone.max_sequence_length
    tokenizer = AlbertTokenizer(args.spm_model, lowercase=True)  # as GlueEncoder's default
    model.preprocessor = AlbertPreprocessor(tokenizer, length)


def _write(path: str, text: str) -> None:
    from pipelines import atomic_write

    # A new folder for the output is made, as `--output_dir` folders are; nothing else is touched.
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write.write_text(path, text)
