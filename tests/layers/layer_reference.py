"""Post-LN transformer pieces in plain NumPy (float64), written from the official modeling.py."""

import numpy as np


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def layer_norm(x, gamma, beta, epsilon=1e-12):
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def self_attention_block(x, padding_mask, w, num_heads):
    """`w`: qkv_kernel (H, 3H), qkv_bias, output_kernel, output_bias, gamma, beta."""
    batch, length, hidden = x.shape
    head_dim = hidden // num_heads
    q, k, v = np.split(x @ w["qkv_kernel"] + w["qkv_bias"], 3, axis=-1)

    def heads(y):
        return y.reshape(batch, length, num_heads, head_dim).transpose(0, 2, 1, 3)

    scores = heads(q) @ heads(k).transpose(0, 1, 3, 2) / np.sqrt(head_dim)
    scores = scores + (1.0 - padding_mask[:, None, None, :]) * -10000.0
    context = (softmax(scores) @ heads(v)).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
    attention = context @ w["output_kernel"] + w["output_bias"]
    return layer_norm(x + attention, w["gamma"], w["beta"])


def feed_forward_block(x, w):
    """`w`: intermediate_kernel, intermediate_bias, output_kernel, output_bias, gamma, beta."""
    inner = gelu(x @ w["intermediate_kernel"] + w["intermediate_bias"])
    return layer_norm(x + inner @ w["output_kernel"] + w["output_bias"], w["gamma"], w["beta"])


def randomize(layer, seed, scale=0.5):
    """Gives every weight of `layer` (LayerNorms and biases included) a random normal value."""
    rng = np.random.default_rng(seed)
    for variable in layer.weights:
        variable.assign(rng.normal(0.0, scale, variable.shape).astype("float32"))
