"""`albert-keras predict` for the token and multiple-choice models (`finetune-tokens`,
`finetune-choice`): their inputs read, their answers written as JSON lines.

    albert-keras predict --model ner/model.keras --input sentences.txt
    # {"text": "Anna lives in Oslo", "words": [{"word": "Anna", "tag": "B-PER", "start": 0, ...
    albert-keras predict --model swag/model.keras --input questions.jsonl
    # {"id": "q1", "choice": 1, "option": "...", "probabilities": [...]}

A tagger reads one text a line and answers each whitespace-separated word with its tag and
character offsets (`tag: null` for a word past the model's length). A chooser reads JSON lines
`{"context": ..., "options": [...]}` (an `"id"` is echoed when given, else the context) and
answers the chosen option's index and text and every option's probability.
"""

from __future__ import annotations

import argparse
import json

from albert_keras_cli.predict_files import decoded_lines, emit_json_lines, with_inputs


def run_token_classifier(model, args: argparse.Namespace, data: bytes, name: str) -> int:
    """Tags each line's words; one JSON line per input line."""
    if args.pairs:
        raise ValueError(f"{args.model} tags single texts: --pairs does not apply")
    texts = [line for _, line in decoded_lines(data, name)]
    tagged = model.predict(texts, batch_size=args.batch_size) if texts else []
    records = with_inputs([{"words": words} for words in tagged], text=texts)
    emit_json_lines(records, args.output, "predictions")
    return 0


def read_choice_lines(data: bytes, name: str) -> tuple[list, list[str], list[list[str]]]:
    """`(ids, contexts, options)` of JSON lines `{"context", "options"[, "id"]}`; a line that
    is not such an object is a ValueError naming the file and line.

    Example:
    >>> read_choice_lines(b'{"context": "He ate", "options": ["food.", "rocks."]}', "in.jsonl")
    ([None], ['He ate'], [['food.', 'rocks.']])
    """
    ids, contexts, options = [], [], []
    for number, line in decoded_lines(data, name):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as error:
            raise ValueError(f"{name} line {number}: not JSON ({error})") from None
        row = item.get("options") if isinstance(item, dict) else None
        if (
            not isinstance(item.get("context") if isinstance(item, dict) else None, str)
            or not isinstance(row, list)
            or not row
            or not all(isinstance(option, str) for option in row)
        ):
            raise ValueError(
                f'{name} line {number}: expected {{"context": "...", "options": ["...", ...]}}'
            )
        if options and len(row) != len(options[0]):
            raise ValueError(
                f"{name} line {number}: {len(row)} options where line 1 has {len(options[0])}"
            )
        ids.append(item.get("id"))
        contexts.append(item["context"])
        options.append(row)
    return ids, contexts, options


def run_multiple_choice(model, args: argparse.Namespace, data: bytes, name: str) -> int:
    """Chooses an option for each JSON line; one JSON line per question."""
    ids, contexts, options = read_choice_lines(data, name)
    chosen = model.predict((contexts, options), batch_size=args.batch_size) if contexts else []
    given = all(value is not None for value in ids)
    records = with_inputs(
        list(chosen), id=ids if given else None, context=None if given else contexts
    )
    emit_json_lines(records, args.output, "predictions")
    return 0
