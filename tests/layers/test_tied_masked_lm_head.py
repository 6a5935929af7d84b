import keras
import numpy as np
import pytest
import tensorflow as tf
from keras_hub.layers import MaskedLMHead, ReversibleEmbedding

from albert_keras.layers import TiedMaskedLMHead

VOCAB, EMBED, HIDDEN = 50, 8, 12


def _heads(dtype=None):
    """Our head and keras-hub's, both tied to one embedding, with the same head weights."""
    embedding = ReversibleEmbedding(VOCAB, EMBED, dtype=dtype)
    embedding.build((None, None))
    heads = []
    for cls in (TiedMaskedLMHead, MaskedLMHead):
        head = cls(token_embedding=embedding, intermediate_activation="gelu", dtype=dtype)
        head.build((None, None, HIDDEN))
        heads.append(head)
    rng = np.random.default_rng(0)
    weights = [rng.normal(size=w.shape).astype("float32") for w in heads[1].get_weights()]
    for head in heads:
        head.set_weights(weights)
    return embedding, heads


def _inputs():
    rng = np.random.default_rng(1)
    sequence = tf.constant(rng.normal(size=(3, 7, HIDDEN)).astype("float32"))
    positions = tf.constant(rng.integers(0, 7, (3, 4)).astype("int32"))
    return sequence, positions


def test_outputs_and_gradients_match_keras_hub_masked_lm_head():
    embedding, heads = _heads()
    sequence, positions = _inputs()
    upstream = tf.constant(np.random.default_rng(2).normal(size=(3, 4, VOCAB)).astype("float32"))
    results = []
    for head in heads:
        with tf.GradientTape() as tape:
            tape.watch(sequence)
            logits = head(sequence, mask_positions=positions)
            loss = tf.reduce_sum(logits * upstream)
        variables = [embedding.embeddings, *head.trainable_variables]
        results.append([logits, *tape.gradient(loss, [sequence, *variables])])
    assert results[0][0].shape == (3, 4, VOCAB)
    for ours, expected in zip(*results, strict=True):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)


def test_mixed_bfloat16_matches_keras_hub_dtypes():
    _, (ours, reference) = _heads(dtype="mixed_bfloat16")
    sequence, positions = _inputs()
    ours_logits = ours(sequence, mask_positions=positions)
    reference_logits = reference(sequence, mask_positions=positions)
    assert ours_logits.dtype == reference_logits.dtype
    np.testing.assert_allclose(
        np.asarray(ours_logits, "float32"), np.asarray(reference_logits, "float32"), atol=0.1
    )


def test_rows_already_gathered_need_no_positions():
    _, (head, _) = _heads()
    sequence, positions = _inputs()
    rows = tf.gather(sequence, positions, batch_dims=1)
    np.testing.assert_array_equal(head(rows), head(sequence, mask_positions=positions))
    assert head.compute_output_shape((3, 4, HIDDEN)) == (3, 4, VOCAB)


def test_untied_head_uses_the_parent():
    head = TiedMaskedLMHead(vocabulary_size=VOCAB, intermediate_activation="gelu")
    sequence, positions = _inputs()
    assert head(sequence, mask_positions=positions).shape == (3, 4, VOCAB)


@pytest.mark.parametrize("cap", [None, 5.0])
def test_soft_capped_logits_follow_the_embedding(cap):
    embedding = ReversibleEmbedding(VOCAB, EMBED, logit_soft_cap=cap)
    embedding.build((None, None))
    head = TiedMaskedLMHead(token_embedding=embedding)
    logits = head(*_inputs())
    if cap is not None:
        assert float(tf.reduce_max(tf.abs(logits - head.output_bias))) <= cap + 1e-4
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"


def test_save_and_load_keep_keras_hubs_config_and_weight_paths(tmp_path):
    # Existing .keras files hold the head's weights under keras-hub's attribute names and its
    # config under keras-hub's keys: both must stay for them to load.
    import io
    import zipfile

    import h5py

    _, (ours, reference) = _heads()
    assert ours.get_config() == {**reference.get_config(), "name": ours.name}
    sequence = keras.Input((None, HIDDEN))
    positions = keras.Input((4,), dtype="int32")
    model = keras.Model([sequence, positions], ours(sequence, mask_positions=positions))
    path = tmp_path / "head.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
        paths = []
        weights.visit(lambda name: paths.append(name) if name.endswith("/vars") else None)
    assert [p for p in paths if "tied_masked_lm_head" in p] == [
        "layers/tied_masked_lm_head/_intermediate_dense/vars",
        "layers/tied_masked_lm_head/_intermediate_layer_norm/vars",
        "layers/tied_masked_lm_head/token_embedding/vars",
        "layers/tied_masked_lm_head/vars",
    ]
    loaded = keras.saving.load_model(path)
    inputs = _inputs()
    np.testing.assert_array_equal(loaded(list(inputs)), model(list(inputs)))
    assert type(loaded.layers[-1]) is TiedMaskedLMHead
