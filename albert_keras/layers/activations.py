"""The official code's GELU: the tanh approximation (registered, so layer configs serialize)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_keras")
def gelu_approximate(x):
    """`0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`, as BERT's and ALBERT's `gelu`."""
    return ops.gelu(x, approximate=True)
