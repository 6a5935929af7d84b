"""Exact match and F1 as the official SQuAD scripts (`evaluate-v1.1.py`, `evaluate-v2.0.py`).

Written from the scripts' definitions (read in the official ALBERT `squad_utils.py`, which carries
both), not copied: the same answer normalization (lower-case, punctuation out, the articles
a/an/the out, whitespace collapsed), the max over the gold answers, the same totals and scale
(percentages), and for v2.0 the HasAns / NoAns splits and the best no-answer thresholds. Where the
two scripts differ, each version keeps its own rule: v1.1 scores an empty prediction F1 0; v2.0
scores it 1 against an empty gold (an unanswerable question, or gold answers that normalize to
nothing).
"""

from __future__ import annotations

import collections
import json
import os
import re
import string
from collections.abc import Mapping

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text: str) -> str:
    """The official answer normalization: lower, drop ASCII punctuation, drop a/an/the, and
    collapse whitespace (in that order, as both official scripts).

    Example:
    >>> normalize_answer("The  Norman-French, (a) people!")
    'normanfrench people'
    """
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> int:
    """1 when the normalized strings are equal, else 0."""
    return int(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str, gold: str, version: str = "2.0") -> float:
    """Bag-of-tokens F1 of the normalized strings.

    Args:
        prediction: str.
        gold: str.
        version: str. `"2.0"`: when either side has no tokens, 1.0 if both have none else 0.0
            (an empty gold is "no answer"); `"1.1"`: no common token is 0 (so two empty strings
            score 0, as in `evaluate-v1.1.py`).
    """
    predicted = normalize_answer(prediction).split()
    golden = normalize_answer(gold).split()
    if version != "1.1" and (not predicted or not golden):
        return float(predicted == golden)
    common = sum((collections.Counter(predicted) & collections.Counter(golden)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(golden)
    return 2 * precision * recall / (precision + recall)


def evaluate_squad(
    data_file: str | os.PathLike | Mapping,
    predictions: str | os.PathLike | Mapping[str, str],
    na_probs: str | os.PathLike | Mapping[str, float] | None = None,
    *,
    na_prob_thresh: float = 1.0,
    version: str | None = None,
) -> dict:
    """Scores predictions on a SQuAD file as the official evaluation script of its version.

    Args:
        data_file: path to a SQuAD JSON file, or its parsed dict (`{"version", "data"}`).
        predictions: `{question id: answer text}` ("" = no answer), or a path to such JSON
            (`predictions.json`).
        na_probs: `{question id: no-answer score}` or a path (`null_odds.json`); v2.0 only. With
            it the result has the best thresholds (`best_exact`, `best_f1`, ...`_thresh`).
        na_prob_thresh: float. v2.0: a question whose score is above it counts as answered
            "no answer" (the official default 1.0).
        version: `"1.1"` or `"2.0"`; default: the file's `version` ("1.1" -> v1.1, anything
            else -> v2.0), or v2.0 when any question has `is_impossible`.

    Returns:
        v1.1: `{"exact_match", "f1"}`; v2.0: `{"exact", "f1", "total", "HasAns_exact",
        "HasAns_f1", "HasAns_total", "NoAns_exact", "NoAns_f1", "NoAns_total"}` (the splits
        present in the file), plus `best_exact`, `best_exact_thresh`, `best_f1`,
        `best_f1_thresh` when `na_probs` is given. Scores are percentages.

    Example:
    >>> data = {"version": "1.1", "data": [{"paragraphs": [{"context": "x", "qas": [
    ...     {"id": "q1", "question": "?", "answers": [{"text": "the Normans", "answer_start": 0}]}
    ... ]}]}]}
    >>> evaluate_squad(data, {"q1": "Normans."})
    {'exact_match': 100.0, 'f1': 100.0}
    """
    dataset = _load_json(data_file, "data_file")
    predictions = _load_json(predictions, "predictions")
    na_probs = None if na_probs is None else _load_json(na_probs, "na_probs")
    if not isinstance(dataset, Mapping) or not isinstance(dataset.get("data"), list):
        raise ValueError(f"{_name(data_file)}: not a SQuAD file (no 'data' list)")  # noqa: TRY004 (the CLI reports ValueErrors)
    questions = [
        qa for article in dataset["data"] for p in article["paragraphs"] for qa in p["qas"]
    ]
    version = version or _version(dataset, questions)
    if version == "1.1":
        if na_probs is not None:
            raise ValueError("na_probs are for SQuAD 2.0; this file is v1.1")
        return _evaluate_v1(questions, predictions)
    return _evaluate_v2(questions, predictions, na_probs, na_prob_thresh)


def _evaluate_v1(questions, predictions) -> dict:
    exact = f1 = 0.0
    for qa in questions:
        if qa["id"] not in predictions:
            continue  # the official script prints "Unanswered question ..." and scores it 0
        golds = [answer["text"] for answer in qa["answers"]]
        prediction = predictions[qa["id"]]
        exact += max(exact_match(prediction, gold) for gold in golds)
        f1 += max(f1_score(prediction, gold, version="1.1") for gold in golds)
    total = len(questions)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def _evaluate_v2(questions, predictions, na_probs, na_prob_thresh) -> dict:
    has_answer = {qa["id"]: bool(qa["answers"]) for qa in questions}
    exact_raw, f1_raw = {}, {}
    for qa in questions:
        if qa["id"] not in predictions:
            continue  # the official script prints "Missing prediction" and leaves it out
        # Gold answers that normalize to nothing count as "no answer".
        golds = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])] or [""]
        prediction = predictions[qa["id"]]
        exact_raw[qa["id"]] = max(exact_match(prediction, gold) for gold in golds)
        f1_raw[qa["id"]] = max(f1_score(prediction, gold) for gold in golds)
    scores_na = na_probs if na_probs is not None else {qid: 0.0 for qid in predictions}

    def thresholded(raw):
        # Above the threshold, the question counts as answered "no answer".
        return {
            qid: float(not has_answer[qid]) if scores_na[qid] > na_prob_thresh else score
            for qid, score in raw.items()
        }

    exact, f1 = thresholded(exact_raw), thresholded(f1_raw)
    result = _averages(exact, f1, list(exact))
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qids = [qid for qid, has in has_answer.items() if has == wanted]
        if qids:
            missing = [qid for qid in qids if qid not in exact]
            if missing:  # the official script stops with a KeyError here
                raise ValueError(
                    f"no prediction for {len(missing)} question(s) of the {prefix} split "
                    f"(first: {missing[0]}); the official v2.0 script cannot score this"
                )
            result.update({f"{prefix}_{k}": v for k, v in _averages(exact, f1, qids).items()})
    if na_probs is not None:
        for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
            best, threshold = _best_threshold(predictions, raw, na_probs, has_answer)
            result[f"best_{name}"] = best
            result[f"best_{name}_thresh"] = threshold
    return result


