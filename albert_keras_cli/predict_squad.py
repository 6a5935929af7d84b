"""`albert-keras predict` on a question answerer: a SQuAD file's scores, or JSON lines' answers.

Called by `albert_keras_cli.predict.run` once the model is loaded and found to be an
`AlbertQuestionAnswerer`; the flags are `predict`'s.
"""

from __future__ import annotations

import argparse
import json
import sys

from albert_keras_cli.predict_files import decoded_lines, emit_json_lines, write_output


def run_squad(model, args: argparse.Namespace, data: bytes, name: str) -> int:
    """Answers the questions of `data` (read from `name`) with `model`; prints / writes them.

    Args:
        model: `AlbertQuestionAnswerer` (checked here: it must carry a preprocessor).
        args: `predict`'s flags.
        data: bytes. A SQuAD JSON file, or JSON lines `{"question": ..., "context": ...}`.
        name: str. Where `data` came from (`stdin` or the file), for messages.

    Returns:
        int: 0.
    """
    from albert_keras.squad.squad_answers import check_question_answerer

    if args.task or args.pairs:
        raise ValueError(
            f"{args.model} is a question answerer: --task / --pairs are for a classifier; give "
            "--input (a SQuAD file or JSON lines of questions)"
        )
    check_question_answerer(model, args.model)
    settings = {
        "doc_stride": args.doc_stride,
        "max_query_length": args.max_query_length,
        "batch_size": args.batch_size,
        "max_answer_length": args.max_answer_length,
        "null_threshold": args.null_threshold,
    }
    squad = squad_file(data)
    if squad is not None:
        return _score_file(model, args, squad, name, settings)
    questions, contexts, ids = read_question_lines(data, name)
    from albert_keras.squad.squad_answers import answer_questions

    answers = answer_questions(model, questions, contexts, **settings)
    # Each answer says which line it answers: the line's "id" where it has one, else its question.
    echoes = [{"id": i} if i is not None else {"question": q} for i, q in zip(ids, questions)]
    emit_json_lines([{**echo, **a} for echo, a in zip(echoes, answers)], args.output, "answers")
    return 0


def squad_file(data: bytes) -> dict | None:
    """The parsed SQuAD file when `data` is one (a JSON object with a `data` list), else None
    (JSON lines are read by `read_question_lines`).

    Example:
    >>> squad_file(b'{"version": "v2.0", "data": []}')
    {'version': 'v2.0', 'data': []}
    >>> squad_file(b'{"question": "who?", "context": "me"}') is None
    True
    """
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("data"), list):
        return parsed
    return None


def read_question_lines(data: bytes, name: str) -> tuple[list[str], list[str], list]:
    """`(questions, contexts, ids)` of JSON lines `{"question": ..., "context": ...}` (and an
    optional `"id"`: None where a line has none), in order; blank lines are skipped; anything
    else is a ValueError naming the file and line.

    Example:
    >>> read_question_lines(b'{"question": "who?", "context": "me", "id": 7}\\n\\n', "stdin")
    (['who?'], ['me'], [7])
    >>> read_question_lines(b'{"question": "who?"}\\n', "q.jsonl")
    Traceback (most recent call last):
    ValueError: q.jsonl line 1: needs {"question": ..., "context": ...} (strings), or give a SQuAD file
    """
    questions, contexts, ids = [], [], []
    for number, line in decoded_lines(data, name):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as error:
            raise ValueError(f"{name} line {number}: not JSON ({error})") from None
        if not (
            isinstance(row, dict)
            and isinstance(row.get("question"), str)
            and isinstance(row.get("context"), str)
        ):
            raise ValueError(  # noqa: TRY004 (the CLI reports ValueErrors)
                f'{name} line {number}: needs {{"question": ..., "context": ...}} (strings), '
                "or give a SQuAD file"
            )
        questions.append(row["question"])
        contexts.append(row["context"])
        ids.append(row.get("id"))
    return questions, contexts, ids


def _score_file(model, args, squad: dict, name: str, settings: dict) -> int:
    """Answers a SQuAD file; prints its official scores when it has answers; `--output` gets
    the official `predictions.json` (stdout does without scores)."""
    from albert_keras.squad.squad_answers import score_squad_examples
    from albert_keras.squad.squad_examples import squad_examples_from_articles

    examples = squad_examples_from_articles(
        squad["data"], is_training=False, source=name, version=squad.get("version")
    )
    for line in examples.notes():  # the questions of an empty context: answered "", scored
        print(line, file=sys.stderr)
    result = score_squad_examples(model, examples, **settings)
    predictions = json.dumps(result["predictions"], indent=2, ensure_ascii=False) + "\n"
    if args.output:
        write_output(args.output, predictions)
    if "metrics" not in result:
        print(f"{name}: no answers to score against", file=sys.stderr)
        if not args.output:
            sys.stdout.write(predictions)
        return 0
    metrics = result["metrics"]
    shown = ("exact_match", "exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact",
             "NoAns_f1")  # fmt: skip
    figures = ", ".join(f"{key} {metrics[key]:.2f}" for key in shown if key in metrics)
    if result.get("null_threshold") is not None:
        figures += f", null threshold {result['null_threshold']:.4f}"
    print(f"SQuAD {result['version']} ({result['num_questions']} questions): {figures}")
    return 0
