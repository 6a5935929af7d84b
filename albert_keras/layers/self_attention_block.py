"""The attention half of a post-LN transformer block: LayerNorm(x + Dropout(SelfAttention(x)))."""

import keras
from keras import ops

from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.fast_layer_normalization import FastLayerNormalization
from albert_keras.layers.fast_paths import explicit_attention, fast_paths_enabled
from albert_keras.layers.validation import check_positive, check_rate


@keras.saving.register_keras_serializable(package="albert_keras")
class SelfAttentionBlock(keras.layers.Layer):
    """Multi-head self-attention with its residual connection and post-LayerNorm.

    Written for speed: one fused Dense H -> 3H makes queries, keys and values, split (not
    sliced: a split's gradient is one concat, a slice's a zero-padded copy each) and reshaped
    into the (batch, time, heads, head_dim) layout of `keras.ops.dot_product_attention`, which
    JAX and torch run with their fused kernels. The softmax is float32 under mixed precision.

    TensorFlow has no fused attention kernel, so there the block takes the fast path
    `explicit_attention` (`albert_keras.layers.fast_paths`: batched matmuls, padding as an
    additive bias; a CPU train step is 1.2-1.5x faster). The same function serves `dropout > 0`
    in training (the BERT presets) on every backend, since `dot_product_attention` has no
    dropout on the probabilities, which the official code drops out.

    Args:
        num_heads: int. The number of attention heads; must divide the input width H.
        dropout: float. Dropout rate on the attention probabilities and on the output.
        layer_norm_epsilon: float. The LayerNorm's epsilon.
        **kwargs: passed to `keras.layers.Layer`.

    Call args:
        inputs: float tensor (batch, time, H).
        attention_mask: optional bool tensor broadcastable to (batch, heads, time, time);
            True where a query may attend to a key. (batch, 1, 1, time) masks padding keys.
        training: bool. Whether dropout is active.

    Example:
    >>> block = SelfAttentionBlock(num_heads=2)
    >>> tuple(block(np.ones((2, 5, 16), "float32")).shape)
    (2, 5, 16)
    """

    def __init__(self, num_heads, dropout=0.0, layer_norm_epsilon=1e-12, **kwargs):
        super().__init__(**kwargs)
        check_positive(num_heads=num_heads)
        check_rate("dropout", dropout)
        self.num_heads = num_heads
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon

    def build(self, inputs_shape):
        hidden_dim = inputs_shape[-1]
        if hidden_dim % self.num_heads != 0:
            raise ValueError(
                f"hidden_dim={hidden_dim} is not divisible by num_heads={self.num_heads}"
            )
        self.head_dim = hidden_dim // self.num_heads
        self.qkv_dense = keras.layers.Dense(
            3 * hidden_dim,
            kernel_initializer=albert_initializer(),
            dtype=self.dtype_policy,
            name="qkv",
        )
        self.qkv_dense.build(inputs_shape)
        self.output_dense = keras.layers.Dense(
            hidden_dim,
            kernel_initializer=albert_initializer(),
            dtype=self.dtype_policy,
            name="output",
        )
        self.output_dense.build(inputs_shape)
        self.probs_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="probs_dropout"
        )
        self.output_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="output_dropout"
        )
        self.layer_norm = FastLayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.layer_norm.build(inputs_shape)

    def call(self, inputs, attention_mask=None, training=None):
        batch_size, length, hidden_dim = ops.shape(inputs)
        heads_shape = (batch_size, length, self.num_heads, self.head_dim)
        query, key, value = (
            ops.reshape(part, heads_shape) for part in ops.split(self.qkv_dense(inputs), 3, axis=-1)
        )
        dropout = training and self.dropout > 0
        if dropout or fast_paths_enabled():
            x = explicit_attention(
                query, key, value, attention_mask, self.probs_dropout, training=training
            )
        else:
            x = ops.dot_product_attention(query, key, value, mask=attention_mask)
        x = ops.reshape(x, (batch_size, length, hidden_dim))
        x = self.output_dense(x)
        x = self.output_dropout(x, training=training)
        return self.layer_norm(inputs + x)

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "dropout": self.dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config
