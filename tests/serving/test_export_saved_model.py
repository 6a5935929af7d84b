"""Strings in, probabilities out: parity with the GLUE encoder, .keras, and a SavedModel loaded
by a fresh process that cannot import albert_keras."""

import json
import subprocess
import sys

import keras
import numpy as np
import pytest
import sentencepiece
import tensorflow as tf

from albert_keras.glue import GlueEncoder
from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras_cli.main import main

FIRST = ["hello, my dog is cute", "A  Café ``review''", "a b c d e f g h i j k l m n o p", "x"]
SECOND = ["is it?", "Über good", "short", "y z"]
PUBLISHED = [10975, 15, 51, 1952, 25, 10901]
DIGIT_COMMA = "born in 1990, we"  # the official encode_pieces splits "▁1990," (issue 42)
LENGTH = 12

# Run in a fresh interpreter (-I: no PYTHONPATH, no current folder) where importing albert_keras
# or keras_hub fails, so only TensorFlow and tensorflow-text can serve the model.
FRESH_PROCESS = r"""
import importlib.abc, json, sys

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("albert_keras", "keras_hub", "pipelines"):
            raise ImportError(f"{name} is blocked in this process")
        return None

sys.meta_path.insert(0, Blocker())
try:
    import albert_keras  # noqa: F401
    importable = True
except ImportError:
    importable = False
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece / normalization ops)

request = json.load(sys.stdin)
DIGIT_COMMA = request["digit_comma"]
served = tf.saved_model.load(request["path"])
single = served.signatures["serving_default"](text=tf.constant(request["first"]))
pairs = served.signatures["pairs"](
    text_a=tf.constant(request["first"]), text_b=tf.constant(request["second"])
)
tokens = served.signatures["tokenize"](text=tf.constant(["hello, my dog is cute", DIGIT_COMMA]))
print(json.dumps({
    "albert_keras_importable": importable,
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("albert_keras", "keras_hub")),
    "single": single["probabilities"].numpy().tolist(),
    "pairs": pairs["probabilities"].numpy().tolist(),
    "token_ids": tokens["token_ids"].numpy().tolist(),
}))
"""


@pytest.fixture(scope="module")
def vocabulary(shared_data):
    return str(shared_data / "vocab" / "30k-clean.reconstructed.model")


@pytest.fixture(scope="module")
def classifier(vocabulary):
    preprocessor = AlbertPreprocessor(AlbertTokenizer(vocabulary), sequence_length=LENGTH)
    keras.utils.set_random_seed(3)  # after the tokenizer, as users seed: it must still tokenize
    backbone = AlbertBackbone(
        vocabulary_size=30000,
        num_layers=2,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=LENGTH,
    )
    return AlbertClassifier(backbone, num_classes=3, dropout=0.1, preprocessor=preprocessor)


@pytest.fixture(scope="module")
def expected(classifier, vocabulary):
    """The model's logits on FIRST and on (FIRST, SECOND) encoded by the GLUE encoder (token ids
    in): `{"single", "pairs"}`, computed once for the tests comparing the text paths with them."""
    encoder = GlueEncoder(vocabulary, sequence_length=LENGTH)
    single = encoder(tf.constant(FIRST))
    pairs = encoder(tf.constant(FIRST), tf.constant(SECOND))
    return {
        name: classifier.predict({k: v.numpy() for k, v in inputs.items()}, verbose=0)
        for name, inputs in (("single", single), ("pairs", pairs))
    }


@pytest.fixture(scope="module")
def saved_path(classifier, tmp_path_factory):
    """The classifier saved once as .keras (restored by one test, exported by another)."""
    path = tmp_path_factory.mktemp("saved") / "classifier.keras"
    classifier.save(path)
    return path


