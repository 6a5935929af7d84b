"""The FFN half of a post-LN transformer block: LayerNorm(x + Dropout(Dense(gelu(Dense(x)))))."""

import keras
from keras import ops

from albert_keras.layers.activations import gelu_approximate
from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.fast_layer_normalization import FastLayerNormalization
from albert_keras.layers.fast_paths import fast_paths_enabled, widening_matmul
from albert_keras.layers.validation import check_positive, check_rate


@keras.saving.register_keras_serializable(package="albert_keras")
class FeedForwardBlock(keras.layers.Layer):
    """Position-wise feed-forward network with its residual connection and post-LayerNorm.

    Dense H -> I, tanh-approximate GELU (as the official code's `gelu`), Dense I -> H, dropout,
    residual, LayerNorm (eps 1e-12).

    Args:
        intermediate_dim: int. I, the width of the inner layer.
        dropout: float. Dropout rate on the output.
        layer_norm_epsilon: float. The LayerNorm's epsilon.
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> block = FeedForwardBlock(intermediate_dim=32)
    >>> tuple(block(np.ones((2, 5, 16), "float32")).shape)
    (2, 5, 16)
    """

    def __init__(self, intermediate_dim, dropout=0.0, layer_norm_epsilon=1e-12, **kwargs):
        super().__init__(**kwargs)
        check_positive(intermediate_dim=intermediate_dim)
        check_rate("dropout", dropout)
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon

    def build(self, inputs_shape):
        hidden_dim = inputs_shape[-1]
        self.intermediate_dense = keras.layers.Dense(
            self.intermediate_dim,
            kernel_initializer=albert_initializer(),
            dtype=self.dtype_policy,
            name="intermediate",
        )
        self.intermediate_dense.build(inputs_shape)
        self.output_dense = keras.layers.Dense(
            hidden_dim,
            kernel_initializer=albert_initializer(),
            dtype=self.dtype_policy,
            name="output",
        )
        self.output_dense.build(tuple(inputs_shape[:-1]) + (self.intermediate_dim,))
        self.dropout_layer = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="dropout"
        )
        self.layer_norm = FastLayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.layer_norm.build(inputs_shape)

    def call(self, inputs, training=None):
        # The Dense's matmul, then its bias inside the GELU (one fused loop on TensorFlow).
        dense = self.intermediate_dense
        kernel = ops.cast(dense.kernel, self.compute_dtype)
        fast = fast_paths_enabled() and self.compute_dtype == "float32"
        matmul = widening_matmul if fast else ops.matmul
        x = gelu_approximate(matmul(inputs, kernel), ops.cast(dense.bias, self.compute_dtype))
        x = self.output_dense(x)
        x = self.dropout_layer(x, training=training)
        return self.layer_norm(inputs + x)

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "intermediate_dim": self.intermediate_dim,
                "dropout": self.dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config
