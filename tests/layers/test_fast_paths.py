"""Each TensorFlow fast path equals the plain `keras.ops` reference, forward and gradient."""

import keras
import numpy as np
import tensorflow as tf

import albert_keras as ak
from albert_keras.layers import FastLayerNormalization, SelfAttentionBlock
from albert_keras.layers.activations import gelu_approximate
from albert_keras.layers.fast_paths import (
    enable_fast_paths,
    fast_paths,
    fast_paths_enabled,
    widening_matmul,
)
from albert_keras.layers.sparse_cross_entropy import sparse_cross_entropy


def outputs_and_gradients(function, inputs, variables):
    """`function(inputs)` and the gradients of a random projection of it, with fast paths on and
    off."""
    results = {}
    for enabled in (True, False):
        with fast_paths(enabled), tf.GradientTape() as tape:
            assert fast_paths_enabled() is enabled
            tape.watch(inputs)
            outputs = tf.cast(function(inputs), "float32")
            weights = tf.constant(np.random.default_rng(7).normal(size=outputs.shape), "float32")
            loss = tf.reduce_sum(outputs * weights)
        gradients = tape.gradient(loss, [inputs, *variables])
        results[enabled] = [outputs.numpy()] + [
            np.asarray(tf.convert_to_tensor(g)) for g in gradients if g is not None
        ]
    return results[True], results[False]


def assert_close(fast, reference, atol):
    assert len(fast) == len(reference)
    for ours, theirs in zip(fast, reference, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=atol, rtol=1e-5)


def test_the_switch():
    assert fast_paths_enabled()  # on by default on TensorFlow
    enable_fast_paths(False)
    try:
        assert not fast_paths_enabled()
    finally:
        enable_fast_paths(None)
    assert fast_paths_enabled()


def test_gelu():
    x = tf.constant(np.linspace(-8, 8, 4001, dtype="float32").reshape(1, -1))
    fast, reference = outputs_and_gradients(gelu_approximate, x, [])
    # float32: near x = -6 the derivative is ~1e-5 and the two formulas round differently there.
    assert_close(fast, reference, atol=1e-5)


def test_gelu_with_the_dense_bias():
    rng = np.random.default_rng(8)
    x = tf.constant(rng.normal(0.0, 3.0, (2, 5, 12)), "float32")
    bias = tf.Variable(rng.normal(size=(12,)), dtype="float32")
    fast, reference = outputs_and_gradients(
        lambda inputs: gelu_approximate(inputs, bias), x, [bias]
    )
    assert len(fast) == 3  # outputs, d/dx, d/dbias
    assert_close(fast, reference, atol=1e-5)


def test_widening_matmul():
    rng = np.random.default_rng(10)
    x = tf.constant(rng.normal(size=(3, 7, 16)), "float32")
    kernel = tf.Variable(rng.normal(size=(16, 64)), dtype="float32")
    for function in (widening_matmul, tf.function(widening_matmul)):  # eager and traced
        with tf.GradientTape() as tape:
            tape.watch(x)
            product = function(x, kernel)
            weights = tf.constant(rng.normal(size=(3, 7, 64)), "float32")
            loss = tf.reduce_sum(product * weights)
        dx, dkernel = tape.gradient(loss, [x, kernel])
        assert product.shape == (3, 7, 64)
        np.testing.assert_allclose(product, np.einsum("btk,kn->btn", x, kernel), atol=1e-4)
        np.testing.assert_allclose(dx, np.einsum("btn,kn->btk", weights, kernel), atol=1e-4)
        np.testing.assert_allclose(dkernel, np.einsum("btk,btn->kn", x, weights), atol=1e-4)


def test_feed_forward_block():
    block = ak.layers.FeedForwardBlock(intermediate_dim=48)
    x = tf.constant(np.random.default_rng(11).normal(size=(2, 6, 16)), "float32")
    block.build(x.shape)
    fast, reference = outputs_and_gradients(block, x, block.trainable_variables)
    assert len(fast) == 1 + 1 + 6  # outputs, d/dx and six weights
    assert_close(fast, reference, atol=1e-5)


def test_feed_forward_block_in_mixed_bfloat16():
    block = ak.layers.FeedForwardBlock(intermediate_dim=24, dtype="mixed_bfloat16")
    x = tf.constant(np.random.default_rng(9).normal(size=(2, 6, 16)), "float32")
    block.build(x.shape)
    fast, reference = outputs_and_gradients(block, x, block.trainable_variables)
    assert len(fast) == 1 + 1 + 6  # outputs, d/dx and six weights, the bias's included
    # bfloat16 has 8 bits of mantissa: the two paths round at different places.
    for ours, theirs in zip(fast, reference, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=0.05 * np.abs(theirs).max())


def test_layer_norm():
    layer = FastLayerNormalization(epsilon=1e-12)
    x = tf.constant(np.random.default_rng(0).normal(2.0, 4.0, (3, 7, 16)), "float32")
    layer.build(x.shape)
    layer.set_weights([np.random.default_rng(1).normal(size=(16,)) for _ in range(2)])
    fast, reference = outputs_and_gradients(layer, x, layer.trainable_variables)
    assert_close(fast, reference, atol=2e-5)


def test_attention_with_padding():
    block = SelfAttentionBlock(num_heads=4)
    rng = np.random.default_rng(2)
    x = tf.constant(rng.normal(size=(3, 9, 32)), "float32")
    mask = np.arange(9)[None, :] < np.array([9, 6, 2])[:, None]
    block.build(x.shape)
    fast, reference = outputs_and_gradients(
        lambda inputs: block(inputs, attention_mask=mask[:, None, None, :]),
        x,
        block.trainable_variables,
    )
    assert_close(fast, reference, atol=2e-5)


def test_tied_masked_lm_head_and_the_whole_pretrainer(tiny_config):
    keras.utils.set_random_seed(3)
    pretrainer = ak.AlbertPretrainer(ak.AlbertBackbone(**tiny_config))
    rng = np.random.default_rng(4)
    padding_mask = (np.arange(12)[None, :] < np.array([12, 9, 5])[:, None]).astype("int32")
    batch = {
        "input_ids": rng.integers(5, 100, (3, 12)) * padding_mask,
        "input_mask": padding_mask,
        "segment_ids": (np.arange(12)[None, :] >= 4) * padding_mask,
        "masked_lm_positions": np.array([[1, 2, 3], [2, 5, 7], [1, 3, 4]]),
    }
    fast, reference = outputs_and_gradients(
        lambda _: pretrainer(batch)["mlm_logits"],
        tf.constant(0.0),
        pretrainer.trainable_variables,
    )
    # Every variable but the pooler's and the sentence head's has a gradient.
    assert len(fast) == 1 + len(pretrainer.trainable_variables) - 4
    assert_close(fast, reference, atol=2e-5)


def test_sparse_cross_entropy():
    rng = np.random.default_rng(5)
    logits = tf.constant(rng.normal(0.0, 6.0, (3, 4, 50)), "float32")
    labels = tf.constant(rng.integers(0, 50, (3, 4)), "int32")
    fast, reference = outputs_and_gradients(
        lambda inputs: sparse_cross_entropy(labels, inputs), logits, []
    )
    assert fast[0].shape == (3, 4)
    assert_close(fast, reference, atol=2e-6)
    # Against the formula itself, not only the Keras loss.
    log_probs = logits.numpy() - np.log(np.exp(logits.numpy()).sum(-1, keepdims=True))
    expected = -np.take_along_axis(log_probs, labels.numpy()[..., None], -1)[..., 0]
    np.testing.assert_allclose(fast[0], expected, rtol=1e-5, atol=1e-5)
