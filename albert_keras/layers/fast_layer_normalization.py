"""LayerNormalization over the last axis with a hand-written gradient on TensorFlow."""

import keras
from keras import ops

from albert_keras.layers.fast_paths import use_hand_written_gradients


@keras.saving.register_keras_serializable(package="albert_keras")
class FastLayerNormalization(keras.layers.LayerNormalization):
    """`keras.layers.LayerNormalization` (same weights, config and float32 math), made faster
    on TensorFlow for the transformer blocks' case: the last axis, with `gamma` and `beta`.

    TensorFlow runs the formula op by op, and differentiating it automatically makes about
    twenty passes over the (batch, time, H) activations per LayerNorm; the gradient written
    out below makes about eleven, which makes a CPU train step ~3% faster, with or without
    oneDNN (benchmarks/README.md). JAX and torch fuse the parent's formula themselves (see
    `use_hand_written_gradients`), so they, and every other configuration, use the parent's
    `call`.

    Args:
        **kwargs: passed to `keras.layers.LayerNormalization` (e.g. `epsilon`).

    Example:
    >>> layer = FastLayerNormalization(epsilon=1e-12)
    >>> layer(np.ones((2, 5, 16), "float32")).shape
    (2, 5, 16)
    """

    def call(self, inputs):
        last_axis_only = self.axis in ([-1], [len(inputs.shape) - 1])
        affine = self.center and self.scale and not self.rms_scaling
        if not (use_hand_written_gradients() and last_axis_only and affine):
            return super().call(inputs)
        outputs = _normalize(
            ops.cast(inputs, "float32"),
            ops.cast(self.gamma, "float32"),
            ops.cast(self.beta, "float32"),
            self.epsilon,
        )
        return ops.cast(outputs, self.compute_dtype)


def _normalize(x, gamma, beta, epsilon):
    """`gamma * (x - mean) / sqrt(variance + epsilon) + beta` over the last axis of float32 `x`."""

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
