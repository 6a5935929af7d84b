"""The layers' TensorFlow fast paths, in one place and behind one switch.

The layers are written in plain `keras.ops` and run so on every backend (the reference). On
TensorFlow, four parts of a train step run faster written out by hand, each computing the same
function (tests/layers/test_fast_paths.py checks forward and gradient against the reference):

- `fused_gelu`: the tanh-GELU of the FFN as one XLA-fused loop, with its gradient as another
  (reference: `keras.ops.gelu(approximate=True)`);
- `layer_norm`: LayerNorm over the last axis with a hand-written gradient, ~11 passes over the
  activations instead of ~20 (reference: `keras.layers.LayerNormalization`);
- `explicit_attention`: attention as batched matmuls in (batch, heads, time, head_dim) layout with
  the padding as an additive bias (reference: `keras.ops.dot_product_attention`, which on
  TensorFlow is an einsum and a `where` over the whole logits, forward and backward);
- `tied_logits`: the MLM output `x @ transpose(table)` with the table's gradient computed in
  (V, E) layout, not as the transpose of an (E, V) product (reference: keras-hub's head).

JAX (XLA) and torch fuse the reference formulas themselves, so the paths are on by default on
TensorFlow only; `enable_fast_paths(False)` turns them off (to measure them, or to check the
reference on TensorFlow). Measured on a 2-core CPU, a train step (L6 H256 I1024, 16 x 128) gains
6.6% from the GELU, 3.4% from the LayerNorm, 2.5% from the tied head and 1.2-1.5x from the
attention (benchmarks/README.md). `explicit_attention` is also the attention of every backend
when dropout on the probabilities is on (`dot_product_attention` has none). TensorFlow is
imported on first use only, so the module is safe to import on any backend.
"""

from __future__ import annotations

import contextlib
import functools
import math

import keras
from keras import ops

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_CUBIC = _SQRT_2_OVER_PI * 0.044715
_enabled: bool | None = None  # None: the default, on for TensorFlow


def fast_paths_enabled() -> bool:
    """Whether the layers take the fast paths now: on TensorFlow, unless switched off."""
    return keras.backend.backend() == "tensorflow" and _enabled is not False


def enable_fast_paths(enabled: bool | None = True) -> None:
    """Switches the fast paths on or off for layers called from now on (`None`: the default).

    Takes effect when a layer is called (or a `tf.function` traced), not for graphs traced before.

    Args:
        enabled: bool or None. True: on (TensorFlow only; other backends have none); False: the
            reference `keras.ops` everywhere; None: back to the default.
    """
    global _enabled
    _enabled = enabled


@contextlib.contextmanager
def fast_paths(enabled: bool | None):
    """`enable_fast_paths(enabled)` inside a `with` block, the previous setting after it.

    Example:
    >>> with fast_paths(False):
    ...     fast_paths_enabled()
    False
    """
    global _enabled
    previous = _enabled
    enable_fast_paths(enabled)
    try:
        yield
    finally:
        _enabled = previous


# === GELU ===


@functools.cache
def _compiled_gelu():
    import tensorflow as tf

    jit = functools.partial(tf.function, jit_compile=True, autograph=False)

    @jit
    def forward(x):
        return 0.5 * x * (1.0 + tf.tanh(x * (_SQRT_2_OVER_PI + _CUBIC * x * x)))

    @jit
    def backward(x, upstream):
        # Recomputes tanh from the input rather than keeping it: inside a fused loop that is
        # cheaper than writing it out and reading it back.
        x_squared = x * x
        tanh = tf.tanh(x * (_SQRT_2_OVER_PI + _CUBIC * x_squared))
        slope = _SQRT_2_OVER_PI + 3.0 * _CUBIC * x_squared
        return upstream * (0.5 + 0.5 * tanh + 0.5 * x * (1.0 - tanh * tanh) * slope)

    return forward, backward


