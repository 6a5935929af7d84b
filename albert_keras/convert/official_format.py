"""The official google-research/albert layout: config keys, variable names and shapes.

Every converter goes through this one layout (a dict of NumPy arrays under the official TF1
variable names, e.g. `bert/encoder/transformer/group_0/inner_group_0/attention_1/self/query/
kernel`), so there is one mapping to our Keras model and one place that validates a checkpoint.
Kernels keep the TF1 orientation (inputs, outputs).
"""

from __future__ import annotations

import os
import re
import zipfile

import numpy as np

from albert_keras_contracts.catalogue import sharing_mode

# albert_config.json keys -> AlbertBackbone arguments.
CONFIG_TO_BACKBONE = {
    "vocab_size": "vocabulary_size",
    "num_hidden_layers": "num_layers",
    "num_attention_heads": "num_heads",
    "embedding_size": "embedding_dim",
    "hidden_size": "hidden_dim",
    "intermediate_size": "intermediate_dim",
    "num_hidden_groups": "num_groups",
    "inner_group_num": "num_inner_repetitions",
    "max_position_embeddings": "max_sequence_length",
    "type_vocab_size": "num_segments",
}
# Keys of the release configs that only select features the release never used; any other
# value than these would change the graph, so it is refused rather than silently ignored.
NEUTRAL_CONFIG_VALUES = {
    "down_scale_factor": (1,),
    "net_structure_type": (0,),
    "layers_to_keep": ([],),
    "gap_size": (0,),
    "num_memory_blocks": (0,),
}
# The official `gelu` is the tanh approximation (modeling.py), which is what our layers compute.
TANH_GELU_NAMES = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast")

# Name prefixes of the optional parts, each present whole or absent whole.
POOLER = "bert/pooler/"
MLM_HEAD = "cls/predictions/"
SENTENCE_HEAD = "cls/seq_relationship/"
OPTIONAL_PARTS = {POOLER: "pooler", MLM_HEAD: "MLM head", SENTENCE_HEAD: "sentence-order head"}
# The official `run_squad_v1.py` span head (Hugging Face's `qa_outputs`): fine-tuned
# checkpoints only, so it is expected only where a source has it.
SQUAD_HEAD = "cls/squad/"

# Training bookkeeping that official checkpoints carry beside the weights: skipped, and counted.
_BOOKKEEPING = re.compile(r"(^|/)(global_step|adam_[mv]|lamb_[mv]|beta[12]_power)$|Optimizer")


class CheckpointError(ValueError):
    """A checkpoint or config that cannot be converted; the message names the file and the fix."""


def check_keras_file(path: str | os.PathLike) -> None:
    """Refuses a `.keras` file that is not a whole zip archive, before Keras reads it (Keras
    says "File not found" of a truncated one)."""
    if not zipfile.is_zipfile(path):
        raise CheckpointError(
            f"{path}: not a .keras file: not a whole zip archive (truncated, or another format)"
        )


def is_bookkeeping(name: str) -> bool:
    """True for optimizer slots and step counters (not model weights)."""
    return bool(_BOOKKEEPING.search(name))


def backbone_config_from_official(config: dict, source: str = "albert_config.json") -> dict:
    """Maps an official (or HF) ALBERT config dict to `AlbertBackbone` arguments.

    Args:
        config: dict. The parsed `albert_config.json` (HF's `config.json` has the same keys).
        source: str. The file name, for error messages.

    Example:
    >>> config = {"vocab_size": 30000, "num_hidden_layers": 12, "num_attention_heads": 12,
    ...           "embedding_size": 128, "hidden_size": 768, "intermediate_size": 3072,
    ...           "num_hidden_groups": 1, "inner_group_num": 1, "max_position_embeddings": 512,
    ...           "type_vocab_size": 2}
    >>> backbone_config_from_official(config)["vocabulary_size"]
    30000
    """
    missing = [key for key in CONFIG_TO_BACKBONE if key not in config]
    if missing:
        raise CheckpointError(f"{source}: missing config keys {missing}")
    for key, allowed in NEUTRAL_CONFIG_VALUES.items():
        if key in config and config[key] not in allowed:
            raise CheckpointError(
                f"{source}: {key}={config[key]!r} is not supported (only {allowed[0]!r})"
            )
    activation = str(config.get("hidden_act", "gelu")).lower()
    if activation not in TANH_GELU_NAMES:
        raise CheckpointError(
            f"{source}: hidden_act={activation!r} is not supported; the model computes the "
            "tanh-approximate GELU of the official code"
        )
    result = {ours: int(config[key]) for key, ours in CONFIG_TO_BACKBONE.items()}
    result["sharing"] = "all"
    result["dropout"] = float(config.get("hidden_dropout_prob", 0.0))
    return result


def official_config_from_backbone(config: dict) -> dict:
    """Maps `AlbertBackbone.get_config()` to an official `albert_config.json` dict.

    Only `sharing="all"` (ALBERT) and `sharing="none"` (BERT: written as one group per layer)
    have an official layout; the ablations sharing only attention or only the FFN have none.
    """
    mode = sharing_mode(config.get("sharing", "all"))
    result = {key: int(config[ours]) for key, ours in CONFIG_TO_BACKBONE.items()}
    if not mode.official_checkpoint:
        raise CheckpointError(
            f"sharing={mode.name!r} has no official checkpoint layout (only 'all' and 'none')"
        )
    # An official group holds whole blocks: BERT's "none" is one group per layer.
    result["num_hidden_groups"] = mode.num_owners(
        "attention", result["num_hidden_layers"], result["num_hidden_groups"]
    )
    result.update(
        hidden_act="gelu",
        hidden_dropout_prob=float(config.get("dropout", 0.0)),
        attention_probs_dropout_prob=float(config.get("dropout", 0.0)),
        initializer_range=0.02,
        down_scale_factor=1,
    )
    return result


