"""The attention half of a post-LN transformer block: LayerNorm(x + Dropout(SelfAttention(x)))."""

import keras
from keras import ops

from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.fast_layer_normalization import FastLayerNormalization
from albert_keras.layers.fast_paths import explicit_attention, fast_paths_enabled
from albert_keras.layers.gather_rows import gather_rows
from albert_keras.layers.validation import check_positive, check_rate


@keras.saving.register_keras_serializable(package="albert_keras")
class SelfAttentionBlock(keras.layers.Layer):
    """Multi-head self-attention with its residual connection and post-LayerNorm.

    Written for speed: one fused Dense H -> 3H makes queries, keys and values, split (not
    sliced: a split's gradient is one concat, a slice's a zero-padded copy each) and reshaped
    into the (batch, time, heads, head_dim) layout of `keras.ops.dot_product_attention`, which
    JAX and torch run with their fused kernels. The softmax is float32 under mixed precision.
    The official model has separate query, key and value variables: optimizers that take a norm
    per variable (`Lamb`'s trust ratio) take one per column block of `qkv/kernel` and
    `qkv/bias` instead (`albert_keras.optimizers.OFFICIAL_FUSED_SLICES` names them), so keep
    those names and the [q | k | v] order.

    TensorFlow has no fused attention kernel, so there the block takes the fast path
    `explicit_attention` (`albert_keras.layers.fast_paths`: batched matmuls, padding as an
    additive bias, faster than TensorFlow's einsum and `where` over the whole logits). The same
    function serves `dropout > 0` in training (the BERT presets) on every backend, since
    `dot_product_attention` has no dropout on the probabilities, which the official code drops
    out.

    Args:
        num_heads: int. The number of attention heads; must divide the input width H.
        dropout: float. Dropout rate on the attention probabilities and on the output.
        layer_norm_epsilon: float. The LayerNorm's epsilon.
        **kwargs: passed to `keras.layers.Layer`.

    With `query_positions`, only the rows at those positions are computed: their queries attend
    to the keys and values of every row, and the output projection, residual and LayerNorm run
    on those rows alone. The result equals the full block's output gathered at the positions
    (up to float round-off) at a fraction of the cost when the positions are few, as in
    pretraining's last layer, whose only rows the losses read are [CLS] and the masked ones.

    Call args:
        inputs: float tensor (batch, time, H).
        attention_mask: optional bool tensor broadcastable to (batch, heads, queries, time);
            True where a query may attend to a key. (batch, 1, 1, time) masks padding keys.
        query_positions: optional int tensor (batch, Q). The rows to compute (any order,
            repeats allowed); the output is then (batch, Q, H). None: every row.
        training: bool. Whether dropout is active.

    Example:
    >>> block = SelfAttentionBlock(num_heads=2)
    >>> x = np.random.default_rng(0).normal(size=(2, 5, 16)).astype("float32")
    >>> tuple(block(x).shape)
    (2, 5, 16)
    >>> positions = np.array([[0, 3], [0, 1]])
    >>> rows = block(x, query_positions=positions)
    >>> tuple(rows.shape)
    (2, 2, 16)
    >>> bool(np.allclose(rows, np.take_along_axis(np.asarray(block(x)), positions[..., None], 1),
    ...                  atol=1e-5))
    True
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

    def call(self, inputs, attention_mask=None, query_positions=None, training=None):
        batch_size, hidden_dim = ops.shape(inputs)[0], ops.shape(inputs)[-1]
        if query_positions is None:
            residual = inputs
            query, key, value = ops.split(self.qkv_dense(inputs), 3, axis=-1)
        else:
            residual = gather_rows(inputs, query_positions)
            query, key, value = self._gathered_query_key_value(inputs, residual)
        # (batch, rows, heads, head_dim); the query rows may be fewer than the key rows.
        query, key, value = (
            ops.reshape(part, (batch_size, -1, self.num_heads, self.head_dim))
            for part in (query, key, value)
        )
        dropout = training and self.dropout > 0
        if dropout or fast_paths_enabled():
            x = explicit_attention(
                query, key, value, attention_mask, self.probs_dropout, training=training
            )
        else:
            if attention_mask is not None:
                # cuDNN's fused attention (Keras's flash attention on JAX GPUs) takes a mask
                # only at full (batch, heads, queries, keys) size: a (batch, 1, 1, keys) padding
                # mask sends every call back to XLA's unfused kernel.
                mask_shape = (batch_size, 1, ops.shape(query)[1], ops.shape(key)[1])
                attention_mask = ops.broadcast_to(attention_mask, mask_shape)
            # `keras.ops` reads no global switch itself (Keras's attention layers do): passing
            # it on makes `keras.config.disable_flash_attention()` hold here too (None: the
            # backend's fused kernel where the shapes allow it).
            x = ops.dot_product_attention(
                query,
                key,
                value,
                mask=attention_mask,
                flash_attention=keras.config.is_flash_attention_enabled(),
            )
        x = ops.reshape(x, (batch_size, -1, hidden_dim))
        x = self.output_dense(x)
        x = self.output_dropout(x, training=training)
        return self.layer_norm(residual + x)

    def _gathered_query_key_value(self, inputs, query_inputs):
        """Queries from the rows `query_inputs`, keys and values from every row of `inputs`.

        The fused kernel is split (H, H) + (H, 2H) rather than run on every row before the
        queries are gathered: the query projection then costs Q rows, not all of them, and the
        kernel's gradient is one concat of the two parts'.
        """
        hidden_dim = self.num_heads * self.head_dim
        kernel = ops.cast(self.qkv_dense.kernel, self.compute_dtype)
        bias = ops.cast(self.qkv_dense.bias, self.compute_dtype)
        query_kernel, key_value_kernel = ops.split(kernel, [hidden_dim], axis=-1)
        query_bias, key_value_bias = ops.split(bias, [hidden_dim], axis=-1)
        query = ops.matmul(query_inputs, query_kernel) + query_bias
        key, value = ops.split(ops.matmul(inputs, key_value_kernel) + key_value_bias, 2, axis=-1)
        return query, key, value

    def compute_output_shape(self, inputs_shape, query_positions_shape=None):
        if query_positions_shape is None:
            return inputs_shape
        return tuple(query_positions_shape) + (inputs_shape[-1],)

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
