import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_reference import randomize, self_attention_block

from albert_keras.layers import SelfAttentionBlock
from albert_keras.layers.fast_paths import fast_paths

PADDING_MASK = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]], "int32")


def _inputs(seed=0):
    return np.random.default_rng(seed).normal(size=(2, 6, 8)).astype("float32")


def _attention_mask(padding_mask):
    return padding_mask.astype(bool)[:, None, None, :]


def _weights(block):
    return {
        "qkv_kernel": block.qkv_dense.kernel.numpy(),
        "qkv_bias": block.qkv_dense.bias.numpy(),
        "output_kernel": block.output_dense.kernel.numpy(),
        "output_bias": block.output_dense.bias.numpy(),
        "gamma": block.layer_norm.gamma.numpy(),
        "beta": block.layer_norm.beta.numpy(),
    }


def _random_block(dropout=0.0, seed=1):
    block = SelfAttentionBlock(num_heads=2, dropout=dropout)
    block.build((None, None, 8))
    randomize(block, seed)
    return block


def test_matches_numpy_multi_head_attention_with_padding():
    block = _random_block()
    x = _inputs()
    expected = self_attention_block(x.astype("float64"), PADDING_MASK, _weights(block), 2)
    output = block(x, attention_mask=_attention_mask(PADDING_MASK))
    np.testing.assert_allclose(output, expected, atol=1e-5)


def test_padding_keys_do_not_change_real_positions():
    block = _random_block()
    x = _inputs()
    changed = x.copy()
    changed[1, 3:] = 100.0
    mask = _attention_mask(PADDING_MASK)
    np.testing.assert_allclose(block(x, mask)[1, :3], block(changed, mask)[1, :3], atol=1e-6)


def test_explicit_dropout_path_matches_reference_when_rates_are_zeroed():
    # With dropout > 0 and training=True the block takes its explicit softmax path; zeroing
    # the rates afterwards checks that path's arithmetic against the reference.
    block = _random_block(dropout=0.3)
    block.probs_dropout.rate = 0.0
    block.output_dropout.rate = 0.0
    x = _inputs()
    expected = self_attention_block(x.astype("float64"), PADDING_MASK, _weights(block), 2)
    output = block(x, attention_mask=_attention_mask(PADDING_MASK), training=True)
    np.testing.assert_allclose(output, expected, atol=1e-5)


def test_dropout_active_only_in_training():
    block = _random_block(dropout=0.3)
    x = _inputs()
    np.testing.assert_array_equal(block(x), block(x, training=False))
    assert not np.allclose(block(x, training=True), block(x))


def test_fused_qkv_parameter_count_equals_four_projections():
    block = _random_block()
    # q, k, v and output projections (8x8 + 8 each) and one LayerNorm (2 x 8).
    assert block.count_params() == 4 * (8 * 8 + 8) + 2 * 8
    assert block.qkv_dense.kernel.shape == (8, 24)


def test_hidden_dim_not_divisible_by_heads_raises():
    with pytest.raises(ValueError, match="hidden_dim=8 is not divisible by num_heads=3"):
        SelfAttentionBlock(num_heads=3).build((None, None, 8))


@pytest.mark.parametrize("override", [{"num_heads": 0}, {"dropout": -0.1}])
def test_bad_arguments_raise(override):
    with pytest.raises(ValueError, match="num_heads|dropout"):
        SelfAttentionBlock(**{"num_heads": 2, **override})


def test_mixed_bfloat16_close_to_float32():
    block = _random_block()
    fast = SelfAttentionBlock(num_heads=2, dtype="mixed_bfloat16")
    fast.build((None, None, 8))
    fast.set_weights(block.get_weights())
    mask = _attention_mask(PADDING_MASK)
    output = fast(_inputs(), attention_mask=mask)
    assert keras.backend.standardize_dtype(output.dtype) == "bfloat16"
    reference = block(_inputs(), attention_mask=mask)
    np.testing.assert_allclose(np.asarray(output, "float32"), reference, atol=0.1)


# Repeats, padding rows and any order: the rows of the block's output to compute.
QUERY_POSITIONS = np.array([[0, 5, 2, 2], [0, 1, 4, 0]], "int32")


@pytest.mark.parametrize("fast", [True, False], ids=["explicit_attention", "dot_product"])
def test_query_positions_equal_the_full_block_gathered(fast):
    block = _random_block()
    x = tf.constant(_inputs())
    mask = _attention_mask(PADDING_MASK)
    # A random projection of the rows as the loss, so every output value has a gradient.
    projection = np.random.default_rng(3).normal(size=(2, 4, 8)).astype("float32")
    results = []
    for sparse in (True, False):
        with fast_paths(fast), tf.GradientTape() as tape:
            tape.watch(x)
            if sparse:
                rows = block(x, attention_mask=mask, query_positions=QUERY_POSITIONS)
            else:
                rows = tf.gather(block(x, attention_mask=mask), QUERY_POSITIONS, batch_dims=1)
            loss = tf.reduce_sum(rows * projection)
        gradients = tape.gradient(loss, [x, *block.trainable_variables])
        results.append([rows.numpy()] + [g.numpy() for g in gradients])
    assert results[0][0].shape == (2, 4, 8)
    for sparse, full in zip(*results, strict=True):
        np.testing.assert_allclose(sparse, full, atol=1e-5, rtol=1e-5)


def test_query_positions_output_shape():
    block = SelfAttentionBlock(num_heads=2)
    rows = block(keras.Input((None, 8)), query_positions=keras.Input((3,), dtype="int32"))
    assert tuple(rows.shape) == (None, 3, 8)


@pytest.mark.parametrize("disable", [False, True])
def test_reference_path_passes_the_global_flash_attention_switch_on(monkeypatch, disable):
    # `keras.ops.dot_product_attention` reads no global switch; the block must pass Keras's
    # on, so that `keras.config.disable_flash_attention()` holds (measured on an H100: the
    # fused kernel is 1.43x the unfused one at ALBERT-base 32 x 512).
    seen = []
    reference = keras.ops.dot_product_attention

    def recording(*args, **kwargs):
        seen.append(kwargs.get("flash_attention", "missing"))
        return reference(*args, **kwargs)

    monkeypatch.setattr(keras.ops, "dot_product_attention", recording)
    block = _random_block()
    try:
        if disable:
            keras.config.disable_flash_attention()
        with fast_paths(False):
            block(_inputs(), attention_mask=_attention_mask(PADDING_MASK))
    finally:
        keras.config.enable_flash_attention()
    assert seen == [False if disable else None]
