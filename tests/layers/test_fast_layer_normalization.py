import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_keras.layers import FastLayerNormalization
from albert_keras.layers.fast_paths import layer_norm as _normalize


def _pair(shape, seed=0, **kwargs):
    """A FastLayerNormalization and a keras LayerNormalization with the same random weights."""
    fast = FastLayerNormalization(**kwargs)
    reference = keras.layers.LayerNormalization(**kwargs)
    fast.build(shape)
    reference.build(shape)
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=w.shape).astype("float32") for w in reference.weights]
    fast.set_weights(weights)
    reference.set_weights(weights)
    return fast, reference


def _outputs_and_gradients(layer, x, upstream):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(tf.cast(y, "float32") * upstream)
    return [np.asarray(y, "float32")] + [
        np.asarray(g) for g in tape.gradient(loss, [x, *layer.trainable_variables])
    ]


@pytest.mark.parametrize("epsilon", [1e-12, 1e-3])
def test_outputs_and_gradients_match_keras_layer_normalization(epsilon):
    rng = np.random.default_rng(1)
    x = (rng.normal(size=(3, 7, 16)) * 4 + 2).astype("float32")
    upstream = rng.normal(size=x.shape).astype("float32")
    fast, reference = _pair(x.shape, epsilon=epsilon)
    for ours, expected in zip(
        _outputs_and_gradients(fast, x, upstream),
        _outputs_and_gradients(reference, x, upstream),
        strict=True,
    ):
        np.testing.assert_allclose(ours, expected, atol=2e-5, rtol=1e-5)


def test_hand_written_gradient_matches_automatic_differentiation():
    # Called directly, so it is tested whatever path the layer takes.
    rng = np.random.default_rng(4)
    x = tf.constant(rng.normal(size=(4, 5, 8)) * 3 + 1)
    gamma, beta = tf.constant(rng.normal(size=8)), tf.constant(rng.normal(size=8))
    upstream = tf.constant(rng.normal(size=(4, 5, 8)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, gamma, beta])
        ours = tf.reduce_sum(_normalize(x, gamma, beta, 1e-12) * upstream)
        mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
        plain = gamma * (x - mean) / tf.sqrt(variance + 1e-12) + beta
        reference = tf.reduce_sum(plain * upstream)
    np.testing.assert_allclose(ours, reference, rtol=1e-12)
    for ours_grad, expected in zip(
        tape.gradient(ours, [x, gamma, beta]),
        tape.gradient(reference, [x, gamma, beta]),
        strict=True,
    ):
        np.testing.assert_allclose(ours_grad, expected, atol=1e-10)


def test_other_axes_fall_back_to_the_parent():
    x = np.random.default_rng(2).normal(size=(2, 3, 4)).astype("float32")
    fast, reference = _pair(x.shape, axis=1)
    np.testing.assert_allclose(fast(x), reference(x), atol=1e-6)


def test_mixed_bfloat16_keeps_float32_weights_and_bfloat16_outputs():
    layer = FastLayerNormalization(dtype="mixed_bfloat16")
    x = np.random.default_rng(3).normal(size=(2, 3, 8)).astype("float32")
    y = layer(x)
    assert keras.backend.standardize_dtype(y.dtype) == "bfloat16"
    assert {keras.backend.standardize_dtype(w.dtype) for w in layer.weights} == {"float32"}
    normalized = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(np.asarray(y, "float32"), normalized, atol=0.05)


def test_config_round_trip():
    layer = FastLayerNormalization(epsilon=1e-12, name="norm")
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(clone) is FastLayerNormalization and clone.epsilon == 1e-12
