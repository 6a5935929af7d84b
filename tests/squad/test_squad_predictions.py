"""Post-processing: spans ranked across windows, the official filters, no-answer scores, files."""

import json

import numpy as np
import pytest

from albert_keras.squad import (
    SquadExample,
    make_squad_features,
    squad_predictions,
    write_squad_predictions,
)

CONTEXT = " ".join(f"w{i}" for i in range(60)) + " the army came from Paris."


@pytest.fixture(scope="module")
def features(spm_path):
    examples = [
        SquadExample("long", "where from?", CONTEXT, answers=("Paris",)),
        SquadExample("short", "who?", "The king came to town.", answers=("The king",)),
    ]
    return make_squad_features(examples, spm_path, max_seq_length=48, doc_stride=16,
                               max_query_length=8)  # fmt: skip


def _position(features, feature, text):
    """The sequence position of the context piece whose original text (stripped) is `text`."""
    starts, ends = features.piece_chars(feature)
    context = features.examples[features.example_index[feature]].context_text
    for k, (s, e) in enumerate(zip(starts, ends)):
        if context[s : e + 1].strip() == text:
            return int(features.doc_offset[feature]) + k
    raise AssertionError(text)


def test_best_span_across_windows_and_filters(features):
    n = len(features)
    windows = [f for f in range(n) if features.example_index[f] == 0]
    assert len(windows) >= 3  # a long context: several windows
    start, end = np.zeros((n, 48)), np.zeros((n, 48))
    last = windows[-1]
    paris = _position(features, last, "Paris")
    start[last, paris], end[last, paris] = 5.0, 5.0
    # A higher-scoring but reversed span, and one longer than max_answer_length: dropped.
    came = _position(features, last, "came")
    start[last, paris + 1], end[last, came] = 9.0, 9.0
    end[last, paris + 1] = 0.5  # 9.5 < 10
    short = next(f for f in range(n) if features.example_index[f] == 1)
    the, king_ = _position(features, short, "The"), _position(features, short, "king")
    start[short, the], end[short, king_] = 3.0, 3.0
    result = squad_predictions(features, {"start_logits": start, "end_logits": end},
                               max_answer_length=30)  # fmt: skip
    answers = result.answers()
    assert answers["short"] == "The king"  # cut from the original text, case kept
    assert answers["long"] == "Paris"
    nbest = result.nbest["long"]
    assert len(nbest) == 20 and len({e["text"] for e in nbest}) == 20
    assert sum(e["probability"] for e in nbest) == pytest.approx(1.0)
    assert nbest[0]["start_log_prob"] == 5.0 and nbest[0]["end_log_prob"] == 5.0
    # max_answer_length 1: the one-piece span still wins; 0 leaves nothing ("empty", official v1).
    assert squad_predictions(features, {"start_logits": start, "end_logits": end},
                             max_answer_length=1).answers()["long"] == "Paris"  # fmt: skip
    assert squad_predictions(features, {"start_logits": start, "end_logits": end},
                             max_answer_length=0).answers()["long"] == "empty"  # fmt: skip
    # BERT's null score for the simple head: min over windows of [CLS] start + end, minus the
    # best span's score.
    start[:, 0] = 2.0
    end[:, 0] = 1.0
    odds = squad_predictions(features, {"start_logits": start, "end_logits": end}).null_odds
    assert odds["long"] == pytest.approx(3.0 - 10.0) and odds["short"] == pytest.approx(3.0 - 6.0)


def test_beam_outputs_and_the_threshold(features, tmp_path):
    n = len(features)
    short = next(f for f in range(n) if features.example_index[f] == 1)
    the, king_ = _position(features, short, "The"), _position(features, short, "king")
    outputs = {
        "start_top_log_probs": np.full((n, 2), -5.0),
        "start_top_index": np.zeros((n, 2), "int32"),
        "end_top_log_probs": np.full((n, 4), -5.0),
        "end_top_index": np.zeros((n, 4), "int32"),
        "cls_logits": np.arange(n, dtype="float64"),
    }
    outputs["start_top_index"][short] = [the, 1]  # position 1 is the question: dropped
    outputs["start_top_log_probs"][short] = [-0.1, -0.2]
    outputs["end_top_index"][short] = [king_, the, king_, 2]
    outputs["end_top_log_probs"][short] = [-0.3, -0.4, -0.1, -0.1]
    result = squad_predictions(features, outputs)
    assert result.best_text["short"] == "The king"
    assert [e["text"] for e in result.nbest["short"]] == ["The king", "The"]
    # No valid span in any window of "long": the official v2 nonce entry "".
    assert result.best_text["long"] == "" and result.nbest["long"][0]["start_log_prob"] == -1e6
    # The no-answer score: the lowest cls_logit over the question's windows.
    assert result.null_odds["long"] == 0.0 and result.null_odds["short"] == float(short)
    # Above the threshold: "" (the evaluation script's rule).
    assert result.answers(float(short) - 0.5)["short"] == ""
    assert result.answers(float(short))["short"] == "The king"
    files = write_squad_predictions(tmp_path, result.answers(), result.null_odds, result.nbest)
    assert files == ["predictions.json", "null_odds.json", "nbest_predictions.json"]
    assert json.loads((tmp_path / "null_odds.json").read_text()) == result.null_odds
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)  # no temporary left
