"""`albert-keras predict`: a saved classifier on a GLUE dev file or on lines of text; a saved
question answerer on a SQuAD file or on JSON lines of questions; a token classifier or a
multiple-choice model on lines of text or JSON lines of options (`predict_tasks`).

    albert-keras predict --model sst2/model.keras --task SST-2 --glue_dir glue_data
    albert-keras predict --model sst2/model.keras --input reviews.txt --output reviews.jsonl
    printf 'a film I loved\\n' | albert-keras predict --model sst2/model.keras
    albert-keras predict --model mrpc/model.keras --input pairs.tsv --pairs
    albert-keras predict --model squad_run/model.keras --input dev-v2.0.json
    echo '{"question": "who?", "context": "..."}' | albert-keras predict --model squad_run/model.keras

With `--task` it prints GLUE's metrics on the task's dev split(s) (and writes them as JSON to
`--output`); otherwise it writes one JSON line per input line, in order, each starting with
the text it answers (`{"text": "a film I loved", "label": 1, "probabilities": [...]}`,
`"text_pair"` too with `--pairs`, `"score"` for STS-B), to `--output` or stdout. The model
reads text through the preprocessor saved in it (as `finetune-glue` saves it): the same ids it
was trained on and that its exported SavedModel serves. A classifier saved without one (before
`finetune-glue` saved it) needs `--spm_model` (and `--max_seq_length`, its fine-tuning length).

A question answerer (`finetune-squad`'s `model.keras`) reads a SQuAD JSON file (its official
EM/F1 are printed when it has answers, for 2.0 at the no-answer threshold that maximizes F1 on
it, unless `--null_threshold` is given; `--output` gets the official `predictions.json`) or JSON
lines `{"question": ..., "context": ...}` (one `{"id": ..., "answer": ..., "null_odds": ...}`
line each: the line's `"id"`, or its `"question"` where it has no id).
Its contexts are cut into windows with the `doc_stride` and `max_query_length` it was fine-tuned
with (saved in it); `--doc_stride` / `--max_query_length` override them.
An `--spm_model` given with a model that carries its vocabulary must be that vocabulary (the
same sha256), else it is refused.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from albert_keras_cli.finetune_glue import TASKS
from albert_keras_cli.predict_files import (
    decoded_lines,
    emit_json_lines,
    read_bytes,
    with_inputs,
    write_output,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the `predict` flags to `parser`."""
    parser.description = (
        "Score a saved classifier on a GLUE dev file, or predict lines of text; answer the "
        "questions of a SQuAD file or of JSON lines with a saved question answerer."
    )
    _add_input_arguments(parser)
    _add_text_arguments(parser)
    _add_question_answering_arguments(parser)


def _add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """The model, what it predicts (a GLUE task's dev split or an input file) and the output."""
    parser.add_argument(
        "--model",
        required=True,
        help="an AlbertClassifier or AlbertQuestionAnswerer .keras (finetune-glue's or "
        "finetune-squad's model.keras)",
    )
    parser.add_argument(
        "--task", help=f"score on this GLUE task's dev split(s): one of {', '.join(TASKS)}"
    )
    parser.add_argument("--glue_dir", help="with --task: GLUE's download (GLUE_DIR/SST-2/dev.tsv)")
    parser.add_argument(
        "--task_module",
        help="with --task: a Python module to import first, whose register_task(...) calls add "
        "GLUE-like tasks (albert_keras_contracts.catalogue), as finetune-glue's --task_module",
    )
    parser.add_argument(
        "--input",
        help="a UTF-8 text file, one example per line; for a question answerer a SQuAD JSON "
        'file or JSON lines {"question": ..., "context": ...}; none: stdin (\'-\' too)',
    )
    parser.add_argument(
        "--pairs", action="store_true", help="each input line is TEXT_A<tab>TEXT_B (pair tasks)"
    )
    parser.add_argument(
        "--output",
        help="the file to write: JSON lines, with --task the metrics as JSON, with a SQuAD "
        "file the official predictions.json (none: predictions to stdout; with --task or a "
        "SQuAD file with answers, the scores printed only)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace --output when it exists (refused else)"
    )
    parser.add_argument("--batch_size", type=int, default=32, help="examples per batch")


