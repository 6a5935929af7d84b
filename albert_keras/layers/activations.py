"""The official code's GELU: the tanh approximation (registered, so layer configs serialize)."""

import keras
from keras import ops

from albert_keras.layers.fast_paths import use_hand_written_gradients
from albert_keras.layers.fused_kernels import fused_gelu


@keras.saving.register_keras_serializable(package="albert_keras")
def gelu_approximate(x):
    """`0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`, as BERT's and ALBERT's `gelu`.

    On TensorFlow it is `fused_gelu`: the forward and a hand-written derivative each one
    XLA-fused loop, where automatic differentiation of the formula makes about twelve
    elementwise passes over the FFN's (batch, time, I) activations (benchmarks/README.md).
    JAX and torch fuse `ops.gelu` themselves. A plain function wraps it because the
    backends' custom-gradient objects do not serialize as a Keras activation.
    """
    if use_hand_written_gradients():
        return fused_gelu(x)
    return ops.gelu(x, approximate=True)
