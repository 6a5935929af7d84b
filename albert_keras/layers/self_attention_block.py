"""The attention half of a post-LN transformer block: LayerNorm(x + Dropout(SelfAttention(x)))."""

import keras
from keras import ops

from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.validation import check_positive, check_rate


@keras.saving.register_keras_serializable(package="albert_keras")
class SelfAttentionBlock(keras.layers.Layer):
    """Multi-head self-attention with its residual connection and post-LayerNorm.

    Written for speed: one fused Dense H -> 3H makes queries, keys and values, which are only
    reshaped (never transposed) into the (batch, time, heads, head_dim) layout that
    `keras.ops.dot_product_attention` takes; that op computes the softmax in float32 under mixed
    precision and uses the backend's fused kernels. Padding keys get a large negative logit.

    `keras.ops.dot_product_attention` has no dropout on the attention probabilities, so when
    `dropout > 0` and training (the BERT presets), the probabilities are computed explicitly
    (float32 softmax, as the fast path) and dropped out, as the official code does.

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
    >>> block(np.ones((2, 5, 16), "float32")).shape
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
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.layer_norm.build(inputs_shape)

    def call(self, inputs, attention_mask=None, training=None):
        batch_size, length, hidden_dim = ops.shape(inputs)
        qkv = self.qkv_dense(inputs)
        qkv = ops.reshape(qkv, (batch_size, length, 3, self.num_heads, self.head_dim))
        query, key, value = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        if training and self.dropout > 0:
            x = self._attention_with_dropout(query, key, value, attention_mask, training)
        else:
            x = ops.dot_product_attention(query, key, value, mask=attention_mask)
        x = ops.reshape(x, (batch_size, length, hidden_dim))
        x = self.output_dense(x)
        x = self.output_dropout(x, training=training)
        return self.layer_norm(inputs + x)

    def _attention_with_dropout(self, query, key, value, attention_mask, training):
        scale = 1.0 / float(self.head_dim) ** 0.5
        logits = ops.einsum("btnh,bsnh->bnts", query, key)
        logits = ops.cast(logits, "float32") * scale
        if attention_mask is not None:
            logits = ops.where(attention_mask, logits, -1e9)
        probs = ops.cast(ops.softmax(logits, axis=-1), self.compute_dtype)
        probs = self.probs_dropout(probs, training=training)
        return ops.einsum("bnts,bsnh->btnh", probs, value)

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
