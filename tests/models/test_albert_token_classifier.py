"""AlbertTokenClassifier: logits per piece, the loss on labelled pieces only, word tags on text."""

import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone, AlbertTokenClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras.preprocessing.word_pieces import IGNORED_LABEL, encode_words

LABELS = ["O", "B-PER", "I-PER"]


@pytest.fixture
def tagger(tiny_config, tiny_spm):
    backbone = AlbertBackbone(**tiny_config)
    preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), 32)
    return AlbertTokenClassifier(backbone, num_classes=3, labels=LABELS, preprocessor=preprocessor)


def test_logits_are_the_head_over_the_sequence_output(tagger, backbone_inputs):
    logits = np.asarray(tagger(backbone_inputs))
    sequence = tagger.backbone(backbone_inputs)["sequence_output"]
    head = tagger.output_dense
    expected = np.asarray(sequence) @ head.kernel.numpy() + head.bias.numpy()
    assert logits.shape == (*backbone_inputs["token_ids"].shape, 3)
    np.testing.assert_allclose(logits, expected, atol=1e-5)


def test_the_loss_counts_only_labelled_pieces(tagger, backbone_inputs):
    tagger.compile()
    labels = np.full(backbone_inputs["token_ids"].shape, IGNORED_LABEL, "int32")
    labels[:, 1], labels[0, 2] = [1, 0, 2, 1], 2
    logits = np.asarray(tagger(backbone_inputs)).astype("float64")
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    rows, cols = np.nonzero(labels != IGNORED_LABEL)
    expected = -log_probs[rows, cols, labels[rows, cols]].mean()
    loss = tagger.evaluate(backbone_inputs, labels, verbose=0)
    assert loss == pytest.approx(expected, rel=1e-5)


def test_the_pooler_is_not_trained(tagger):
    pooler = {id(w) for w in tagger.backbone.pooler.weights}
    assert not pooler & {id(w) for w in tagger.trainable_weights}
    assert len(tagger.weights) == len(tagger.trainable_weights) + 2


def test_predict_on_text_tags_words_with_offsets(tagger):
    text = "the cat  sat on the mat"
    (tags,) = tagger.predict([text])
    assert [(t["word"], t["start"], t["end"]) for t in tags] == [
        ("the", 0, 3), ("cat", 4, 7), ("sat", 9, 12), ("on", 13, 15), ("the", 16, 19),
        ("mat", 20, 23),
    ]  # fmt: skip
    words = text.split()
    inputs, _, first = encode_words(tagger.preprocessor.tokenizer, [words], 32)
    assert (first >= 0).all()  # every word fits
    ids = np.argmax(np.asarray(tagger(inputs))[0, first[0]], -1)
    assert [t["tag"] for t in tags] == [LABELS[i] for i in ids]
    # Words past the sequence length get no tag.
    long = tagger.predict(" ".join(["cat"] * 40))[0]
    assert len(long) == 40 and long[-1]["tag"] is None and long[0]["tag"] in LABELS


def test_saved_and_loaded_it_tags_the_same(tagger, tmp_path):
    tagger.save(tmp_path / "tagger.keras")
    loaded = keras.saving.load_model(tmp_path / "tagger.keras")
    assert loaded.labels == LABELS and loaded.get_config()["num_classes"] == 3
    text = ["a dog sat on the mat", "the cat"]
    assert loaded.predict(text) == tagger.predict(text)


def test_bad_arguments(tiny_config):
    backbone = AlbertBackbone(**tiny_config)
    with pytest.raises(ValueError, match="2 labels for num_classes=3"):
        AlbertTokenClassifier(backbone, num_classes=3, labels=["O", "B"])
    with pytest.raises(ValueError, match="needs the model's preprocessor and labels"):
        AlbertTokenClassifier(backbone, num_classes=2).predict(["a cat"])