def softmax(logits):
    exp = np.exp(logits - logits.max(-1, keepdims=True))
    return exp / exp.sum(-1, keepdims=True)


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_strings_equal_glue_encoded_ids_before_and_after_keras_save(
    classifier, expected, saved_path
):
    """Strings, pairs (split into batches, or a dataset of pairs) give the logits of the GLUE
    encoder's ids, and so does the model restored from .keras, its vocabulary inside it."""
    expected_single, expected_pairs = expected["single"], expected["pairs"]
    np.testing.assert_allclose(classifier.predict(FIRST, verbose=0), expected_single, atol=1e-6)
    pairs = classifier.predict((FIRST, SECOND), batch_size=3, verbose=0)
    np.testing.assert_allclose(pairs, expected_pairs, atol=1e-6)
    pairs_dataset = tf.data.Dataset.from_tensor_slices((FIRST, SECOND)).batch(2)
    np.testing.assert_allclose(classifier.predict(pairs_dataset, verbose=0), pairs, atol=1e-6)

    restored = keras.saving.load_model(saved_path)
    assert isinstance(restored.preprocessor, AlbertPreprocessor)
    assert restored.preprocessor.tokenizer.proto == classifier.preprocessor.tokenizer.proto
    np.testing.assert_allclose(restored.predict(FIRST, verbose=0), expected_single, atol=1e-6)
    np.testing.assert_allclose(
        restored.predict((FIRST, SECOND), verbose=0), expected_pairs, atol=1e-6
    )


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_fit_on_raw_strings_and_pairs(classifier):
    backbone = AlbertBackbone.from_config(classifier.backbone.get_config())
    clone = AlbertClassifier(backbone, num_classes=3, preprocessor=classifier.preprocessor)
    clone.set_weights(classifier.get_weights())
    clone.compile(optimizer=keras.optimizers.SGD(0.1))
    before = clone.get_weights()
    history = clone.fit(
        (FIRST, SECOND),
        [0, 1, 2, 1],
        batch_size=2,
        epochs=1,
        verbose=0,
        validation_data=(FIRST, [0, 1, 2, 1]),
    )
    assert set(history.history) >= {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert any(not np.array_equal(a, b) for a, b in zip(before, clone.get_weights()))
    result = clone.evaluate(FIRST, [0, 1, 2, 1], verbose=0, return_dict=True)
    assert 0.0 <= result["accuracy"] <= 1.0


def test_exported_saved_model_in_a_process_without_albert_keras(
    expected, saved_path, vocabulary, tmp_path, capsys
):
    served = tmp_path / "served"
    assert main(["export", str(saved_path), str(served)]) == 0
    out = capsys.readouterr().out
    assert "signature serving_default: probabilities" in out and "signature pairs" in out

    request = {"path": str(served), "first": FIRST, "second": SECOND, "digit_comma": DIGIT_COMMA}
    result = subprocess.run(
        [sys.executable, "-I", "-c", FRESH_PROCESS],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["albert_keras_importable"] is False and answer["loaded"] == []
    assert answer["token_ids"][0][: len(PUBLISHED) + 2] == [2, *PUBLISHED, 3]
    # The SavedModel's tokenizer splits as the official code: "▁1990" "," (Python SentencePiece).
    processor = sentencepiece.SentencePieceProcessor(model_file=vocabulary)
    split = [*processor.encode("born in 1990"), processor.piece_to_id(","), *processor.encode("we")]
    assert answer["token_ids"][1][: len(split) + 2] == [2, *split, 3]
    np.testing.assert_allclose(answer["single"], softmax(expected["single"]), atol=1e-6)
    np.testing.assert_allclose(answer["pairs"], softmax(expected["pairs"]), atol=1e-6)


def test_export_without_a_vocabulary_is_one_line_exit_2(tmp_path, capsys):
    backbone = AlbertBackbone(
        vocabulary_size=50,
        num_layers=1,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=16,
    )
    path = tmp_path / "bare.keras"
    AlbertClassifier(backbone, num_classes=2).save(path)
    assert main(["export", str(path), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("albert-keras export: error: the model has no preprocessor")
    assert "\n" not in err and not (tmp_path / "out").exists()
