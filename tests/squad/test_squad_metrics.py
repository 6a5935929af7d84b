"""`evaluate_squad` against the official definitions (official_eval_reference.py) and by hand."""

import copy
import json
import random

import pytest
from official_eval_reference import v1_evaluate, v2_evaluate

from albert_keras.squad import evaluate_squad, f1_score, normalize_answer


def _file(qas, version):
    return {"version": version, "data": [{"paragraphs": [{"context": "c", "qas": qas}]}]}


def _qa(qid, *golds, impossible=False):
    return {"id": qid, "question": "?", "is_impossible": impossible,
            "answers": [{"text": g, "answer_start": 0} for g in golds]}  # fmt: skip


def test_normalization_of_articles_punctuation_and_whitespace():
    assert normalize_answer("The Norman  conquest.") == "norman conquest"
    assert normalize_answer("an apple, a pear; the END") == "apple pear end"
    # Articles only as whole words; punctuation is removed before articles (so "the-" goes).
    assert normalize_answer("theatre anthem") == "theatre anthem"
    assert normalize_answer("the-end") == "theend"
    assert normalize_answer("\t1,000\n$ ") == "1000"
    assert normalize_answer("A") == ""


def test_hand_computed_scores():
    # v1.1: prediction "Norman conquest of England" vs gold "the Norman conquest": 2 common
    # tokens, precision 2/4, recall 2/2 -> F1 2/3.
    assert f1_score("Norman conquest of England", "the Norman conquest", "1.1") == pytest.approx(
        2 / 3
    )
    data = _file([_qa("a", "the Norman conquest", "Normans"), _qa("b", "1,000 men")], "1.1")
    result = evaluate_squad(data, {"a": "Norman conquest of England", "b": "1000 men!"})
    assert result == {"exact_match": 50.0, "f1": 100.0 * (2 / 3 + 1) / 2}
    # A missing prediction scores 0 but counts in the total (v1.1).
    assert evaluate_squad(data, {"b": "1000 men"}) == {"exact_match": 50.0, "f1": 50.0}


def test_v2_empty_gold_and_empty_prediction():
    qas = [
        _qa("has", "the cat"),
        _qa("none", impossible=True),
        _qa("article_only", "The", "an"),  # golds that normalize to "" count as no answer
    ]
    data = _file(qas, "v2.0")
    result = evaluate_squad(data, {"has": "", "none": "", "article_only": ""})
    assert result["exact"] == pytest.approx(200 / 3) and result["f1"] == pytest.approx(200 / 3)
    assert (result["HasAns_total"], result["NoAns_total"]) == (2, 1)
    assert result["HasAns_exact"] == 50.0 and result["NoAns_exact"] == 100.0
    # v1.1 rules differ: an empty prediction never has F1 1 there.
    assert f1_score("", "", "1.1") == 0.0 and f1_score("", "", "2.0") == 1.0


def test_v2_thresholds_by_hand():
    data = _file([_qa("h1", "red"), _qa("h2", "blue"), _qa("n1", impossible=True)], "v2.0")
    predictions = {"h1": "red", "h2": "green", "n1": "yellow"}
    na_probs = {"h1": 0.1, "h2": 0.5, "n1": 0.9}
    result = evaluate_squad(data, predictions, na_probs)
    # Start with all "no answer": 1 right (n1). Admit h1 (+1) -> 2 at 0.1; h2 (+0) -> 2;
    # n1 (-1) -> 1. Best 2 of 3 at threshold 0.1.
    assert result["best_exact"] == pytest.approx(200 / 3) and result["best_exact_thresh"] == 0.1
    assert result["best_f1_thresh"] == 0.1
    # With na_prob_thresh 0.4, h2 and n1 count as answered "no answer".
    low = evaluate_squad(data, predictions, na_probs, na_prob_thresh=0.4)
    assert low["exact"] == pytest.approx(200 / 3)  # h1 right, h2 wrong (has an answer), n1 right
    assert set(result) == {
        "exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
        "NoAns_exact", "NoAns_f1", "NoAns_total",
        "best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh",
    }  # fmt: skip


def _perturbed_predictions(dataset, seed):
    """Gold answers, variants where normalization matters, partial and wrong answers, and ""."""
    rng = random.Random(seed)
    predictions = {}
    for article in dataset:
        for paragraph in article["paragraphs"]:
            words = paragraph["context"].split()
            for qa in paragraph["qas"]:
                gold = qa["answers"][0]["text"] if qa["answers"] else ""
                choice = rng.randrange(7)
                if choice == 0:
                    text = gold
                elif choice == 1:
                    text = f"The  {gold.upper()}!!"
                elif choice == 2:
                    text = " ".join(gold.split()[: max(1, len(gold.split()) // 2)])
                elif choice == 3:
                    start = rng.randrange(max(1, len(words) - 5))
                    text = " ".join(words[start : start + rng.randrange(1, 6)])
                elif choice == 4:
                    text = ""
                elif choice == 5:
                    text = f"a {gold}, an {gold}"
                else:
                    text = gold.replace(" ", "\t ") + " the"
                predictions[qa["id"]] = text
    return predictions


@pytest.mark.parametrize("seed", [0])
def test_v2_equals_the_official_definitions(squad_json, seed):
    predictions = _perturbed_predictions(squad_json["data"], seed)
    rng = random.Random(seed)
    # Ties on purpose (rounded scores): the threshold search must break them as official.
    na_probs = {qid: round(rng.random(), 2) for qid in predictions}
    for probs in (None, na_probs):
        ours = evaluate_squad(squad_json, predictions, probs)
        official = v2_evaluate(squad_json["data"], predictions, probs)
        assert ours == official  # every key, to the last digit
    assert ours["total"] == 626 and ours["NoAns_total"] == 333  # tests/data/squad/PROVENANCE.md


def test_v1_equals_the_official_definitions(squad_json):
    # A SQuAD 1.1-style file: the answerable questions only.
    v1 = copy.deepcopy(squad_json)
    v1["version"] = "1.1"
    for article in v1["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [qa for qa in paragraph["qas"] if not qa["is_impossible"]]
            for qa in paragraph["qas"]:
                del qa["is_impossible"]
    predictions = _perturbed_predictions(v1["data"], 3)
    predictions.pop(next(iter(predictions)))  # one unanswered question
    ours = evaluate_squad(v1, predictions)
    assert ours == v1_evaluate(v1["data"], predictions)
    assert 0 < ours["exact_match"] < ours["f1"] < 100


def test_files_and_bad_input(tmp_path, squad_file, squad_json):
    predictions = _perturbed_predictions(squad_json["data"], 5)
    (tmp_path / "predictions.json").write_text(json.dumps(predictions))
    from_files = evaluate_squad(squad_file, tmp_path / "predictions.json")
    assert from_files == evaluate_squad(squad_json, predictions)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"bad.json: predictions is not valid JSON"):
        evaluate_squad(squad_file, tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError, match="missing.json: data_file file not found"):
        evaluate_squad(tmp_path / "missing.json", predictions)
    some = dict(list(predictions.items())[:10])
    with pytest.raises(ValueError, match="no prediction for .* of the HasAns split"):
        evaluate_squad(squad_json, some)
