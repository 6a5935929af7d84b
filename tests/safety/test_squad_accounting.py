"""SQuAD input accounted for (issue 43): training answers outside their context or not at their
offset are skipped in one line with the count and the first ids (or refused with `--strict`);
a question id given twice is refused; a question of an empty context is scored as the official
evaluation scores it (answered ""), and the count printed is the count scored; a SQuAD 1.1 file's
impossible question is refused for that, not for its answers."""

import json

import keras
import numpy as np
import pytest

import albert_keras as ak
from albert_keras.squad import make_squad_features, read_squad_json
from albert_keras.squad.squad_answers import examples_as_dataset
from albert_keras.squad.squad_examples import check_strict
from albert_keras.squad.squad_metrics import evaluate_squad
from albert_keras.squad.squad_predictions import squad_predictions
from albert_keras_cli.main import main

CONTEXT = "the cat sat on the mat ."


def _qa(qid, text=None, start=None, impossible=False):
    answers = [] if text is None else [{"text": text, "answer_start": start}]
    return {"id": qid, "question": "who sat ?", "answers": answers, "is_impossible": impossible}


def _file(path, paragraphs, version="v2.0"):
    data = {"version": version, "data": [{"title": "t", "paragraphs": [
        {"context": context, "qas": qas} for context, qas in paragraphs]}]}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_answers_not_at_their_offset_are_skipped_in_one_line_or_refused(tmp_path):
    path = _file(tmp_path / "train.json", [(CONTEXT, [
        _qa("ok", "cat", 4), _qa("past", "mat", 400), _qa("moved", "mat", 3),
        _qa("elsewhere", "dog", 4), _qa("late", "cat", 99), _qa("fine", "mat", 19)])])  # fmt: skip
    train = read_squad_json(path, is_training=True)
    assert [e.qas_id for e in train] == ["ok", "fine"]
    note = f"{path}: skipped 4 question(s): answer text not at answer_start "
    assert train.notes() == [note + "(past, moved, elsewhere, ...)"]
    with pytest.raises(ValueError) as error:
        check_strict(train)
    assert str(error.value) == (
        f"{path}: skipped 4 question(s): answer text not at answer_start (past, moved, "
        "elsewhere, ...); --strict refuses them"
    )
    check_strict(read_squad_json(path, is_training=False))  # prediction skips nothing


def test_a_question_id_given_twice_is_refused(tmp_path):
    path = _file(tmp_path / "dev.json", [(CONTEXT, [_qa("q1", "cat", 4)]),
                                         ("the dog ran .", [_qa("q1", "dog", 4)])])  # fmt: skip
    for is_training in (True, False):
        with pytest.raises(ValueError) as error:
            read_squad_json(path, is_training=is_training)
        assert str(error.value) == f"{path}: question id 'q1' appears twice"


def test_a_squad_1_1_impossible_question_is_refused_for_that(tmp_path):
    # The impossible question first, then one with no answer: the message was about answers.
    path = _file(tmp_path / "train.json", [(CONTEXT, [
        _qa("a", "cat", 4), _qa("b", impossible=True), _qa("c")])], version="1.1")  # fmt: skip
    for is_training in (True, False):
        with pytest.raises(ValueError) as error:
            read_squad_json(path, is_training=is_training)
        assert str(error.value) == (
            f"{path}: question b has is_impossible: true, but this is a SQuAD 1.1 file: give a "
            "2.0 file (and --version 2.0)"
        )


def _dev(tmp_path):
    """Three answerable questions, one unanswerable, two questions of an empty context."""
    return _file(tmp_path / "dev.json", [
        (CONTEXT, [_qa("a", "cat", 4), _qa("b", "mat", 19), _qa("n", impossible=True)]),
        ("", [_qa("e1", impossible=True), _qa("e2", impossible=True)]),
        ("the dog ran .", [_qa("d", "dog", 4)]),
    ])  # fmt: skip


def test_questions_of_an_empty_context_are_scored_answered_nothing(tmp_path, tiny_spm):
    dev = read_squad_json(_dev(tmp_path), is_training=False)
    assert [e.qas_id for e in dev] == ["a", "b", "n", "e1", "e2", "d"]
    assert dev.notes() == [
        f'{dev.source}: 2 question(s) with an empty context, answered "" and scored (e1, e2)'
    ]
    features = make_squad_features(dev, str(tiny_spm), max_seq_length=24, doc_stride=8,
                                   max_query_length=8)  # fmt: skip
    assert sorted(set(features.example_index.tolist())) == [0, 1, 2, 5]  # no window: e1, e2
    zeros = np.zeros((len(features), 24), np.float32)
    result = squad_predictions(features, {"start_logits": zeros, "end_logits": zeros})
    answers = result.answers()
    assert sorted(answers) == ["a", "b", "d", "e1", "e2", "n"]
    assert answers["e1"] == answers["e2"] == ""  # not the "empty" nonce
    scores = evaluate_squad(examples_as_dataset(dev), answers, result.null_odds)
    # Every question scored: the two of the empty context as unanswerable, right.
    assert (scores["total"], scores["NoAns_total"], scores["HasAns_total"]) == (6, 3, 3)
    on_empty_only = evaluate_squad(
        examples_as_dataset(dev), {"e1": "", "e2": "", **{q: "x" for q in "abnd"}}
    )
    assert on_empty_only["NoAns_exact"] == pytest.approx(200 / 3)  # e1, e2 right; n wrong


def _model(tmp_path, tiny_spm):
    model = tmp_path / "model"
    model.mkdir()
    ak.AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8,
                      hidden_dim=16, intermediate_dim=32,
                      max_sequence_length=32).save(model / "backbone.keras")  # fmt: skip
    (model / "spm.model").write_bytes(tiny_spm.read_bytes())
    return model / "backbone.keras"


def test_finetune_squad_prints_the_count_it_scored(tmp_path, tiny_spm, capsys):
    model = _model(tmp_path, tiny_spm)
    out = tmp_path / "out"
    argv = ["finetune-squad", "--version", "2.0", "--predict_file", str(_dev(tmp_path)),
            "--init_from", str(model), "--output_dir", str(out),
            "--epochs", "0", "--max_seq_length", "32", "--doc_stride", "8",
            "--max_query_length", "8", "--strategy", "cpu"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert '2 question(s) with an empty context, answered "" and scored (e1, e2)' in printed
    assert "SQuAD 2.0: 6 questions " in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["metrics"]["total"] == metrics["predict_examples"] == 6
    predictions = json.loads((out / "predictions.json").read_text())
    assert sorted(predictions) == ["a", "b", "d", "e1", "e2", "n"]
    assert predictions["e1"] == predictions["e2"] == ""
    keras.backend.clear_session()


def test_finetune_squad_strict_refuses_before_the_model_loads(tmp_path, tiny_spm, capsys):
    model = _model(tmp_path, tiny_spm)
    train = _file(tmp_path / "train.json", [(CONTEXT, [_qa("ok", "cat", 4), _qa("off", "cat", 5)])])
    out = tmp_path / "out"
    argv = ["finetune-squad", "--version", "2.0", "--train_file", str(train), "--predict_file",
            str(_dev(tmp_path)), "--init_from", str(model), "--output_dir", str(out),
            "--max_seq_length", "32", "--doc_stride", "8", "--max_query_length", "8",
            "--strategy", "cpu", "--strict"]  # fmt: skip
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    error = f"albert-keras finetune-squad: error: {train}: skipped 1 question(s): answer text "
    assert lines == [error + "not at answer_start (off); --strict refuses them"]
    assert not out.exists()
