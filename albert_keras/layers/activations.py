"""The official code's GELU: the tanh approximation (registered, so layer configs serialize)."""

import math

import keras
from keras import ops

from albert_keras.layers.fast_paths import use_hand_written_gradients

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_CUBIC = _SQRT_2_OVER_PI * 0.044715


@keras.saving.register_keras_serializable(package="albert_keras")
def gelu_approximate(x):
    """`0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`, as BERT's and ALBERT's `gelu`.

    On TensorFlow without oneDNN it is computed with its derivative written by hand
    (`_gelu_with_gradient`): automatic differentiation of the formula makes about twelve
    elementwise passes over the FFN's (batch, time, I) activations, this about eight, which
    makes a CPU train step ~8% faster (benchmarks/README.md). Elsewhere the backend fuses
    `ops.gelu` itself (see `use_hand_written_gradients`). A plain function wraps it because the
    backends' custom-gradient objects do not serialize as a Keras activation.
    """
    if use_hand_written_gradients():
        return _gelu_with_gradient(x)
    return ops.gelu(x, approximate=True)


@ops.custom_gradient
def _gelu_with_gradient(x):
    x_squared = x * x
    tanh = ops.tanh(x * (_SQRT_2_OVER_PI + _CUBIC * x_squared))
    half_x = 0.5 * x

    def grad(*args, upstream=None):
        if upstream is None:  # TF passes the upstream gradient positionally
            (upstream,) = args
        slope = _SQRT_2_OVER_PI + 3.0 * _CUBIC * x_squared
        return upstream * (0.5 + 0.5 * tanh + half_x * (1.0 - tanh * tanh) * slope)

    return half_x + half_x * tanh, grad
