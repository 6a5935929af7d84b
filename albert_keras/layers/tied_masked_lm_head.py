"""keras-hub's MaskedLMHead, owned here, with the tied output's gradient in the layout TensorFlow
does fast."""

import keras
from keras import ops

from albert_keras.layers.fast_paths import fast_paths_enabled, tied_logits
from albert_keras.layers.gather_rows import gather_rows


@keras.saving.register_keras_serializable(package="albert_keras")
class TiedMaskedLMHead(keras.layers.Layer):
    """`keras_hub.layers.MaskedLMHead` (same arguments, weights, config, saved-weight paths and
    outputs) for a head whose output layer is tied to a `ReversibleEmbedding`, faster to train
    on TensorFlow.

    The head gathers the masked positions, applies Dense -> LayerNorm, then maps to the
    vocabulary through the token embedding's transpose (or its own kernel) plus a bias. Called
    without `mask_positions` (an addition to keras-hub's head), it takes its inputs as the rows
    already gathered (batch, P, H), as `AlbertPretrainer` passes them. The code
    is ours rather than a subclass of keras-hub's so that nothing reads keras-hub's private
    attributes (tests/layers/test_tied_masked_lm_head.py checks it against keras-hub's head).

    keras-hub computes `x @ transpose(embeddings)`, and TF's automatic gradient for the (V, E)
    table is then `transpose(transpose(x) @ upstream)`: an (E, V) product, about half as fast
    as the (V, E) one, plus a copy to transpose it back. Here the gradient is written as
    `transpose(upstream) @ x`, the (V, E) product directly (the transposes of the inputs fold
    into the matmul), the faster layout for TensorFlow's kernels. Other backends, and heads with
    an untied kernel or soft-capped logits, use the reference formula.

    Args:
        vocabulary_size: int. The output size; may be left out when `token_embedding` is given.
        token_embedding: `keras_hub.layers.ReversibleEmbedding` or None. Ties the output
            projection to this embedding's table.
        intermediate_activation: str or callable. The activation of the Dense before the
            LayerNorm.
        activation: str, callable or None. Applied to the logits.
        layer_norm_epsilon: float. The LayerNorm's epsilon.
        kernel_initializer: str or initializer. For the Dense and an untied output kernel.
        bias_initializer: str or initializer. For the Dense's and the output's biases.
        **kwargs: passed to `keras.layers.Layer` (e.g. `name`, `dtype`).

    Example:
    >>> from keras_hub.layers import ReversibleEmbedding
    >>> embedding = ReversibleEmbedding(input_dim=100, output_dim=8)
    >>> sequence_output = embedding(np.ones((2, 5), "int32"))
    >>> head = TiedMaskedLMHead(token_embedding=embedding, intermediate_activation="gelu")
    >>> tuple(head(sequence_output, mask_positions=np.array([[1, 3], [0, 4]])).shape)  # (B, P, V)
    (2, 2, 100)
    """

    def __init__(
        self,
        vocabulary_size=None,
        token_embedding=None,
        intermediate_activation="relu",
        activation=None,
        layer_norm_epsilon=1e-05,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        # As keras-hub's head: no autocast, the float32 bias is added to the cast logits.
        super().__init__(**kwargs, autocast=False)
        if vocabulary_size is None and token_embedding is None:
            raise ValueError(
                "TiedMaskedLMHead needs vocabulary_size or token_embedding; got neither"
            )
        if token_embedding is not None:
            if vocabulary_size and vocabulary_size != token_embedding.input_dim:
                raise ValueError(
                    f"vocabulary_size={vocabulary_size} does not match the token embedding's "
                    f"input_dim={token_embedding.input_dim}; leave vocabulary_size out"
                )
            vocabulary_size = token_embedding.input_dim
        self.vocabulary_size = vocabulary_size
        self.token_embedding = token_embedding
        self.intermediate_activation = keras.activations.get(intermediate_activation)
        self.activation = keras.activations.get(activation)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, inputs_shape, mask_positions_shape=None):
        # The transform keeps the width the logits need: the tied table's E, or the input's.
        width = self.token_embedding.output_dim if self.token_embedding else inputs_shape[-1]
        gathered = (inputs_shape[0], None)  # P masked positions; no weight depends on P
        # === Layers ===
        # Keras saves a sublayer's weights under the attribute holding it, so these attribute
        # and layer names are the paths inside every .keras file written so far (and keras-hub's
        # MaskedLMHead's): they stay. Public access is through the variable properties below.
        self._intermediate_dense = keras.layers.Dense(
            width,
            activation=self.intermediate_activation,
            kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer,
            dtype=self.dtype_policy,
            name="intermediate_dense",
        )
        self._intermediate_dense.build(gathered + (inputs_shape[-1],))
        self._intermediate_layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="intermediate_layer_norm"
        )
        self._intermediate_layer_norm.build(gathered + (width,))
        # === Weights ===
        # An untied head has its own (width, V) output kernel; a tied one reads the embedding's.
        self._kernel = None
        if self.token_embedding is None:
            self._kernel = self.add_weight(
                shape=(width, self.vocabulary_size),
                initializer=self.kernel_initializer,
                dtype=self.dtype,
                name="output_kernel",
            )
        self._bias = self.add_weight(
            shape=(self.vocabulary_size,),
            initializer=self.bias_initializer,
            dtype=self.dtype,
            name="output_bias",
        )

    # Read-only views for converters and tests. Variables only: Keras saving does not walk them,
    # so the saved-weight paths stay those of the private sublayers above.
    @property
    def intermediate_kernel(self):
        """The (E, E) kernel of the Dense before the LayerNorm (official `transform/dense`)."""
        return self._intermediate_dense.kernel

    @property
    def intermediate_bias(self):
        """The (E,) bias of the Dense before the LayerNorm."""
        return self._intermediate_dense.bias

    @property
    def layer_norm_gamma(self):
        """The (E,) scale of the LayerNorm (official `transform/LayerNorm/gamma`)."""
        return self._intermediate_layer_norm.gamma

    @property
    def layer_norm_beta(self):
        """The (E,) offset of the LayerNorm."""
        return self._intermediate_layer_norm.beta

    @property
    def output_bias(self):
        """The (V,) bias added to the logits (official `cls/predictions/output_bias`)."""
        return self._bias

    def call(self, inputs, mask_positions=None):
        # Gather the masked positions, then Dense -> LayerNorm on P, not T, rows.
        x = inputs
        if mask_positions is not None:
            x = gather_rows(inputs, mask_positions)
        x = self._intermediate_layer_norm(self._intermediate_dense(x))
        embedding = self.token_embedding
        if embedding is None:
            logits = ops.matmul(x, self._kernel)
        elif fast_paths_enabled() and embedding.tie_weights and embedding.logit_soft_cap is None:
            logits = self._fast_tied_logits(x, embedding)
        else:
            logits = embedding(x, reverse=True)
        outputs = ops.cast(logits, self.compute_dtype) + self._bias
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def _fast_tied_logits(self, x, embedding):
        # A tensor read (copy), not the variable: TF's custom gradient must not see a variable.
        table = ops.copy(embedding.embeddings)
        if embedding.reverse_dtype is not None:
            x = ops.cast(x, embedding.reverse_dtype)
            table = ops.cast(table, embedding.reverse_dtype)
        batch_size, positions = ops.shape(x)[0], ops.shape(x)[1]
        logits = tied_logits(ops.reshape(x, (-1, ops.shape(x)[-1])), table)
        return ops.reshape(logits, (batch_size, positions, -1))

    def compute_output_shape(self, inputs_shape, mask_positions_shape=None):
        rows = inputs_shape[:-1] if mask_positions_shape is None else mask_positions_shape
        return tuple(rows) + (self.vocabulary_size,)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.get("token_embedding"):
            config["token_embedding"] = keras.layers.deserialize(config["token_embedding"])
        return super().from_config(config)

    def get_config(self):
        config = super().get_config()
        embedding = None
        if self.token_embedding is not None:
            embedding = keras.layers.serialize(self.token_embedding)
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "token_embedding": embedding,
                "intermediate_activation": keras.activations.serialize(
                    self.intermediate_activation
                ),
                "activation": keras.activations.serialize(self.activation),
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config
