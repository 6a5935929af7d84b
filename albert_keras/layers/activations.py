"""The official code's GELU: the tanh approximation (registered, so layer configs serialize)."""

import keras
from keras import ops

from albert_keras.layers.fast_paths import fast_paths_enabled, fused_gelu


@keras.saving.register_keras_serializable(package="albert_keras")
def gelu_approximate(x, bias=None):
    """`0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`, as BERT's and ALBERT's `gelu`.

    The reference is `ops.gelu(approximate=True)`; on TensorFlow the fast path `fused_gelu`
    (`albert_keras.layers.fast_paths`) computes it. A plain function wraps it because the
    backends' custom-gradient objects do not serialize as a Keras activation.

    Args:
        x: float tensor.
        bias: optional float tensor broadcast over `x`'s last axis; the GELU is then of
            `x + bias` (a Dense's bias, which the fast path adds inside its fused loop).

    Example:
    >>> [round(float(v), 4) for v in gelu_approximate(keras.ops.convert_to_tensor([0.0, 1.0]))]
    [0.0, 0.8412]
    """
    if fast_paths_enabled():
        return fused_gelu(x, bias)
    return ops.gelu(x if bias is None else x + bias, approximate=True)