def _add_text_arguments(parser: argparse.ArgumentParser) -> None:
    """The text a model reads: the vocabulary and length of one saved without a preprocessor,
    and whether one trained on an older text path's ids is accepted."""
    parser.add_argument(
        "--spm_model",
        help="for a model saved without a preprocessor (before finetune-glue/finetune-squad "
        "saved one): the SentencePiece .model it was fine-tuned with (text lower-cased); a "
        "model that carries its vocabulary refuses any other (sha256 compared)",
    )
    parser.add_argument(
        "--accept_old_text_path",
        action="store_true",
        help="predict with a model trained on an older text path's ids (ids other than the "
        "official ALBERT code's: '' read as \", no digit-comma split); without it it is refused",
    )
    parser.add_argument(
        "--max_seq_length",
        type=int,
        help="with --spm_model: the length it was fine-tuned at; none: the model's "
        "max_sequence_length",
    )
    parser.add_argument(  # the old name, hidden
        "--sequence_length", dest="max_seq_length", type=int, help=argparse.SUPPRESS
    )


def _add_question_answering_arguments(parser: argparse.ArgumentParser) -> None:
    """A question answerer's (`finetune-squad`'s model) window and answer settings."""
    # The window settings default to the model's own, saved from its fine-tuning, so contexts
    # are cut as in training.
    parser.add_argument(
        "--doc_stride",
        type=int,
        help="question answering: pieces between two windows of a context; none: the model's "
        "own (its fine-tuning's; 128 for a model saved without one); a value overrides it",
    )
    parser.add_argument(
        "--max_query_length",
        type=int,
        help="question answering: question pieces kept; none: the model's own (its "
        "fine-tuning's; 64 for a model saved without one); a value overrides it",
    )
    parser.add_argument(
        "--max_answer_length",
        type=int,
        default=30,
        help="question answering: longest answer, in pieces",
    )
    parser.add_argument(
        "--null_threshold",
        type=float,
        help="SQuAD 2.0: answer '' where the no-answer score is above it; none: a SQuAD file "
        "with answers uses the F1-best threshold, other questions always get a span",
    )


def check_arguments(args: argparse.Namespace) -> None:
    """Flag errors in one line, before TensorFlow loads; raises ValueError / FileNotFoundError."""
    from albert_keras_contracts.output_folder import check_apart, check_new_file

    if os.path.isdir(args.model):
        raise ValueError(f"--model {args.model} is a folder: give the .keras file")
    if not os.path.isfile(args.model):
        raise FileNotFoundError(f"--model {args.model}: no such file")
    for flag in ("batch_size", "doc_stride", "max_query_length", "max_answer_length"):
        if getattr(args, flag) is not None and getattr(args, flag) <= 0:
            raise ValueError(f"--{flag} must be positive, got {getattr(args, flag)}")
    if args.null_threshold is not None and not math.isfinite(args.null_threshold):
        # nan compares False with every score: every question would get a span (issue 43).
        raise ValueError(f"--null_threshold must be a finite number, got {args.null_threshold}")
    if args.spm_model is not None:
        if os.path.isdir(args.spm_model):
            raise ValueError(f"--spm_model {args.spm_model} is a folder: give the .model file")
        if not os.path.isfile(args.spm_model):
            raise FileNotFoundError(f"--spm_model {args.spm_model}: no such file")
    elif args.max_seq_length is not None:
        raise ValueError("--max_seq_length needs --spm_model (a saved preprocessor has its own)")
    if args.max_seq_length is not None and args.max_seq_length < 3:
        raise ValueError(f"--max_seq_length {args.max_seq_length} leaves no room for [CLS] a [SEP]")
    if args.task is not None:
        if args.input is not None or args.pairs:
            raise ValueError("--task scores a GLUE dev file: it takes --glue_dir, not --input")
        from albert_keras_contracts import catalogue

        if args.task_module:
            catalogue.import_task_module(args.task_module)
        tasks = catalogue.trainable_task_names()  # GLUE's and what --task_module registered
        if args.task not in tasks:
            raise ValueError(f"--task {args.task}: choose one of {', '.join(tasks)}")
        if not args.glue_dir:
            raise ValueError("--task needs --glue_dir (GLUE's download)")
        directory = catalogue.get_glue_task(args.task).directory
        if not os.path.isdir(os.path.join(args.glue_dir, directory)):
            raise FileNotFoundError(f"--glue_dir {args.glue_dir}: no {directory}/ folder in it")
    elif args.task_module is not None:
        raise ValueError("--task_module needs --task")
    elif args.glue_dir is not None:
        raise ValueError("--glue_dir needs --task")
    elif args.input not in (None, "-") and os.path.isdir(args.input):
        raise ValueError(f"--input {args.input} is a folder: give a file")
    elif args.input not in (None, "-") and not os.path.isfile(args.input):
        raise FileNotFoundError(f"--input {args.input}: no such file")
    if args.output is not None:
        # Never over what it reads (`--overwrite` once replaced --model with 73 bytes of JSON).
        inputs = {"--model": args.model, "--input": args.input, "--spm_model": args.spm_model}
        check_apart("--output", args.output, {**inputs, "--glue_dir": args.glue_dir})
        check_new_file(args.output, overwrite=args.overwrite)


