"""SQuAD reads text through the `AlbertTokenizer` GLUE and serving use (issue #30): the same ids
on the shared SQuAD dev texts, and a saved answerer carries it (vocabulary and length)."""

import re

import keras
import pytest
import sentencepiece

from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer
from albert_keras.preprocessing import AlbertTokenizer
from albert_keras.squad import (
    encode_contexts,
    make_squad_features,
    read_squad_json,
    squad_dataset,
    squad_predictions,
)
from albert_keras.squad.context_pieces import encode_texts, normalize_with_offsets
from albert_keras.squad.squad_answers import answer_questions, score_squad_examples
from albert_keras.squad.squad_features import squad_preprocessor
from albert_keras_contracts import special_tokens
from albert_keras_contracts.vocabulary_identity import file_sha256

DIGIT_COMMA = re.compile(r"\d,$")  # the official encode_pieces re-splits "▁1990," pieces
SPLIT_TEXTS = 4  # shared dev texts holding a piece the split applies to


def test_features_have_the_tokenizers_ids_on_every_shared_text(squad_json, spm_path):
    """Every distinct context and question of the shared dev file: the features' ids equal
    `AlbertTokenizer(text)`, the official digit-comma split included (84 texts of 4,917 hold a
    split piece), and the tokenizer's op equals Python SentencePiece on the normalized text
    before the split (0 mismatches: whole texts are encoded, so SentencePiece's
    context-dependent ties, `uhhhh` alone vs in a sentence, cannot differ between the two)."""
    tokenizer = AlbertTokenizer(str(spm_path), lowercase=True)
    paragraphs = [p for article in squad_json["data"] for p in article["paragraphs"]]
    contexts = list(dict.fromkeys(p["context"] for p in paragraphs))
    questions = [qa["question"] for p in paragraphs for qa in p["qas"]]
    assert (len(contexts), len(questions)) == (87, 626)  # the shared part of SQuAD 2.0 dev
    ours = [c.ids.tolist() for c in encode_contexts(tokenizer, contexts)]
    ours += encode_texts(tokenizer, questions)
    texts = contexts + questions
    served = tokenizer(texts).to_list()
    assert [i for i, (a, b) in enumerate(zip(ours, served)) if a != b] == []
    processor = sentencepiece.SentencePieceProcessor(model_file=str(spm_path))
    normalized = [normalize_with_offsets(text, lower_case=True)[0] for text in texts]
    unsplit = processor.encode(normalized)
    vocabulary = tokenizer.get_vocabulary()
    split = [any(DIGIT_COMMA.search(vocabulary[i]) for i in ids) for ids in unsplit]
    assert sum(split) == SPLIT_TEXTS
    # Only the texts holding a split piece differ from SentencePiece's own ids.
    assert [a != b for a, b in zip(unsplit, served)] == split


def test_special_ids_come_from_their_one_owner(squad_file, spm_path):
    features = make_squad_features(read_squad_json(squad_file, is_training=False)[:3], spm_path,
                                   max_seq_length=64, max_query_length=16)  # fmt: skip
    ids = features.inputs["token_ids"]
    assert (ids[:, 0] == special_tokens.CLS_ID).all()
    lengths = features.inputs["padding_mask"].sum(axis=1)
    assert all(row[n - 1] == special_tokens.SEP_ID for row, n in zip(ids, lengths))
    assert all((row[n:] == special_tokens.PAD_ID).all() for row, n in zip(ids, lengths))


@pytest.mark.parametrize("head", ["simple", "v2"])
def test_a_saved_answerer_answers_text_as_before_saving(tmp_path, squad_file, spm_path, head):
    backbone = AlbertBackbone(vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=8,
                              hidden_dim=16, intermediate_dim=32, max_sequence_length=64)  # fmt: skip
    answerer = AlbertQuestionAnswerer(
        backbone, head=head, preprocessor=squad_preprocessor(spm_path, 64)
    )
    answerer.save(tmp_path / "answerer.keras")
    loaded = keras.saving.load_model(tmp_path / "answerer.keras")
    assert loaded.preprocessor.sequence_length == 64
    assert loaded.preprocessor.tokenizer.vocabulary_sha256 == file_sha256(spm_path)
    dev = read_squad_json(squad_file, is_training=False)
    dev.examples = dev.examples[:6]
    settings = {"doc_stride": 16, "max_query_length": 16}
    scored = score_squad_examples(loaded, dev, **settings)
    # The same answers as the training path: features from the spm file, predict, post-process.
    features = make_squad_features(dev, spm_path, max_seq_length=64, **settings)
    outputs = answerer.predict(squad_dataset(features, 32), verbose=0)
    expected = squad_predictions(features, outputs)
    assert scored["predictions"] == expected.answers(scored["null_threshold"])
    answers = answer_questions(
        loaded, [e.question_text for e in dev], [e.context_text for e in dev], **settings
    )
    assert [a["answer"] for a in answers] == [expected.best_text[e.qas_id] for e in dev]
    with pytest.raises(ValueError, match="to answer questions on text use albert_keras.squad"):
        loaded.predict(["who?"])