def fused_gelu(x):
    """Tanh-GELU of a TensorFlow tensor, as one fused loop with a fused hand-written gradient.

    TensorFlow runs each elementwise op as its own pass over memory and its automatic gradient of
    the formula adds as many again (about twelve passes over the FFN's activations). Here the
    forward and the backward are each one function compiled by XLA, called from the ordinary
    graph, where the matmuls keep TensorFlow's multi-threaded kernels (2.2x faster than the same
    gradient in plain TF ops; differentiating through a jit-compiled function instead runs the
    gradient unfused, 2x slower than plain ops).

    Args:
        x: a floating TensorFlow tensor.
    """
    import tensorflow as tf

    forward, backward = _compiled_gelu()

    @tf.custom_gradient
    def gelu(x):
        return forward(x), lambda upstream: backward(x, upstream)

    return gelu(x)


# === LayerNorm ===


def layer_norm(x, gamma, beta, epsilon: float):
    """`gamma * (x - mean) / sqrt(variance + epsilon) + beta` over the last axis of float32 `x`,
    with its gradient written out (about eleven passes over `x` instead of twenty)."""

    @ops.custom_gradient
    def normalize(x, gamma, beta):
        mean = ops.mean(x, axis=-1, keepdims=True)
        centered = x - mean
        inverse_std = ops.rsqrt(ops.mean(centered * centered, axis=-1, keepdims=True) + epsilon)
        normalized = centered * inverse_std

        def grad(*args, upstream=None):
            if upstream is None:  # TF passes the upstream gradient positionally
                (upstream,) = args
            batch_axes = tuple(range(len(x.shape) - 1))
            scaled = upstream * gamma
            # d/dx of the normalization: remove the mean and the component along `normalized`.
            dx = inverse_std * (
                scaled
                - ops.mean(scaled, axis=-1, keepdims=True)
                - normalized * ops.mean(scaled * normalized, axis=-1, keepdims=True)
            )
            dgamma = ops.sum(upstream * normalized, axis=batch_axes)
            return dx, dgamma, ops.sum(upstream, axis=batch_axes)

        return normalized * gamma + beta, grad

    return normalize(x, gamma, beta)


# === Attention ===


def explicit_attention(query, key, value, attention_mask=None, probs_dropout=None, training=None):
    """Softmax attention of (batch, time, heads, head_dim) tensors, as batched matmuls.

    The scale goes on the queries (T x head_dim values, not T x T), padding is an additive -1e9
    bias on the float32 logits (its gradient is free, where a `where` over the logits is not),
    and the probabilities can be dropped out (the official code does; `dot_product_attention`
    cannot). Returns (batch, time, heads, head_dim) in the queries' dtype.

    Args:
        query, key, value: tensors (batch, time, heads, head_dim).
        attention_mask: optional bool tensor broadcastable to (batch, heads, time, time).
        probs_dropout: optional `keras.layers.Dropout` for the probabilities.
        training: bool. Passed to `probs_dropout`.
    """
    head_dim = query.shape[-1]
    compute_dtype = query.dtype
    query = ops.transpose(query, (0, 2, 1, 3)) * (1.0 / float(head_dim) ** 0.5)
    key = ops.transpose(key, (0, 2, 3, 1))
    value = ops.transpose(value, (0, 2, 1, 3))
    logits = ops.cast(ops.matmul(query, key), "float32")
    if attention_mask is not None:
        logits = logits + ops.where(attention_mask, 0.0, -1e9)
    probs = ops.cast(ops.softmax(logits, axis=-1), compute_dtype)
    if probs_dropout is not None:
        probs = probs_dropout(probs, training=training)
    return ops.transpose(ops.matmul(probs, value), (0, 2, 1, 3))


# === Tied output ===


@ops.custom_gradient
def tied_logits(x, table):
    """`x @ transpose(table)` for x (N, E) and table (V, E), with the table's gradient computed as
    `transpose(upstream) @ x`, the (V, E) product directly: TF's automatic gradient is the
    transpose of an (E, V) product, about half as fast, plus a copy (~13% off the head's forward
    and backward at V = 30000)."""

    def grad(*args, upstream=None):
        if upstream is None:  # TF passes the upstream gradient positionally
            (upstream,) = args
        dx = ops.matmul(upstream, ops.cast(table, upstream.dtype))
        dtable = ops.matmul(ops.transpose(upstream), ops.cast(x, upstream.dtype))
        return ops.cast(dx, x.dtype), ops.cast(dtable, table.dtype)

    return ops.matmul(x, ops.transpose(table)), grad


# The name the layers used before the switch existed.
use_hand_written_gradients = fast_paths_enabled
