"""The masked-LM loss per position: cross entropy of integer labels against logits."""

import keras
from keras import ops

from albert_keras.layers.fast_paths import fast_paths_enabled, fused_sparse_cross_entropy


def sparse_cross_entropy(labels, logits):
    """`-log softmax(logits)[label]` per row: `keras.losses.sparse_categorical_crossentropy`
    with `from_logits=True`, in float32.

    On TensorFlow the fast path `fused_sparse_cross_entropy` (`albert_keras.layers.fast_paths`:
    forward and gradient each one XLA-fused loop) computes it; other backends use the Keras
    loss, which their compilers fuse themselves.

    Args:
        labels: int tensor (...), target ids in [0, V).
        logits: float tensor (..., V).

    Example:
    >>> logits = keras.ops.convert_to_tensor([[0.0, 0.0], [2.0, 0.0]])
    >>> [round(float(v), 4) for v in sparse_cross_entropy(keras.ops.array([0, 1]), logits)]
    [0.6931, 2.1269]
    """
    logits = ops.cast(logits, "float32")
    labels = ops.cast(labels, "int32")
    if fast_paths_enabled():
        return fused_sparse_cross_entropy(labels, logits)
    return keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
