"""LayerNormalization over the last axis with a hand-written gradient on TensorFlow."""

import keras
from keras import ops

from albert_keras.layers.fast_paths import fast_paths_enabled, layer_norm


@keras.saving.register_keras_serializable(package="albert_keras")
class FastLayerNormalization(keras.layers.LayerNormalization):
    """`keras.layers.LayerNormalization` (same weights, config and float32 math), made faster
    on TensorFlow for the transformer blocks' case: the last axis, with `gamma` and `beta`.

    On TensorFlow the fast path `layer_norm` (`albert_keras.layers.fast_paths`: the gradient
    written out, about eleven passes over the activations instead of twenty) computes it; other
    backends, other axes and other configurations use the parent's `call`.

    Args:
        **kwargs: passed to `keras.layers.LayerNormalization` (e.g. `epsilon`).

    Example:
    >>> layer = FastLayerNormalization(epsilon=1e-12)
    >>> tuple(layer(np.ones((2, 5, 16), "float32")).shape)
    (2, 5, 16)
    """

    def call(self, inputs):
        last_axis_only = self.axis in ([-1], [len(inputs.shape) - 1])
        affine = self.center and self.scale and not self.rms_scaling
        if not (fast_paths_enabled() and last_axis_only and affine):
            return super().call(inputs)
        outputs = layer_norm(
            ops.cast(inputs, "float32"),
            ops.cast(self.gamma, "float32"),
            ops.cast(self.beta, "float32"),
            self.epsilon,
        )
        return ops.cast(outputs, self.compute_dtype)
