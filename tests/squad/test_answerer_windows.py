"""A question answerer carries the `doc_stride` and `max_query_length` it was fine-tuned with
(issue #30): they survive save and load, and answering text (`answer_questions`, `albert-keras
predict`) cuts contexts with them unless a flag overrides them."""

import json

import keras
import pytest

from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras.squad import answer_questions
from albert_keras.squad.squad_answers import window_settings
from albert_keras_cli.main import main

# Long enough for several windows of 24 pieces: the stride decides which there are.
CONTEXT = "the cat sat on the mat and a dog ran in the park. it was a fine day for the cat. " * 3
QUESTIONS = ["where did the dog run?", "who sat on the mat?"]


@pytest.fixture(scope="module")
def saved(tiny_spm, tmp_path_factory):
    """A (random) answerer saved with doc_stride 5 and max_query_length 4."""
    keras.utils.set_random_seed(3)
    tokenizer = AlbertTokenizer(str(tiny_spm))
    backbone = AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=1, num_heads=2,
        embedding_dim=8, hidden_dim=16, intermediate_dim=32, max_sequence_length=24,
    )  # fmt: skip
    answerer = AlbertQuestionAnswerer(
        backbone,
        head="simple",
        preprocessor=AlbertPreprocessor(tokenizer, sequence_length=24),
        doc_stride=5,
        max_query_length=4,
    )
    path = tmp_path_factory.mktemp("answerer") / "model.keras"
    answerer.save(path)
    return path


def test_the_window_settings_survive_save_and_load(saved):
    loaded = keras.saving.load_model(saved)
    assert (loaded.doc_stride, loaded.max_query_length) == (5, 4)
    assert window_settings(loaded) == {"doc_stride": 5, "max_query_length": 4}
    assert window_settings(loaded, doc_stride=7) == {"doc_stride": 7, "max_query_length": 4}
    with pytest.raises(ValueError, match="doc_stride must be a positive integer, got 0"):
        AlbertQuestionAnswerer(loaded.backbone, doc_stride=0)


def test_answering_uses_the_saved_stride_unless_told_otherwise(saved):
    loaded = keras.saving.load_model(saved)
    contexts = [CONTEXT] * len(QUESTIONS)
    default = answer_questions(loaded, QUESTIONS, contexts)
    saved_settings = answer_questions(loaded, QUESTIONS, contexts, doc_stride=5, max_query_length=4)
    other = answer_questions(loaded, QUESTIONS, contexts, doc_stride=128)
    assert default == saved_settings
    assert default != other  # other windows, other no-answer scores


def test_predict_uses_the_saved_stride_and_a_flag_overrides_it(saved, tmp_path, capsys):
    source = tmp_path / "questions.jsonl"
    source.write_text(
        "".join(json.dumps({"question": q, "context": CONTEXT}) + "\n" for q in QUESTIONS)
    )
    loaded = keras.saving.load_model(saved)
    contexts = [CONTEXT] * len(QUESTIONS)
    for flags, settings in (
        ([], {"doc_stride": 5, "max_query_length": 4}),
        (["--doc_stride", "128", "--max_query_length", "8"],
         {"doc_stride": 128, "max_query_length": 8}),
    ):  # fmt: skip
        capsys.readouterr()
        assert main(["predict", "--model", str(saved), "--input", str(source), *flags]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        expected = answer_questions(loaded, QUESTIONS, contexts, **settings)
        assert [row["answer"] for row in rows] == [row["answer"] for row in expected]
        assert [row["null_odds"] for row in rows] == pytest.approx(
            [row["null_odds"] for row in expected], abs=1e-5
        )
