"""keras-hub's MaskedLMHead with the tied output's gradient in the layout TensorFlow does fast."""

import keras
from keras import ops
from keras_hub.layers import MaskedLMHead

from albert_keras.layers.fast_paths import fast_paths_enabled, tied_logits


@keras.saving.register_keras_serializable(package="albert_keras")
class TiedMaskedLMHead(MaskedLMHead):
    """`keras_hub.layers.MaskedLMHead` (same weights, config and outputs) for a head whose output
    layer is tied to a `ReversibleEmbedding`, faster to train on TensorFlow.

    The parent computes `x @ transpose(embeddings)`, and TF's automatic gradient for the
    (V, E) table is then `transpose(transpose(x) @ upstream)`: an (E, V) product, about half
    as fast as the (V, E) one, plus a copy to transpose it back. Here the gradient is written
    as `transpose(upstream) @ x`, the (V, E) product directly (the transposes of the inputs
    fold into the matmul), which takes ~13% off the head's forward and backward and ~2.5% off a
    CPU train step at V = 30000 (benchmarks/README.md). Other backends, and heads with an
    untied kernel or soft-capped logits, use the parent's `call`.

    Args:
        **kwargs: passed to `keras_hub.layers.MaskedLMHead` (e.g. `token_embedding`).

    Example:
    >>> from keras_hub.layers import ReversibleEmbedding
    >>> embedding = ReversibleEmbedding(input_dim=100, output_dim=8)
    >>> sequence_output = embedding(np.ones((2, 5), "int32"))
    >>> head = TiedMaskedLMHead(token_embedding=embedding, intermediate_activation="gelu")
    >>> tuple(head(sequence_output, mask_positions=np.array([[1, 3], [0, 4]])).shape)  # (B, P, V)
    (2, 2, 100)
    """

    def call(self, inputs, mask_positions):
        embedding = self.token_embedding
        if (
            not fast_paths_enabled()
            or embedding is None
            or not embedding.tie_weights
            or embedding.logit_soft_cap is not None
        ):
            return super().call(inputs, mask_positions)
        # As the parent: gather the masked positions, then Dense -> LayerNorm (P, not T, rows).
        x = ops.take_along_axis(inputs, ops.expand_dims(mask_positions, axis=-1), axis=1)
        x = self._intermediate_layer_norm(self._intermediate_dense(x))
        # A tensor read (copy), not the variable: TF's custom gradient must not see a variable.
        table = ops.copy(embedding.embeddings)
        if embedding.reverse_dtype is not None:
            x = ops.cast(x, embedding.reverse_dtype)
            table = ops.cast(table, embedding.reverse_dtype)
        batch_size, positions = ops.shape(x)[0], ops.shape(x)[1]
        logits = tied_logits(ops.reshape(x, (-1, ops.shape(x)[-1])), table)
        logits = ops.reshape(logits, (batch_size, positions, -1))
        outputs = ops.cast(logits, self.compute_dtype) + self._bias
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs
