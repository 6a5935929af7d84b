"""The layers' TensorFlow fast paths, in one place and behind one switch.

The layers are written in plain `keras.ops` and run so on every backend (the reference). On
TensorFlow, six parts of a train step run faster written out by hand, each computing the same
function (tests/layers/test_fast_paths.py checks forward and gradient against the reference):

- `fused_gelu`: the tanh-GELU of the FFN (with the Dense's bias added inside) as one XLA-fused
  loop, with its gradient as another (reference: `keras.ops.gelu(approximate=True)`);
- `layer_norm`: LayerNorm over the last axis with a hand-written gradient, ~11 passes over the
  activations instead of ~20 (reference: `keras.layers.LayerNormalization`);
- `widening_matmul`: the FFN's H -> I matmul in float32, its input's gradient taken against a
  transposed copy of the kernel (reference: `keras.ops.matmul`, whose gradient oneDNN runs
  slower there);
- `explicit_attention`: attention as batched matmuls in (batch, heads, time, head_dim) layout with
  the padding as an additive bias (reference: `keras.ops.dot_product_attention`, which on
  TensorFlow is an einsum and a `where` over the whole logits, forward and backward);
- `tied_logits`: the MLM output `x @ transpose(table)` with the table's gradient computed in
  (V, E) layout, not as the transpose of an (E, V) product (reference: keras-hub's head);
- `fused_sparse_cross_entropy`: the MLM loss over the vocabulary's logits and its gradient as
  two XLA-fused loops (reference: `keras.losses.sparse_categorical_crossentropy`, which on
  TensorFlow is one kernel that runs alone on the step's critical path).

JAX (XLA) and torch fuse the reference formulas themselves, so the paths are on by default on
TensorFlow only; `enable_fast_paths(False)` turns them off (to measure them, or to check the
reference on TensorFlow). Each is kept because a paired A/B of whole train steps showed it
faster; the measurements are in docs/benchmarks-log.md.
`explicit_attention` is also the attention of every backend when dropout on the probabilities
is on (`dot_product_attention` has none). TensorFlow is imported on first use only, so the
module is safe to import on any backend.
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


def _gelu(x):
    return 0.5 * x * (1.0 + _tanh_of_gelu(x))


def _tanh_of_gelu(x):
    import tensorflow as tf

    return tf.tanh(x * (_SQRT_2_OVER_PI + _CUBIC * x * x))


def _gelu_gradient(x, upstream):
    # Recomputes tanh from the input rather than keeping it: inside a fused loop that is cheaper
    # than writing it out and reading it back.
    tanh = _tanh_of_gelu(x)
    slope = _SQRT_2_OVER_PI + 3.0 * _CUBIC * x * x
    return upstream * (0.5 + 0.5 * tanh + 0.5 * x * (1.0 - tanh * tanh) * slope)


@functools.cache
def _compiled_gelu():
    import tensorflow as tf

    jit = functools.partial(tf.function, jit_compile=True, autograph=False)

    def in_float32(x, *others):
        # Half precision is computed in float32: XLA on the CPU has no bfloat16 arithmetic and
        # would round after every op; rounding once, at the end, is faster and loses less.
        dtype = "float32" if x.dtype.size < 4 else x.dtype
        return functools.reduce(tf.add, [tf.cast(value, dtype) for value in (x, *others)])

    # `bias` is () or (bias,): one traced program for each, added inside the loop.
    @jit
    def forward(x, *bias):
        return tf.cast(_gelu(in_float32(x, *bias)), x.dtype)

    @jit
    def backward(x, upstream, *bias):
        return tf.cast(_gelu_gradient(in_float32(x, *bias), in_float32(upstream)), x.dtype)

    return forward, backward


def fused_gelu(x, bias=None):
    """Tanh-GELU of a TensorFlow tensor (of `x + bias` when a bias is given), as one fused loop
    with a fused hand-written gradient.

    TensorFlow runs each elementwise op as its own pass over memory and its automatic gradient of
    the formula adds as many again (about twelve passes over the FFN's activations). Here the
    forward and the backward are each one function compiled by XLA, called from the ordinary
    graph, where the matmuls keep TensorFlow's multi-threaded kernels (differentiating through
    a jit-compiled function instead would run the gradient unfused, slower than plain ops).
    With `bias`, the Dense's bias add happens inside the same two loops, saving a pass; the
    bias's gradient stays TF's `BiasAddGrad` of the GELU's gradient, since XLA's sum over the
    rows, inside the loop or beside it, is slower on the CPU.

    Args:
        x: a floating TensorFlow tensor (..., I).
        bias: optional tensor (I,) of `x`'s dtype, added before the GELU.
    """
    import tensorflow as tf

    forward, backward = _compiled_gelu()
    biases = () if bias is None else (bias,)

    @tf.custom_gradient
    def gelu(x, *biases):
        def grad(upstream):
            gradient = backward(x, upstream, *biases)
            bias_gradients = [tf.raw_ops.BiasAddGrad(out_backprop=gradient) for _ in biases]
            return (gradient, *bias_gradients)

        return forward(x, *biases), grad

    return gelu(x, *biases)


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


# === Cross entropy ===


@functools.cache
def _compiled_cross_entropy():
    import tensorflow as tf

    jit = functools.partial(tf.function, jit_compile=True, autograph=False)

    @jit
    def forward(labels, logits):
        peak = tf.reduce_max(logits, axis=-1, keepdims=True)
        log_sum_exp = tf.math.log(tf.reduce_sum(tf.exp(logits - peak), -1, keepdims=True)) + peak
        label_logits = tf.gather(logits, labels, batch_dims=1)
        return log_sum_exp[:, 0] - label_logits, log_sum_exp

    @jit
    def backward(labels, logits, log_sum_exp, upstream):
        # Recomputes the probabilities rather than keeping them from the forward: one fused
        # pass over the logits either way, and nothing (N, V) held between the two.
        probabilities = tf.exp(logits - log_sum_exp)
        one_hot = tf.one_hot(labels, tf.shape(logits)[-1], dtype=logits.dtype)
        return (probabilities - one_hot) * upstream[:, None]

    return forward, backward


def fused_sparse_cross_entropy(labels, logits):
    """Per-row `-log softmax(logits)[label]` of float32 TensorFlow tensors, its forward and its
    gradient each one XLA-fused loop called from the ordinary graph.

    TensorFlow's `SparseSoftmaxCrossEntropyWithLogits` makes several passes over the (N, V)
    logits and, for the MLM loss, runs alone between the forward and the backward, on the
    step's critical path, where the fused loops take less time.

    Args:
        labels: int tensor (...), the target ids, each in [0, V).
        logits: float32 tensor (..., V).
    """
    import tensorflow as tf

    forward, backward = _compiled_cross_entropy()
    batch_shape = tf.shape(labels)
    labels = tf.reshape(tf.cast(labels, "int32"), (-1,))

    @tf.custom_gradient
    def cross_entropy(logits):
        rows = tf.reshape(logits, (-1, tf.shape(logits)[-1]))
        loss, log_sum_exp = forward(labels, rows)

        def grad(upstream):
            gradient = backward(labels, rows, log_sum_exp, tf.reshape(upstream, (-1,)))
            return tf.reshape(gradient, tf.shape(logits))

        return tf.reshape(loss, batch_shape), grad

    return cross_entropy(logits)


# === The FFN's widening matmul ===


@functools.cache
def _compiled_transpose():
    import tensorflow as tf

    # Compiled, so that TF's graph optimizer (Grappler) cannot fold the transpose back into the
    # matmul as `transpose_b`, which is what is slow here.
    return tf.function(lambda kernel: tf.transpose(kernel), jit_compile=True, autograph=False)


def widening_matmul(x, kernel):
    """`x @ kernel` of float32 TensorFlow tensors x (..., K) and kernel (K, N), N > K, with the
    input's gradient taken against a transposed copy of the kernel.

    The input's gradient is `upstream @ transpose(kernel)`. TensorFlow's automatic gradient
    runs it as a matmul with `transpose_b`, which oneDNN computes more slowly in float32 when
    the kernel is wider than tall than the plain product with a transposed copy, the copy
    included (`benchmarks/dense_input_gradient.py` times both per shape). In bfloat16 the copy
    loses, so the layers call it in float32 only. The kernel's gradient is TF's, `transpose(x) @ upstream` over all rows.

    Args:
        x: float32 tensor (..., K).
        kernel: float32 tensor (K, N).
    """
    import tensorflow as tf

    @tf.custom_gradient
    def product(x, kernel):
        rows = tf.reshape(x, (-1, tf.shape(x)[-1]))
        out_shape = tf.concat([tf.shape(x)[:-1], tf.shape(kernel)[-1:]], 0)

        def grad(upstream):
            upstream_rows = tf.reshape(upstream, (-1, tf.shape(upstream)[-1]))
            dx = tf.matmul(upstream_rows, _compiled_transpose()(kernel))
            dkernel = tf.matmul(rows, upstream_rows, transpose_a=True)
            return tf.reshape(dx, tf.shape(x)), dkernel

        return tf.reshape(tf.matmul(rows, kernel), out_shape), grad

    return product(x, kernel)


# === Tied output ===


@ops.custom_gradient
def tied_logits(x, table):
    """`x @ transpose(table)` for x (N, E) and table (V, E), with the table's gradient computed as
    `transpose(upstream) @ x`, the (V, E) product directly: TF's automatic gradient is the
    transpose of an (E, V) product, slower in TensorFlow's kernels, plus a copy."""

    def grad(*args, upstream=None):
        if upstream is None:  # TF passes the upstream gradient positionally
            (upstream,) = args
        dx = ops.matmul(upstream, ops.cast(table, upstream.dtype))
        dtable = ops.matmul(ops.transpose(upstream), ops.cast(x, upstream.dtype))
        return ops.cast(dx, x.dtype), ops.cast(dtable, table.dtype)

    return ops.matmul(x, ops.transpose(table)), grad


# The name the layers used before the switch existed.
use_hand_written_gradients = fast_paths_enabled