def run(args: argparse.Namespace) -> int:
    """Loads the model, predicts, writes; errors raise ValueError / FileNotFoundError."""
    from albert_keras.convert import load_any_model

    check_arguments(args)  # again: main() runs it first, a caller of run() may not
    name = "stdin" if args.input in (None, "-") else args.input
    data = None if args.task else read_bytes(args.input)
    model = load_any_model(args.model)
    _check_vocabulary(model, args)
    from albert_keras_contracts.text_path import check_model_text_path

    check_model_text_path(model, args.model, getattr(args, "accept_old_text_path", False))
    if getattr(model, "head", None) in ("simple", "v2"):  # an AlbertQuestionAnswerer
        from albert_keras_cli.predict_squad import run_squad

        return run_squad(model, args, data, name)
    kind = type(model).__name__
    if kind in ("AlbertTokenClassifier", "AlbertMultipleChoice"):
        if args.task:
            raise ValueError(f"{args.model} is an {kind}: --task scores GLUE classifiers only")
        from albert_keras_cli import predict_tasks

        if kind == "AlbertTokenClassifier":
            return predict_tasks.run_token_classifier(model, args, data, name)
        return predict_tasks.run_multiple_choice(model, args, data, name)
    from albert_keras.serving.text_predictions import (
        check_text_classifier,
        predict_texts,
        score_glue_dev,
    )

    check_text_classifier(model, args.model)
    if args.task:
        scores = score_glue_dev(model, args.task, args.glue_dir, args.batch_size)
        for split, entry in scores["splits"].items():
            metrics = ", ".join(f"{k} {v:.4f}" for k, v in entry["metrics"].items())
            print(f"{scores['task']} {split} ({entry['num_examples']} examples): {metrics}")
        if args.output:
            write_output(args.output, json.dumps({"model": args.model, **scores}, indent=2) + "\n")
        return 0
    _refuse_squad_file(data, name, args.model)
    texts_a, texts_b = split_lines(data, name, args.pairs)
    predictions = predict_texts(model, texts_a, texts_b, args.batch_size)
    records = with_inputs(predictions, text=texts_a, text_pair=texts_b)  # which line each answers
    emit_json_lines(records, args.output, "predictions")
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
    return split_lines(read_bytes(path), name, pairs)


def split_lines(data: bytes, name: str, pairs: bool) -> tuple[list[str], list[str] | None]:
    """`read_lines` of bytes already read from `name`."""
    texts_a, texts_b = [], []
    for number, line in decoded_lines(data, name):
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


def _refuse_squad_file(data: bytes, name: str, model: str) -> None:
    """A SQuAD JSON file given to a classifier is refused in one line (it was scored as one
    line of text).

    Example:
    >>> _refuse_squad_file(b'{"version": "v2.0", "data": []}', "dev.json", "sst2.keras")
    Traceback (most recent call last):
    ValueError: dev.json is a SQuAD file, but sst2.keras is a classifier: give it lines of text ...
    """
    from albert_keras_cli.predict_squad import squad_file

    if squad_file(data) is not None:
        raise ValueError(
            f"{name} is a SQuAD file, but {model} is a classifier: give it lines of text (TEXT, "
            "or TEXT_A<tab>TEXT_B with --pairs), or give a question answerer as --model"
        )


def _check_vocabulary(model, args: argparse.Namespace) -> None:
    """`--spm_model` against the vocabulary the model carries (refused when another), or given
    to a model saved without one (said in one line: nothing could be checked)."""
    from albert_keras_contracts.vocabulary_identity import check_model_vocabulary

    if args.spm_model is None:
        return
    if getattr(model, "preprocessor", None) is not None:
        check_model_vocabulary(model, args.model, args.spm_model)
        if args.max_seq_length is not None:
            raise ValueError(
                f"--max_seq_length: {args.model} carries its own sequence length "
                f"({model.preprocessor.sequence_length}): drop --max_seq_length"
            )
        return
    note = check_model_vocabulary(model, args.model, args.spm_model)  # None: the run's matched
    if note:
        print(note, file=sys.stderr)
    _attach_preprocessor(model, args)


def _attach_preprocessor(model, args: argparse.Namespace) -> None:
    """Gives a model saved without a preprocessor the one fine-tuning uses."""
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

    backbone = getattr(model, "backbone", None)
    if backbone is None:
        raise ValueError(f"{args.model}: {type(model).__name__} is not an AlbertClassifier")
    length = args.max_seq_length or backbone.max_sequence_length
    tokenizer = AlbertTokenizer(args.spm_model, lowercase=True)  # as GlueEncoder's default
    model.preprocessor = AlbertPreprocessor(tokenizer, length)