def official_weight_shapes(
    config: dict, with_projection: bool | None = None, with_squad_head: bool = False
) -> dict[str, tuple[int, ...]]:
    """Every variable an official ALBERT pretraining checkpoint holds, with its shape.

    Args:
        config: dict. An official config (keys as in `albert_config.json`).
        with_projection: bool. Whether `embedding_hidden_mapping_in` exists; default: when
            embedding_size != hidden_size, as the official code.
        with_squad_head: bool. Add the SQuAD v1 span head (`cls/squad/output_weights` (2, H),
            `cls/squad/output_bias` (2,)) of fine-tuned checkpoints.
    """
    vocab, emb, hidden = config["vocab_size"], config["embedding_size"], config["hidden_size"]
    inter = config["intermediate_size"]
    shapes = {
        "bert/embeddings/word_embeddings": (vocab, emb),
        "bert/embeddings/position_embeddings": (config["max_position_embeddings"], emb),
        "bert/embeddings/token_type_embeddings": (config["type_vocab_size"], emb),
        "bert/embeddings/LayerNorm/gamma": (emb,),
        "bert/embeddings/LayerNorm/beta": (emb,),
    }
    if with_projection or (with_projection is None and emb != hidden):
        shapes["bert/encoder/embedding_hidden_mapping_in/kernel"] = (emb, hidden)
        shapes["bert/encoder/embedding_hidden_mapping_in/bias"] = (hidden,)
    for group in range(config["num_hidden_groups"]):
        for inner in range(config["inner_group_num"]):
            scope = f"bert/encoder/transformer/group_{group}/inner_group_{inner}"
            for part in ("query", "key", "value"):
                shapes[f"{scope}/attention_1/self/{part}/kernel"] = (hidden, hidden)
                shapes[f"{scope}/attention_1/self/{part}/bias"] = (hidden,)
            shapes[f"{scope}/attention_1/output/dense/kernel"] = (hidden, hidden)
            shapes[f"{scope}/attention_1/output/dense/bias"] = (hidden,)
            shapes[f"{scope}/ffn_1/intermediate/dense/kernel"] = (hidden, inter)
            shapes[f"{scope}/ffn_1/intermediate/dense/bias"] = (inter,)
            shapes[f"{scope}/ffn_1/intermediate/output/dense/kernel"] = (inter, hidden)
            shapes[f"{scope}/ffn_1/intermediate/output/dense/bias"] = (hidden,)
            for norm in ("LayerNorm", "LayerNorm_1"):
                shapes[f"{scope}/{norm}/gamma"] = (hidden,)
                shapes[f"{scope}/{norm}/beta"] = (hidden,)
    shapes.update(
        {
            "bert/pooler/dense/kernel": (hidden, hidden),
            "bert/pooler/dense/bias": (hidden,),
            "cls/predictions/transform/dense/kernel": (hidden, emb),
            "cls/predictions/transform/dense/bias": (emb,),
            "cls/predictions/transform/LayerNorm/gamma": (emb,),
            "cls/predictions/transform/LayerNorm/beta": (emb,),
            "cls/predictions/output_bias": (vocab,),
            "cls/seq_relationship/output_weights": (2, hidden),
            "cls/seq_relationship/output_bias": (2,),
        }
    )
    if with_squad_head:
        shapes[f"{SQUAD_HEAD}output_weights"] = (2, hidden)
        shapes[f"{SQUAD_HEAD}output_bias"] = (2,)
    return shapes


def check_official_weights(
    weights: dict, config: dict, source: str, display_names: dict | None = None
) -> list[str]:
    """Checks names and shapes against `config`; returns the optional parts that are absent.

    Raises `CheckpointError` naming every unknown variable, every missing one (optional parts
    may be absent whole, not in part), and the first wrong shape with both shapes.
    `display_names` maps official names to the source's own names for the messages.
    """
    # The SQuAD head, like the optional parts, is present whole or absent whole.
    with_squad = any(name.startswith(SQUAD_HEAD) for name in weights)
    expected = official_weight_shapes(config, with_squad_head=with_squad)
    display_names = display_names or {}
    unknown = sorted(set(weights) - set(expected))
    if unknown:
        raise CheckpointError(f"{source}: unknown variables {_short_list(unknown)}")
    absent_parts = [
        label
        for prefix, label in OPTIONAL_PARTS.items()
        if not any(name.startswith(prefix) for name in weights)
    ]
    missing = sorted(
        name
        for name in set(expected) - set(weights)
        if not any(name.startswith(p) and OPTIONAL_PARTS[p] in absent_parts for p in OPTIONAL_PARTS)
    )
    if missing:
        missing = [display_names.get(name, name) for name in missing]
        raise CheckpointError(f"{source}: missing variables {_short_list(missing)}")
    for name in (name for name in expected if name in weights):
        array = weights[name]
        if tuple(np.shape(array)) != expected[name]:
            raise CheckpointError(
                f"{source}: {display_names.get(name, name)} has shape "
                f"{tuple(np.shape(array))}, the config implies {expected[name]}"
            )
    return absent_parts


def _short_list(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return f"{shown} (and {len(names) - limit} more)" if len(names) > limit else shown
