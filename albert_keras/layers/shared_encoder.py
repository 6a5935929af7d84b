"""Idea 2 of the paper: cross-layer parameter sharing (Lan et al., 2020, section 3.1, Table 4)."""

import keras
from keras import ops

from albert_keras.layers.feed_forward_block import FeedForwardBlock
from albert_keras.layers.self_attention_block import SelfAttentionBlock
from albert_keras.layers.validation import check_positive, check_rate
from albert_keras_contracts.catalogue import SHARING_MODES, sharing_mode

__all__ = ["SHARING_MODES", "SharedEncoder"]  # SHARING_MODES: the catalogue's, by name


@keras.saving.register_keras_serializable(package="albert_keras")
class SharedEncoder(keras.layers.Layer):
    """A stack of `num_layers` post-LN transformer layers computed from few sets of weights.

    Each layer is `num_inner_repetitions` blocks; a block is a `SelfAttentionBlock` then a
    `FeedForwardBlock`. Layer `l` belongs to group `l * num_groups // num_layers` (contiguous
    runs of layers, as the official code). `sharing` says which half of a block is shared:

    | sharing       | attention weights indexed by | FFN weights indexed by |
    |---------------|------------------------------|------------------------|
    | `"all"`       | (group, inner)               | (group, inner)         |
    | `"attention"` | (group, inner)               | (layer, inner)         |
    | `"ffn"`       | (layer, inner)               | (group, inner)         |
    | `"none"`      | (layer, inner)               | (layer, inner)         |

    ALBERT is `"all"` with one group and one inner repetition; BERT is `"none"`. Sharing is
    calling the same layer object again, so shared weights are one variable (never copies) and
    their gradients sum over the layers that use them. The modes are the catalogue's
    (`albert_keras_contracts.catalogue.SharingMode`: which halves are shared, which group a
    layer uses); a registered mode builds here with no change to this layer.

    Args:
        num_layers: int. L, the number of layers computed.
        num_heads: int. Attention heads per block.
        intermediate_dim: int. I, the FFN's inner width.
        num_groups: int. The number of weight groups; must divide `num_layers`.
        num_inner_repetitions: int. Blocks per layer (each with its own weights).
        sharing: str. A sharing mode of the catalogue: `"all"`, `"attention"`, `"ffn"`,
            `"none"` or one registered with `register_sharing_mode`.
        dropout: float. Dropout rate inside the blocks.
        layer_norm_epsilon: float. The LayerNorms' epsilon.
        **kwargs: passed to `keras.layers.Layer`.

    With `output_positions`, the last block (the last layer's last inner repetition) computes
    only the rows at those positions (`SelfAttentionBlock`'s `query_positions`; its keys and
    values still come from every row), and the encoder returns those rows: the full output
    gathered at the positions, up to float round-off, for less work when they are few.

    Call args:
        inputs: float tensor (batch, time, H).
        padding_mask: optional int or bool tensor (batch, time); 1 at real tokens, 0 at padding.
        output_positions: optional int tensor (batch, Q). The output rows wanted; the output is
            then (batch, Q, H). None: every row.
        training: bool. Whether dropout is active.

    Example:
    >>> encoder = SharedEncoder(num_layers=4, num_heads=2, intermediate_dim=32, num_groups=2)
    >>> tuple(encoder(np.ones((2, 5, 16), "float32"), padding_mask=np.ones((2, 5), "int32")).shape)
    (2, 5, 16)
    >>> rows = encoder(np.ones((2, 5, 16), "float32"), output_positions=np.array([[0, 2], [0, 4]]))
    >>> tuple(rows.shape)
    (2, 2, 16)
    """

    def __init__(
        self,
        num_layers,
        num_heads,
        intermediate_dim,
        num_groups=1,
        num_inner_repetitions=1,
        sharing="all",
        dropout=0.0,
        layer_norm_epsilon=1e-12,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive(
            num_layers=num_layers,
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            num_groups=num_groups,
            num_inner_repetitions=num_inner_repetitions,
        )
        check_rate("dropout", dropout)
        if num_layers % num_groups != 0:
            raise ValueError(f"num_layers={num_layers} is not divisible by num_groups={num_groups}")
        self.mode = sharing_mode(sharing)  # ValueError for a name the catalogue lacks
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.num_groups = num_groups
        self.num_inner_repetitions = num_inner_repetitions
        self.sharing = sharing
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon

    def _owners(self, half):
        """The (prefix, count) naming the distinct weight sets of one half of the block."""
        return (
            self.mode.owner_kind(half),
            self.mode.num_owners(half, self.num_layers, self.num_groups),
        )

    def build(self, inputs_shape):
        attention_owner, num_attention = self._owners("attention")
        ffn_owner, num_ffn = self._owners("ffn")
        repetitions = range(self.num_inner_repetitions)
        # Flat lists indexed by owner * num_inner_repetitions + inner (see `_block_index`).
        self.attention_blocks = [
            SelfAttentionBlock(
                self.num_heads,
                dropout=self.dropout,
                layer_norm_epsilon=self.layer_norm_epsilon,
                dtype=self.dtype_policy,
                name=f"{attention_owner}_{owner}_inner_{inner}_attention",
            )
            for owner in range(num_attention)
            for inner in repetitions
        ]
        self.feedforward_blocks = [
            FeedForwardBlock(
                self.intermediate_dim,
                dropout=self.dropout,
                layer_norm_epsilon=self.layer_norm_epsilon,
                dtype=self.dtype_policy,
                name=f"{ffn_owner}_{owner}_inner_{inner}_ffn",
            )
            for owner in range(num_ffn)
            for inner in repetitions
        ]
        for block in self.attention_blocks + self.feedforward_blocks:
            block.build(inputs_shape)

    def _block_index(self, layer, inner, half):
        owner = self.mode.owner(half, layer, self.num_layers, self.num_groups)
        return owner * self.num_inner_repetitions + inner

    def call(self, inputs, padding_mask=None, output_positions=None, training=None):
        attention_mask = None
        if padding_mask is not None:
            # (batch, 1, 1, keys): every head and every query ignores padding keys.
            attention_mask = ops.cast(padding_mask, "bool")[:, None, None, :]
        last_block = (self.num_layers - 1, self.num_inner_repetitions - 1)
        x = inputs
        for layer in range(self.num_layers):
            for inner in range(self.num_inner_repetitions):
                attention = self.attention_blocks[self._block_index(layer, inner, "attention")]
                ffn = self.feedforward_blocks[self._block_index(layer, inner, "ffn")]
                # Only the last block may drop rows: every earlier one feeds keys and values.
                query_positions = output_positions if (layer, inner) == last_block else None
                x = attention(
                    x,
                    attention_mask=attention_mask,
                    query_positions=query_positions,
                    training=training,
                )
                x = ffn(x, training=training)
        return x

    def compute_output_shape(self, inputs_shape, output_positions_shape=None):
        if output_positions_shape is None:
            return inputs_shape
        return tuple(output_positions_shape) + (inputs_shape[-1],)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_layers": self.num_layers,
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "num_groups": self.num_groups,
                "num_inner_repetitions": self.num_inner_repetitions,
                "sharing": self.sharing,
                "dropout": self.dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config
