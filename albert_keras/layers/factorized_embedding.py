"""Idea 1 of the paper: factorized embedding parameterization (Lan et al., 2020, section 3.1)."""

import keras
from keras_hub.layers import PositionEmbedding, ReversibleEmbedding

from albert_keras.layers.fast_layer_normalization import FastLayerNormalization
from albert_keras.layers.validation import check_positive, check_rate


def albert_initializer() -> keras.initializers.Initializer:
    """The official code's initializer: truncated normal, stddev 0.02 (a fresh object per use)."""
    return keras.initializers.TruncatedNormal(stddev=0.02)


@keras.saving.register_keras_serializable(package="albert_keras")
class FactorizedEmbedding(keras.layers.Layer):
    """Token, position and segment embeddings at width E, then one Dense E -> H.

    Tokens map to `embedding_dim` (E) values rather than `hidden_dim` (H): the V x E table plus an
    E x H projection replaces BERT's V x H table. Position and segment embeddings are E wide too;
    the sum is layer-normalized (eps 1e-12) and dropped out at width E, before the projection, as
    in the official code, Hugging Face and keras-hub. When E == H there is no projection (BERT).

    The token table is a `keras_hub.layers.ReversibleEmbedding`, so a masked-LM head can reuse it
    as its output layer with `token_embedding(x, reverse=True)` (tied weights).

    Args:
        vocabulary_size: int. V, the number of tokens.
        embedding_dim: int. E, the width of the embeddings.
        hidden_dim: int. H, the width of the output (the transformer's width).
        max_sequence_length: int. The number of learned positions.
        num_segments: int. The number of segment ids (2: sentence A and B).
        dropout: float. Dropout rate applied after the LayerNorm.
        layer_norm_epsilon: float. The LayerNorm's epsilon.
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> layer = FactorizedEmbedding(vocabulary_size=100, embedding_dim=8, hidden_dim=16)
    >>> tuple(layer(np.ones((2, 5), "int32"), np.zeros((2, 5), "int32")).shape)
    (2, 5, 16)
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        hidden_dim,
        max_sequence_length=512,
        num_segments=2,
        dropout=0.0,
        layer_norm_epsilon=1e-12,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive(
            vocabulary_size=vocabulary_size,
            embedding_dim=embedding_dim,
            hidden_dim=hidden_dim,
            max_sequence_length=max_sequence_length,
            num_segments=num_segments,
        )
        check_rate("dropout", dropout)
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon

        # === Layers ===
        # Made here rather than in build() so a model can tie its MLM output to
        # `token_embedding` before the first call; their weights still appear in build().
        self.token_embedding = ReversibleEmbedding(
            vocabulary_size,
            embedding_dim,
            embeddings_initializer=albert_initializer(),
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.position_embedding = PositionEmbedding(
            max_sequence_length,
            initializer=albert_initializer(),
            dtype=self.dtype_policy,
            name="position_embedding",
        )
        self.segment_embedding = keras.layers.Embedding(
            num_segments,
            embedding_dim,
            embeddings_initializer=albert_initializer(),
            dtype=self.dtype_policy,
            name="segment_embedding",
        )
        self.layer_norm = FastLayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")
        self.projection = None
        if embedding_dim != hidden_dim:
            self.projection = keras.layers.Dense(
                hidden_dim,
                kernel_initializer=albert_initializer(),
                dtype=self.dtype_policy,
                name="projection",
            )

    def build(self, token_ids_shape, segment_ids_shape=None):
        self.token_embedding.build(token_ids_shape)
        embedded_shape = tuple(token_ids_shape) + (self.embedding_dim,)
        self.position_embedding.build(embedded_shape)
        self.segment_embedding.build(token_ids_shape)
        self.layer_norm.build(embedded_shape)
        if self.projection is not None:
            self.projection.build(embedded_shape)

    def call(self, token_ids, segment_ids=None, training=None):
        tokens = self.token_embedding(token_ids)
        parts = [tokens, self.position_embedding(tokens)]
        if segment_ids is not None:
            parts.append(self.segment_embedding(segment_ids))
        # Summed in float32 and rounded once. TensorFlow's graph optimizer reassociates a chain
        # of additions when every shape is known (token + (position + segment)); in bfloat16
        # that rounds differently, and a model's outputs then depended on the shapes its
        # predict function was traced for (tests/models/test_bf16_round_trip.py).
        x = keras.ops.cast(parts[0], "float32")
        for part in parts[1:]:
            x = x + keras.ops.cast(part, "float32")
        x = self.layer_norm(keras.ops.cast(x, self.compute_dtype))
        x = self.dropout_layer(x, training=training)
        if self.projection is not None:
            x = self.projection(x)
        return x

    def compute_output_shape(self, token_ids_shape, segment_ids_shape=None):
        return tuple(token_ids_shape) + (self.hidden_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "embedding_dim": self.embedding_dim,
                "hidden_dim": self.hidden_dim,
                "max_sequence_length": self.max_sequence_length,
                "num_segments": self.num_segments,
                "dropout": self.dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config
