"""Weights to and from `keras_hub.models.AlbertBackbone`, copied by name and shape.

keras-hub keeps separate query / key / value kernels of shape (H, heads, head_dim) and an output
kernel (heads, head_dim, H); ours are one fused (H, 3H) kernel and an (H, H) kernel. Both order
a projection's outputs head-major, so the conversion is a reshape plus a concatenation (no
transpose). keras-hub shares everything (`sharing="all"`) and always has the E -> H projection;
our backbones with another `sharing` convert when every layer is its own group
(`num_groups == num_layers`, e.g. the BERT presets), and E == H converts through an identity
projection.

keras-hub's variables are looked up by their public `Variable.path` (`"pooled_dense/kernel"`, a
block's `"self_attention_layer/query/kernel"`), not through its layers' private attributes.
"""

import keras
import keras_hub
import numpy as np

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras_contracts.catalogue import sharing_mode

_CONFIG_KEYS = (
    "vocabulary_size",
    "num_layers",
    "num_heads",
    "embedding_dim",
    "hidden_dim",
    "intermediate_dim",
    "num_groups",
    "num_inner_repetitions",
    "dropout",
    "max_sequence_length",
    "num_segments",
)


def backbone_from_keras_hub(kh_backbone: keras_hub.models.AlbertBackbone) -> AlbertBackbone:
    """An `AlbertBackbone` with `kh_backbone`'s config and a copy of its weights.

    Args:
        kh_backbone: `keras_hub.models.AlbertBackbone`, e.g. from
            `keras_hub.models.AlbertBackbone.from_preset("albert_base_en_uncased")`.

    Example:
    >>> theirs = keras_hub.models.AlbertBackbone(
    ...     vocabulary_size=100, num_layers=2, num_heads=2, num_groups=1, num_inner_repetitions=1,
    ...     embedding_dim=8, hidden_dim=16, intermediate_dim=32)
    >>> ours = backbone_from_keras_hub(theirs)
    >>> ours.sharing, ours.count_params() == theirs.count_params()
    ('all', True)
    """
    config = {key: getattr(kh_backbone, key) for key in _CONFIG_KEYS}
    backbone = AlbertBackbone(**config, sharing="all", dtype=kh_backbone.dtype_policy)
    if backbone.embeddings.projection is None:
        # E == H: our backbone has no projection, so keras-hub's must be the identity.
        kernel, bias = (
            _to_numpy(_keras_hub_weight(kh_backbone, f"embedding_projection/{name}"))
            for name in ("kernel", "bias")
        )
        if not (np.allclose(kernel, np.eye(len(kernel))) and np.allclose(bias, 0.0)):
            raise ValueError(
                "embedding_dim == hidden_dim but the keras-hub embedding projection is not the "
                "identity; AlbertBackbone has no projection when E == H"
            )
    for ours, theirs, to_ours, _ in _weight_pairs(backbone, kh_backbone):
        _assign(ours, to_ours([_to_numpy(w) for w in theirs]))
    return backbone


def backbone_to_keras_hub(backbone: AlbertBackbone) -> keras_hub.models.AlbertBackbone:
    """A `keras_hub.models.AlbertBackbone` with `backbone`'s config and a copy of its weights.

    Args:
        backbone: `AlbertBackbone`. With `sharing="all"`, or with every layer its own group.

    Example:
    >>> kh = backbone_to_keras_hub(AlbertBackbone.from_preset("albert_base"))
    >>> kh.count_params()
    11683584
    """
    # keras-hub shares whole blocks in contiguous groups, as the official layouts do: a mode
    # they hold that shares ("all") maps group for group; any other only with one group a layer.
    mode = sharing_mode(backbone.sharing)
    whole_blocks = mode.official_checkpoint and mode.shares("attention")
    num_groups = backbone.num_groups if whole_blocks else backbone.num_layers
    if not whole_blocks and backbone.num_groups != backbone.num_layers:
        raise ValueError(
            f"keras-hub's AlbertBackbone shares whole blocks only: sharing={backbone.sharing!r} "
            f"converts only with num_groups == num_layers (got {backbone.num_groups} groups, "
            f"{backbone.num_layers} layers)"
        )
    config = {key: getattr(backbone, key) for key in _CONFIG_KEYS}
    config["num_groups"] = num_groups
    kh_backbone = keras_hub.models.AlbertBackbone(**config, dtype=backbone.dtype_policy)
    if backbone.embeddings.projection is None:
        kernel = _keras_hub_weight(kh_backbone, "embedding_projection/kernel")
        bias = _keras_hub_weight(kh_backbone, "embedding_projection/bias")
        kernel.assign(np.eye(backbone.hidden_dim, dtype="float32"))
        bias.assign(np.zeros(backbone.hidden_dim, dtype="float32"))
    for ours, theirs, _, to_theirs in _weight_pairs(backbone, kh_backbone):
        for variable, value in zip(theirs, to_theirs(_to_numpy(ours))):
            _assign(variable, value)
    return kh_backbone


def _to_numpy(variable) -> np.ndarray:
    """A variable's value as a float32 NumPy array (on any backend)."""
    return np.asarray(keras.ops.convert_to_numpy(variable.value), dtype="float32")


def _assign(variable, value: np.ndarray) -> None:
    if tuple(variable.shape) != value.shape:
        raise ValueError(
            f"cannot copy a {value.shape} array into {variable.path} of shape {variable.shape}"
        )
    variable.assign(value)


def _same(values):
    return values[0]