def _averages(exact: dict, f1: dict, qids: list) -> dict:
    total = len(qids)
    return {
        "exact": 100.0 * sum(exact[q] for q in qids) / total,
        "f1": 100.0 * sum(f1[q] for q in qids) / total,
        "total": total,
    }


def _best_threshold(predictions, raw, na_probs, has_answer) -> tuple[float, float]:
    """The no-answer threshold that maximizes the score, as the official `find_best_thresh`:
    start from "every question answered no-answer", then admit questions in increasing
    no-answer score, keeping the best running total (ties keep the lower threshold)."""
    score = best = sum(1 for has in has_answer.values() if not has)
    threshold = 0.0
    for qid in sorted(na_probs, key=lambda q: na_probs[q]):
        if qid not in raw:
            continue
        if has_answer[qid]:
            score += raw[qid]
        elif predictions[qid]:
            score -= 1
        if score > best:
            best, threshold = score, na_probs[qid]
    return 100.0 * best / len(raw), threshold


def _version(dataset: Mapping, questions: list) -> str:
    declared = str(dataset.get("version", ""))
    if declared:
        return "1.1" if declared.lstrip("v").startswith("1.") else "2.0"
    return "2.0" if any("is_impossible" in qa for qa in questions) else "1.1"


def _load_json(value, what: str):
    if isinstance(value, Mapping):
        return value
    try:
        with open(value, encoding="utf-8") as file:
            return json.load(file)
    except FileNotFoundError:
        raise FileNotFoundError(f"{value}: {what} file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{value}: {what} is not valid JSON ({error})") from None


def _name(value) -> str:
    return "data" if isinstance(value, Mapping) else os.fspath(value)
