"""The exported SavedModel's text signatures agree with the Python path: NUL bytes do not end
a text, and pairs of unequal batches are refused (they lost rows)."""

import keras
import pytest
import sentencepiece
import tensorflow as tf

from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras.serving.export_saved_model import export_saved_model
from albert_keras_contracts.text_normalization import preprocess_text

LENGTH = 12
pytestmark = pytest.mark.slow  # the export takes ~30 s; the layers' own tests cover the fix


@pytest.fixture(scope="module")
def served(shared_data, tmp_path_factory):
    """(loaded SavedModel, vocabulary path) of a tiny classifier over the release vocabulary."""
    import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)

    vocabulary = str(shared_data / "vocab" / "30k-clean.reconstructed.model")
    keras.utils.set_random_seed(3)
    backbone = AlbertBackbone(
        vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=LENGTH,
    )  # fmt: skip
    preprocessor = AlbertPreprocessor(AlbertTokenizer(vocabulary), sequence_length=LENGTH)
    classifier = AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor)
    folder = tmp_path_factory.mktemp("served") / "model"
    export_saved_model(classifier, folder)
    return tf.saved_model.load(str(folder)), vocabulary


def test_tokenize_keeps_what_follows_a_nul_byte(served):
    model, vocabulary = served
    text = "good movie\0\0 really\0"
    pieces = sentencepiece.SentencePieceProcessor(model_file=vocabulary).encode(
        preprocess_text(text, lower_case=True)
    )
    assert len(pieces) == 5  # the served graph gave 2: 'good movie'
    token_ids = model.signatures["tokenize"](text=tf.constant([text]))["token_ids"]
    assert token_ids.numpy()[0].tolist() == [2, *pieces, 3] + [0] * (LENGTH - len(pieces) - 2)


def test_pairs_of_unequal_batches_are_refused(served):
    model, _ = served
    pairs = model.signatures["pairs"]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"text_a and text_b need as many"):
        pairs(text_a=tf.constant(["a", "b"]), text_b=tf.constant(["c", "d", "e"]))
    assert pairs(text_a=tf.constant(["a", "b"]), text_b=tf.constant(["c", "d"]))[
        "probabilities"
    ].shape == (2, 2)