def _single(value):
    return [value]


def _keras_hub_weight(layer, name: str):
    """The one variable of `layer` whose public `path` is `name` or ends in `/name`.

    keras-hub's variables are found by their paths (`"pooled_dense/kernel"`, a block's
    `"self_attention_layer/query/kernel"`), never through its layers' private attributes, so a
    keras-hub version that lays out its weights differently fails here, by name.
    """
    matches = [v for v in layer.weights if v.path == name or v.path.endswith(f"/{name}")]
    if len(matches) != 1:
        paths = [v.path for v in layer.weights]
        shown = ", ".join(paths[:20]) + (", ..." if len(paths) > 20 else "")
        raise ValueError(
            f"keras-hub's {type(layer).__name__} {layer.name!r} has {len(matches)} weights named "
            f"'{name}' (expected 1): this keras-hub version lays out its weights differently "
            f"than the converter knows ({shown})"
        )
    return matches[0]


def _weight_pairs(backbone, kh_backbone):
    """Yields (our variable, [keras-hub variables], to_ours, to_theirs) for every weight.

    `to_ours` maps the list of keras-hub arrays to our array; `to_theirs` the reverse.
    """
    embeddings = backbone.embeddings
    one_to_one = [
        (embeddings.token_embedding.embeddings, kh_backbone, "token_embedding/embeddings"),
        (
            embeddings.position_embedding.position_embeddings,
            kh_backbone,
            "position_embedding/embeddings",
        ),
        (embeddings.segment_embedding.embeddings, kh_backbone, "segment_embedding/embeddings"),
        (embeddings.layer_norm.gamma, kh_backbone, "embeddings_layer_norm/gamma"),
        (embeddings.layer_norm.beta, kh_backbone, "embeddings_layer_norm/beta"),
        (backbone.pooler.kernel, kh_backbone, "pooled_dense/kernel"),
        (backbone.pooler.bias, kh_backbone, "pooled_dense/bias"),
    ]
    if embeddings.projection is not None:
        one_to_one += [
            (embeddings.projection.kernel, kh_backbone, "embedding_projection/kernel"),
            (embeddings.projection.bias, kh_backbone, "embedding_projection/bias"),
        ]
    encoder = backbone.encoder
    # keras-hub's block (group, inner) is our block group * R + inner, for both halves (a
    # non-"all" backbone converts only when every layer is a group, where the indices agree).
    kh_blocks = [block for group in kh_backbone.transformer_layers for block in group]
    for attention, ffn, kh_block in zip(
        encoder.attention_blocks, encoder.feedforward_blocks, kh_blocks, strict=True
    ):
        one_to_one += [
            (attention.layer_norm.gamma, kh_block, "self_attention_layer_norm/gamma"),
            (attention.layer_norm.beta, kh_block, "self_attention_layer_norm/beta"),
            (ffn.intermediate_dense.kernel, kh_block, "feedforward_intermediate_dense/kernel"),
            (ffn.intermediate_dense.bias, kh_block, "feedforward_intermediate_dense/bias"),
            (ffn.output_dense.kernel, kh_block, "feedforward_output_dense/kernel"),
            (ffn.output_dense.bias, kh_block, "feedforward_output_dense/bias"),
            (ffn.layer_norm.gamma, kh_block, "feedforward_layer_norm/gamma"),
            (ffn.layer_norm.beta, kh_block, "feedforward_layer_norm/beta"),
        ]
        yield from _attention_pairs(attention, kh_block)
    for ours, kh_layer, name in one_to_one:
        yield ours, [_keras_hub_weight(kh_layer, name)], _same, _single


def _attention_pairs(attention, kh_block):
    hidden_dim = attention.qkv_dense.kernel.shape[0]

    def mha_weights(kind):  # keras-hub's MultiHeadAttention, named `self_attention_layer`
        return [
            _keras_hub_weight(kh_block, f"self_attention_layer/{dense}/{kind}")
            for dense in ("query", "key", "value")
        ]

    qkv_kernels, qkv_biases = mha_weights("kernel"), mha_weights("bias")
    output_kernel = _keras_hub_weight(kh_block, "self_attention_layer/attention_output/kernel")
    output_bias = _keras_hub_weight(kh_block, "self_attention_layer/attention_output/bias")
    kernel_shape = tuple(qkv_kernels[0].shape)  # (H, heads, head_dim)
    bias_shape = tuple(qkv_biases[0].shape)  # (heads, head_dim)
    output_shape = tuple(output_kernel.shape)  # (heads, head_dim, H)

    def fuse_kernels(kernels):
        return np.concatenate([k.reshape(hidden_dim, hidden_dim) for k in kernels], axis=1)

    def split_kernel(kernel):
        return [k.reshape(kernel_shape) for k in np.split(kernel, 3, axis=1)]

    def fuse_biases(biases):
        return np.concatenate([b.reshape(hidden_dim) for b in biases])

    def split_bias(bias):
        return [b.reshape(bias_shape) for b in np.split(bias, 3)]

    yield attention.qkv_dense.kernel, qkv_kernels, fuse_kernels, split_kernel
    yield attention.qkv_dense.bias, qkv_biases, fuse_biases, split_bias
    yield (
        attention.output_dense.kernel,
        [output_kernel],
        lambda kernels: kernels[0].reshape(hidden_dim, hidden_dim),
        lambda kernel: [kernel.reshape(output_shape)],
    )
    yield attention.output_dense.bias, [output_bias], _same, _single
