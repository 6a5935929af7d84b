"""AlbertBackbone: factorized embedding -> shared transformer stack -> tanh pooler."""

import keras
from keras import ops

from albert_keras.layers.factorized_embedding import FactorizedEmbedding, albert_initializer
from albert_keras.layers.shared_encoder import SharedEncoder
from albert_keras.layers.validation import check_positive
from albert_keras.models.albert_presets import BACKBONE_PRESETS
from albert_keras.preset_registry import get_preset_loader


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertBackbone(keras.Model):
    """The ALBERT encoder (Lan et al., 2020), a functional `keras.Model`.

    Inputs are a dict of int32 (batch, time) tensors with keras-hub's names: `token_ids`,
    `segment_ids` and `padding_mask` (1 at real tokens). Outputs are a dict:
    `sequence_output` (batch, time, H) and `pooled_output` (batch, H), a tanh Dense on the first
    token ([CLS]). Numerics follow the official TF1 code (see docs/design.md); with `sharing="all"`
    the outputs equal `keras_hub.models.AlbertBackbone`'s given the same weights.

    Args:
        vocabulary_size: int. V, the number of tokens.
        num_layers: int. L, the number of transformer layers computed.
        num_heads: int. Attention heads; must divide `hidden_dim`.
        embedding_dim: int. E, the token embedding width (E == H: no projection, as BERT).
        hidden_dim: int. H, the transformer's width.
        intermediate_dim: int. I, the FFN's inner width.
        num_groups: int. Groups of weights; must divide `num_layers` (layer l uses group
            `l * num_groups // num_layers`).
        num_inner_repetitions: int. Transformer blocks per layer.
        sharing: str. What is shared across the layers of a group: `"all"` (ALBERT),
            `"attention"`, `"ffn"` or `"none"` (BERT); the paper's Table 4.
        dropout: float. Dropout rate on embeddings, attention probabilities and block outputs.
        max_sequence_length: int. The number of learned positions.
        num_segments: int. The number of segment ids.
        dtype: str or `keras.DTypePolicy`, e.g. `"mixed_bfloat16"`. LayerNorm and the attention
            softmax still run in float32.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Example:
    >>> backbone = AlbertBackbone.from_preset("albert_base", max_sequence_length=128)
    >>> outputs = backbone({"token_ids": np.ones((1, 8), "int32"),
    ...                     "segment_ids": np.zeros((1, 8), "int32"),
    ...                     "padding_mask": np.ones((1, 8), "int32")})
    >>> tuple(outputs["pooled_output"].shape)
    (1, 768)
    """

    presets = BACKBONE_PRESETS

    def __init__(
        self,
        vocabulary_size,
        num_layers,
        num_heads,
        embedding_dim,
        hidden_dim,
        intermediate_dim,
        num_groups=1,
        num_inner_repetitions=1,
        sharing="all",
        dropout=0.0,
        max_sequence_length=512,
        num_segments=2,
        dtype=None,
        **kwargs,
    ):
        # Checked here so a bad config fails before any layer is built, with a plain message.
        check_positive(hidden_dim=hidden_dim, num_heads=num_heads)
        if hidden_dim % num_heads != 0:
            raise ValueError(f"hidden_dim={hidden_dim} is not divisible by num_heads={num_heads}")

        # === Layers ===
        self.embeddings = FactorizedEmbedding(
            vocabulary_size,
            embedding_dim,
            hidden_dim,
            max_sequence_length=max_sequence_length,
            num_segments=num_segments,
            dropout=dropout,
            dtype=dtype,
            name="embeddings",
        )
        self.encoder = SharedEncoder(
            num_layers,
            num_heads,
            intermediate_dim,
            num_groups=num_groups,
            num_inner_repetitions=num_inner_repetitions,
            sharing=sharing,
            dropout=dropout,
            dtype=dtype,
            name="encoder",
        )
        self.pooler = keras.layers.Dense(
            hidden_dim,
            activation="tanh",
            kernel_initializer=albert_initializer(),
            dtype=dtype,
            name="pooler",
        )

        # === Functional Model ===
        inputs = {
            name: keras.Input(shape=(None,), dtype="int32", name=name)
            for name in ("token_ids", "segment_ids", "padding_mask")
        }
        x = self.embeddings(inputs["token_ids"], inputs["segment_ids"])
        x = self.encoder(x, padding_mask=inputs["padding_mask"])
        outputs = {"sequence_output": x, "pooled_output": self.pooler(x[:, 0, :])}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # A functional Model drops `dtype`, so the model itself would report the global policy
        # (float32) and `get_config` would save that: set it here, as keras-hub's Backbone does.
        if dtype is not None:
            self.dtype_policy = keras.dtype_policies.get(dtype)

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.num_groups = num_groups
        self.num_inner_repetitions = num_inner_repetitions
        self.sharing = sharing
        self.dropout = dropout
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments

    @property
    def token_embedding(self):
        """The V x E `keras_hub.layers.ReversibleEmbedding`; an MLM head ties its output to it."""
        return self.embeddings.token_embedding

    def outputs_at(self, inputs: dict, positions, training=None) -> dict:
        """The backbone's outputs with `sequence_output` only at `positions`, for less work.

        The same layers as calling the backbone, but the last transformer block computes only
        the rows the caller reads: [CLS] (for the pooler) and `positions` (its queries attend
        to the keys and values of every row; all earlier blocks run in full). Pretraining
        reads only these rows (`AlbertPretrainer`: the masked positions and [CLS]), and the
        last block is then about 1/L of the encoder's work at Q of `time` rows.

        Args:
            inputs: dict of int tensors (batch, time), as for calling the backbone:
                `token_ids`, `segment_ids`, `padding_mask`.
            positions: int tensor (batch, P). The positions whose hidden states are wanted
                (any order, repeats allowed).
            training: bool. Whether dropout is active.

        Returns:
            A dict: `sequence_output` (batch, P, H), `backbone(inputs)["sequence_output"]`
            gathered at `positions`, and `pooled_output` (batch, H), as `backbone(inputs)`'s
            (both equal up to float round-off).

        Example:
        >>> backbone = AlbertBackbone(vocabulary_size=50, num_layers=2, num_heads=2,
        ...                           embedding_dim=8, hidden_dim=16, intermediate_dim=32)
        >>> inputs = {"token_ids": np.array([[2, 7, 9, 3, 0]], "int32"),
        ...           "segment_ids": np.zeros((1, 5), "int32"),
        ...           "padding_mask": np.array([[1, 1, 1, 1, 0]], "int32")}
        >>> rows = backbone.outputs_at(inputs, np.array([[2, 1]]))
        >>> tuple(rows["sequence_output"].shape)
        (1, 2, 16)
        >>> full = backbone(inputs)
        >>> bool(np.allclose(rows["sequence_output"], np.asarray(full["sequence_output"])[:, [2, 1]],
        ...                  atol=1e-5))
        True
        """
        token_ids, segment_ids, padding_mask = (
            ops.cast(inputs[name], "int32") for name in ("token_ids", "segment_ids", "padding_mask")
        )
        positions = ops.cast(positions, "int32")
        # Row 0 of the encoder's output is [CLS], for the pooler; the positions follow.
        rows = ops.concatenate([ops.zeros_like(positions[:, :1]), positions], axis=1)
        x = self.embeddings(token_ids, segment_ids, training=training)
        x = self.encoder(x, padding_mask=padding_mask, output_positions=rows, training=training)
        return {"sequence_output": x[:, 1:, :], "pooled_output": self.pooler(x[:, 0, :])}

    @classmethod
    def from_preset(cls, preset: str, **kwargs) -> "AlbertBackbone":
        """A backbone from an architecture name (random weights) or from released weights.

        Args:
            preset: str. An architecture of `AlbertBackbone.presets`, randomly initialized:
                `albert_base`, `albert_large`, `albert_xlarge`, `albert_xxlarge` (official v2
                configs, no dropout), `bert_base`, `bert_large` (E == H, `sharing="none"`,
                dropout 0.1, and V = 30000: the paper's BERT baselines used ALBERT's
                SentencePiece vocabulary, not BERT's 30,522). Or weights: an official release
                (`albert_base_v2`, ..., `albert_xxlarge_v1`; downloaded and converted once,
                then read from the cache), `hf://ORG/NAME`, a keras-hub name or `kaggle://`
                handle, or a local `.keras` file / checkpoint folder / tarball (see
                `albert_keras.presets`).
            **kwargs: constructor arguments that override the preset's (e.g. `dropout=0.1`);
                with weights, only those that keep the weights' shapes.

        Example:
        >>> AlbertBackbone.from_preset("albert_large").num_layers
        24
        """
        if preset in cls.presets:
            return cls(**{**cls.presets[preset], **kwargs})
        return get_preset_loader(preset).load_backbone(preset, **kwargs)

    def get_config(self):
        # Not chained to super(): a functional model's config is its layer graph, which is
        # rebuilt from these arguments instead (as keras-hub's Backbone does).
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            "vocabulary_size": self.vocabulary_size,
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
            "embedding_dim": self.embedding_dim,
            "hidden_dim": self.hidden_dim,
            "intermediate_dim": self.intermediate_dim,
            "num_groups": self.num_groups,
            "num_inner_repetitions": self.num_inner_repetitions,
            "sharing": self.sharing,
            "dropout": self.dropout,
            "max_sequence_length": self.max_sequence_length,
            "num_segments": self.num_segments,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)
