"""finetune-glue's model.keras carries its preprocessor: it predicts on strings after
`keras.saving.load_model`, and `albert-keras export` with no flag serves the same
probabilities at the sequence length it was trained at."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from finetuned_classifier import SEQUENCE_LENGTH, finetune_tiny_sst2

from albert_keras.glue import GlueEncoder
from albert_keras_cli.main import main

TEXTS = ["a film I loved", "the cat sat on the mat", "Ünïcode  ``quotes''", "", "dull\0 day"]


@pytest.fixture(scope="module")
def finetuned(tmp_path_factory, tiny_spm):
    folder = tmp_path_factory.mktemp("finetuned")
    model_path, _, _ = finetune_tiny_sst2(folder, tiny_spm)
    return folder, model_path


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_the_saved_model_predicts_strings_as_it_was_trained(finetuned):
    folder, model_path = finetuned
    model = keras.saving.load_model(model_path)
    assert model.preprocessor.sequence_length == SEQUENCE_LENGTH
    from_strings = model.predict(TEXTS, verbose=0)
    assert from_strings.shape == (len(TEXTS), 2)
    # The training path's ids (the encoder finetune_glue built) give the same logits.
    encoder = GlueEncoder(folder / "spm.model", SEQUENCE_LENGTH)
    from_ids = model.predict(encoder(tf.constant(TEXTS)), verbose=0)
    np.testing.assert_allclose(from_strings, from_ids, rtol=0, atol=1e-6)


@pytest.mark.slow  # the export writes and traces a SavedModel: ~30 s on 2 cores
def test_export_needs_no_flag_and_serves_the_same_probabilities(finetuned, capsys):
    import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)

    folder, model_path = finetuned
    served_dir = folder / "served"
    assert main(["export", str(model_path), str(served_dir)]) == 0
    printed = capsys.readouterr().out
    assert sum("import tensorflow_text" in line for line in printed.splitlines()) == 1
    logits = keras.saving.load_model(model_path).predict(TEXTS, verbose=0)
    expected = tf.nn.softmax(logits, axis=-1).numpy()
    served = tf.saved_model.load(str(served_dir))
    probabilities = served.signatures["serving_default"](text=tf.constant(TEXTS))["probabilities"]
    np.testing.assert_allclose(probabilities.numpy(), expected, rtol=0, atol=1e-6)
    token_ids = served.signatures["tokenize"](text=tf.constant(TEXTS))["token_ids"]
    assert token_ids.shape == (len(TEXTS), SEQUENCE_LENGTH)  # the trained length, not 512
