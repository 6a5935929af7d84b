"""Model outputs -> answer texts, as the official `write_predictions_v1` / `_v2`.

For each question, every window proposes spans: the `n_best_size` (20) best starts times the 20
best ends (the simple head), or the beam of `start_n_top` x `end_n_top` (5 x 5) spans the v2
head returns. A span is dropped if it leaves the context, ends before it starts, is longer than
`max_answer_length` (30) pieces, or starts on a piece another window sees with more context.
The rest are ranked across windows by start + end score; the `n_best_size` best distinct texts,
cut from the original context between the first piece's first character and the last piece's
last character (whitespace trimmed), are the n-best list, its first the answer.

SQuAD 2.0's "no answer" has a score per question (`null_odds.json`): the v2 head's
answerability logit (lowest over the windows, as official); for the simple head, BERT's
`[CLS]` span score (lowest over windows) minus the best span's score. A question whose score is
above the threshold gets "" (the evaluation script's rule; the official `write_predictions_v2`
uses `<`, which treats the question at exactly the threshold the other way).
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib

import numpy as np

from albert_keras.squad.squad_features import SquadFeatures
from albert_keras_contracts import atomic_write


@dataclasses.dataclass
class SquadPredictions:
    """Per question id: the best span's text, its n-best list and its no-answer score.

    Args:
        best_text: dict. Question id -> the best non-empty span's text.
        nbest: dict. Question id -> list of `{"text", "probability", "start_log_prob",
            "end_log_prob"}` (the official `nbest_predictions.json`).
        null_odds: dict. Question id -> no-answer score (`null_odds.json`; higher: more
            likely unanswerable).
    """

    best_text: dict[str, str]
    nbest: dict[str, list[dict]]
    null_odds: dict[str, float]

    def answers(self, null_threshold: float | None = None) -> dict[str, str]:
        """`predictions.json`: the best text, or "" where the no-answer score is above
        `null_threshold` (None: always answer, as SQuAD 1.1)."""
        if null_threshold is None:
            return dict(self.best_text)
        return {
            qid: "" if self.null_odds[qid] > null_threshold else text
            for qid, text in self.best_text.items()
        }


def squad_predictions(
    features: SquadFeatures,
    outputs: dict[str, np.ndarray],
    *,
    n_best_size: int = 20,
    max_answer_length: int = 30,
) -> SquadPredictions:
    """Turns `AlbertQuestionAnswerer.predict` outputs on `features` into answers.

    Args:
        features: SquadFeatures. The windows the outputs are for, in order.
        outputs: dict of NumPy arrays. The simple head's `start_logits`, `end_logits`
            (features, seq); or the v2 head's `start_top_log_probs`, `start_top_index`
            (features, start_n_top), `end_top_log_probs`, `end_top_index` (features,
            start_n_top * end_n_top) and `cls_logits` (features,).
        n_best_size: int. Candidates per window side and answers kept.
        max_answer_length: int. Longest span in pieces.

    Returns:
        SquadPredictions.

    Example:
    >>> from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer
    >>> from albert_keras.squad import make_squad_features, read_squad_json
    >>> dev = read_squad_json("squad-dev.json", is_training=False)
    >>> features = make_squad_features(dev[:4], "30k-clean.model", max_seq_length=128)
    >>> answerer = AlbertQuestionAnswerer(AlbertBackbone(
    ...     vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
    ...     intermediate_dim=32, max_sequence_length=128))  # untrained: the answers are noise
    >>> result = squad_predictions(features, answerer.predict(features.inputs, verbose=0))
    >>> len(result.answers()), sorted(result.answers()) == sorted(e.qas_id for e in dev[:4])
    (4, True)
    """
    beam = "cls_logits" in outputs
    outputs = {name: np.asarray(value) for name, value in outputs.items()}
    if len(next(iter(outputs.values()))) != len(features):
        raise ValueError(
            f"{len(next(iter(outputs.values())))} outputs for {len(features)} features"
        )
    by_example = {}
    for feature, example_index in enumerate(features.example_index):
        by_example.setdefault(int(example_index), []).append(feature)
    best_text, nbest, null_odds = {}, {}, {}
    for example_index, example in enumerate(features.examples):
        candidates, null_score = [], math.inf
        for feature in by_example.get(example_index, []):
            if beam:
                spans = _beam_spans(outputs, feature)
                null_score = min(null_score, float(outputs["cls_logits"][feature]))
            else:
                spans = _top_spans(outputs, feature, n_best_size)
                start, end = outputs["start_logits"][feature], outputs["end_logits"][feature]
                null_score = min(null_score, float(start[0] + end[0]))
            candidates += _valid(features, feature, spans, max_answer_length)
        entries = _nbest_entries(features, example, candidates, n_best_size, beam)
        if example_index not in by_example:
            # No window (an empty context): nothing to answer from, so "" (the official
            # evaluation's reading of a question without a prediction), not the "empty" nonce.
            entries = [("", 0.0, 0.0)]
        totals = np.asarray([s + e for _, s, e in entries], np.float64)
        probabilities = np.exp(totals - totals.max())
        probabilities /= probabilities.sum()
        nbest[example.qas_id] = [
            {"text": text, "probability": float(p), "start_log_prob": float(s),
             "end_log_prob": float(e)}
            for (text, s, e), p in zip(entries, probabilities)
        ]  # fmt: skip
        best_text[example.qas_id] = entries[0][0]
        if math.isinf(null_score):  # no window: nothing to answer from
            null_odds[example.qas_id] = 1e6
        elif beam:
            null_odds[example.qas_id] = null_score
        else:
            null_odds[example.qas_id] = null_score - float(totals[0])
    return SquadPredictions(best_text=best_text, nbest=nbest, null_odds=null_odds)


def _nbest_entries(features, example, candidates, n_best_size: int, beam: bool) -> list[tuple]:
    """The example's n best `(text, start_score, end_score)`, best first, one per distinct
    answer text (the official "nonce" entry where no candidate is valid)."""
    candidates = sorted(candidates, key=lambda c: c[3] + c[4], reverse=True)
    entries, seen = [], set()
    for feature, start, end, start_score, end_score in candidates:
        if len(entries) >= n_best_size:
            break
        char_starts, char_ends = features.piece_chars(feature)
        text = example.context_text[char_starts[start] : char_ends[end] + 1].strip()
        if text in seen:
            continue
        seen.add(text)
        entries.append((text, start_score, end_score))
    if not entries:
        entries = [("", -1e6, -1e6)] if beam else [("empty", 0.0, 0.0)]
    return entries


def _top_spans(outputs, feature: int, n_best_size: int):
    start_logits, end_logits = outputs["start_logits"][feature], outputs["end_logits"][feature]
    # Stable: equal logits keep position order, as the official sorted(..., reverse=True).
    starts = np.argsort(-start_logits, kind="stable")[:n_best_size]
    ends = np.argsort(-end_logits, kind="stable")[:n_best_size]
    for start in starts:
        for end in ends:
            yield int(start), int(end), float(start_logits[start]), float(end_logits[end])


def _beam_spans(outputs, feature: int):
    start_top = outputs["start_top_index"][feature]
    end_top = outputs["end_top_index"][feature]
    end_n_top = len(end_top) // len(start_top)
    for i, start in enumerate(start_top):
        for j in range(end_n_top):
            k = i * end_n_top + j
            yield (
                int(start),
                int(end_top[k]),
                float(outputs["start_top_log_probs"][feature][i]),
                float(outputs["end_top_log_probs"][feature][k]),
            )


def _valid(features: SquadFeatures, feature: int, spans, max_answer_length: int):
    """The spans inside the window's context, in order, as (feature, first piece, last piece,
    start score, end score) with pieces counted from the window's first context piece."""
    offset = int(features.doc_offset[feature])
    length = int(features.doc_length[feature])
    max_context = features.max_context[feature]
    kept = []
    for start, end, start_score, end_score in spans:
        first, last = start - offset, end - offset
        if first < 0 or first >= length or last >= length or not max_context[first]:
            continue
        if end < start or end - start + 1 > max_answer_length:
            continue
        kept.append((feature, first, last, start_score, end_score))
    return kept


def write_squad_predictions(
    output_dir: str | os.PathLike,
    predictions: dict[str, str],
    null_odds: dict[str, float] | None = None,
    nbest: dict[str, list] | None = None,
) -> list[str]:
    """Writes `predictions.json` (and `null_odds.json`, `nbest_predictions.json`) in the
    official formats, each under a temporary name first. Returns the file names written."""
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in (
        ("predictions.json", predictions),
        ("null_odds.json", null_odds),
        ("nbest_predictions.json", nbest),
    ):
        if data is not None:
            atomic_write.write_json(output_dir / name, data, indent=4)
            written.append(name)
    return written
