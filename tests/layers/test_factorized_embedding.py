import keras
import numpy as np
import pytest
from layer_reference import layer_norm, randomize

from albert_keras.layers import FactorizedEmbedding


def _ids(seed, vocabulary_size=50, shape=(3, 7)):
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocabulary_size, shape).astype("int32"), rng.integers(0, 2, shape)


def test_matches_numpy_sum_norm_then_project():
    layer = FactorizedEmbedding(vocabulary_size=50, embedding_dim=4, hidden_dim=6)
    token_ids, segment_ids = _ids(0)
    layer(token_ids, segment_ids)
    randomize(layer, seed=1)
    e = {v.path.split("/", 1)[1]: v.numpy() for v in layer.weights}
    summed = (
        e["token_embedding/embeddings"][token_ids]
        + e["position_embedding/embeddings"][: token_ids.shape[1]]
        + e["segment_embedding/embeddings"][segment_ids]
    )
    normed = layer_norm(summed, e["layer_norm/gamma"], e["layer_norm/beta"])
    expected = normed @ e["projection/kernel"] + e["projection/bias"]
    np.testing.assert_allclose(layer(token_ids, segment_ids), expected, atol=1e-5)


def test_parameter_count_is_factorized():
    layer = FactorizedEmbedding(
        vocabulary_size=50, embedding_dim=4, hidden_dim=6, max_sequence_length=9, num_segments=3
    )
    layer(*_ids(0))
    # V*E + P*E + S*E + LayerNorm(E) + projection E*H + H.
    assert layer.count_params() == 50 * 4 + 9 * 4 + 3 * 4 + 2 * 4 + 4 * 6 + 6


def test_no_projection_when_embedding_dim_equals_hidden_dim():
    layer = FactorizedEmbedding(vocabulary_size=50, embedding_dim=6, hidden_dim=6)
    output = layer(*_ids(0))
    assert layer.projection is None
    assert output.shape == (3, 7, 6)
    assert not any("projection" in v.path for v in layer.weights)


def test_token_embedding_reverses_to_tied_logits():
    layer = FactorizedEmbedding(vocabulary_size=50, embedding_dim=4, hidden_dim=6)
    layer(*_ids(0))
    hidden = np.random.default_rng(2).normal(size=(3, 4)).astype("float32")
    logits = layer.token_embedding(hidden, reverse=True)
    expected = hidden @ layer.token_embedding.embeddings.numpy().T
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-6)  # atol: logits near 0


def test_config_round_trip_gives_same_outputs():
    layer = FactorizedEmbedding(
        vocabulary_size=50, embedding_dim=4, hidden_dim=6, max_sequence_length=16, dropout=0.1
    )
    inputs = _ids(3)
    layer(*inputs)
    clone = FactorizedEmbedding.from_config(layer.get_config())
    clone(*inputs)
    clone.set_weights(layer.get_weights())
    assert clone.get_config() == layer.get_config()
    np.testing.assert_array_equal(clone(*inputs), layer(*inputs))


def test_dropout_only_when_training():
    layer = FactorizedEmbedding(vocabulary_size=50, embedding_dim=4, hidden_dim=6, dropout=0.5)
    inputs = _ids(4)
    np.testing.assert_array_equal(layer(*inputs), layer(*inputs, training=False))
    assert not np.allclose(layer(*inputs, training=True), layer(*inputs))


@pytest.mark.parametrize(
    "override, message",
    [
        ({"vocabulary_size": 0}, "vocabulary_size must be a positive integer"),
        ({"embedding_dim": -4}, "embedding_dim must be a positive integer"),
        ({"hidden_dim": 2.5}, "hidden_dim must be a positive integer"),
        ({"num_segments": 0}, "num_segments must be a positive integer"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
    ],
)
def test_bad_arguments_raise(override, message):
    config = {"vocabulary_size": 50, "embedding_dim": 4, "hidden_dim": 6, **override}
    with pytest.raises(ValueError, match=message):
        FactorizedEmbedding(**config)


def test_mixed_precision_runs_in_bfloat16_with_float32_weights():
    layer = FactorizedEmbedding(
        vocabulary_size=50, embedding_dim=4, hidden_dim=6, dtype="mixed_bfloat16"
    )
    output = layer(*_ids(5))
    assert keras.backend.standardize_dtype(output.dtype) == "bfloat16"
    assert all(v.dtype == "float32" for v in layer.weights)
