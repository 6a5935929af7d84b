"""Our Keras models <-> official-named NumPy arrays (the one mapping every converter shares).

Our attention fuses query, key and value into one Dense H -> 3H whose columns are [q | k | v]
(each laid out heads x head_dim, as the official (H, N*D) kernels), so those three official
variables become slices of one Keras variable. Everything else is one variable each.
"""

from __future__ import annotations

import keras
import numpy as np

from albert_keras.convert.official_format import (
    MLM_HEAD,
    SENTENCE_HEAD,
    SQUAD_HEAD,
    CheckpointError,
    backbone_config_from_official,
    check_official_weights,
    official_config_from_backbone,
)

_QKV = ("query", "key", "value")


def pretrainer_from_official(config: dict, weights: dict[str, np.ndarray]):
    """Builds an `AlbertPretrainer` (SOP head) holding official-named weights.

    Args:
        config: dict. The official config (`albert_config.json` keys).
        weights: dict. Official-named arrays; the pooler and heads may be absent.

    Returns:
        `(pretrainer, fresh_parts)`: the model, and the labels of the parts the source lacked
        (they keep their fresh initialization).

    Example:
    >>> config, weights = official_from_model(keras.saving.load_model("albert.keras"))
    >>> pretrainer, fresh = pretrainer_from_official(config, weights)
    >>> pretrainer.backbone.num_layers, fresh
    (2, [])
    """
    from albert_keras.models import AlbertBackbone, AlbertPretrainer

    fresh = check_official_weights(weights, config, source="weights")
    backbone = AlbertBackbone(**backbone_config_from_official(config))
    pretrainer = AlbertPretrainer(backbone, sentence_objective="sop")
    pretrainer.build()
    load_official_weights(pretrainer, weights)
    return pretrainer, fresh


def question_answerer_from_official(config: dict, weights: dict[str, np.ndarray]):
    """Builds an `AlbertQuestionAnswerer` (simple head) holding official-named weights.

    Args:
        config: dict. The official config.
        weights: dict. Official-named arrays; `cls/squad/*` (HF's `qa_outputs`) fill the span
            head, the pretraining heads are not used; absent parts keep their initialization.

    Returns:
        `(answerer, fresh)`: the model, and the official names it has that the source lacked.

    Example:
    >>> config, weights = official_from_model(keras.saving.load_model("albert.keras"))
    >>> answerer, fresh = question_answerer_from_official(config, weights)
    >>> answerer.head, fresh  # a pretrainer has no span head
    ('simple', ['cls/squad/output_bias', 'cls/squad/output_weights'])
    """
    from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer

    check_official_weights(weights, config, source="weights")
    backbone = AlbertBackbone(**backbone_config_from_official(config))
    answerer = AlbertQuestionAnswerer(backbone, head="simple")
    used = {name: array for name, array in weights.items()
            if not name.startswith((MLM_HEAD, SENTENCE_HEAD))}  # fmt: skip
    assigned = set(load_official_weights(answerer, used))
    fresh = sorted({n for names, _, _ in _slots(answerer) for n in names} - assigned)
    return answerer, fresh


def load_official_weights(model, weights: dict[str, np.ndarray]) -> list[str]:
    """Assigns official-named arrays to an `AlbertBackbone`, `AlbertPretrainer` or (simple head)
    `AlbertQuestionAnswerer`, in place.

    Names the model has no place for (heads, for a backbone) are an error; returns the
    official names that were assigned.
    """
    slots = _slots(model)
    unplaced = sorted(set(weights) - {name for names, _, _ in slots for name in names})
    if unplaced:
        raise CheckpointError(f"the model has no place for {unplaced[:8]}")
    assigned = []
    for names, variable, kind in slots:
        if not all(name in weights for name in names):
            continue
        if kind == "concat":
            value = np.concatenate([weights[name] for name in names], axis=-1)
        elif kind == "transpose":
            value = np.transpose(weights[names[0]])
        else:
            value = weights[names[0]]
        if tuple(value.shape) != tuple(variable.shape):
            raise CheckpointError(
                f"{', '.join(names)}: shape {value.shape} does not fit {variable.path} "
                f"{tuple(variable.shape)}"
            )
        variable.assign(value.astype(variable.dtype))
        assigned.extend(names)
    return assigned


def official_from_model(model) -> tuple[dict, dict[str, np.ndarray]]:
    """Reads an `AlbertBackbone` or `AlbertPretrainer` as `(official config, weights)`.

    A pretrainer with `sentence_objective=None` has no sentence head to write.
    """
    backbone = getattr(model, "backbone", model)
    config = official_config_from_backbone(backbone.get_config())
    weights = {}
    for names, variable, kind in _slots(model):
        value = np.asarray(keras.ops.convert_to_numpy(variable), np.float32)
        if kind == "concat":
            for name, part in zip(names, np.split(value, len(names), axis=-1)):
                weights[name] = part
        else:
            weights[names[0]] = value.T if kind == "transpose" else value
    check_official_weights(weights, config, source="model")
    return config, weights


def _slots(model) -> list[tuple[tuple[str, ...], object, str]]:
    """(official names, Keras variable, how) for every weight of the model."""
    backbone = getattr(model, "backbone", model)
    if not backbone.built:
        raise CheckpointError("build the model (call it once) before converting its weights")
    embeddings, encoder = backbone.embeddings, backbone.encoder
    slots = [
        (("bert/embeddings/word_embeddings",), embeddings.token_embedding.embeddings, "same"),
        (
            ("bert/embeddings/position_embeddings",),
            embeddings.position_embedding.position_embeddings,
            "same",
        ),
        (
            ("bert/embeddings/token_type_embeddings",),
            embeddings.segment_embedding.embeddings,
            "same",
        ),
        *_layer_norm("bert/embeddings/LayerNorm", embeddings.layer_norm),
    ]
    if embeddings.projection is not None:
        slots += _dense("bert/encoder/embedding_hidden_mapping_in", embeddings.projection)
    # "none" (BERT) is written as one official group per layer; both index blocks the same way
    # (the sharing mode, the catalogue's, says how many weight sets there are).
    if not encoder.mode.official_checkpoint:
        raise CheckpointError(
            f"sharing={encoder.sharing!r} has no official checkpoint layout (only 'all', 'none')"
        )
    num_owners = encoder.mode.num_owners("attention", encoder.num_layers, encoder.num_groups)
    for owner in range(num_owners):
        for inner in range(encoder.num_inner_repetitions):
            index = owner * encoder.num_inner_repetitions + inner
            attention = encoder.attention_blocks[index]
            ffn = encoder.feedforward_blocks[index]
            scope = f"bert/encoder/transformer/group_{owner}/inner_group_{inner}"
            self_scope = f"{scope}/attention_1/self"
            slots += [
                (
                    tuple(f"{self_scope}/{p}/kernel" for p in _QKV),
                    attention.qkv_dense.kernel,
                    "concat",
                ),
                (tuple(f"{self_scope}/{p}/bias" for p in _QKV), attention.qkv_dense.bias, "concat"),
                *_dense(f"{scope}/attention_1/output/dense", attention.output_dense),
                *_layer_norm(f"{scope}/LayerNorm", attention.layer_norm),
                *_dense(f"{scope}/ffn_1/intermediate/dense", ffn.intermediate_dense),
                *_dense(f"{scope}/ffn_1/intermediate/output/dense", ffn.output_dense),
                *_layer_norm(f"{scope}/LayerNorm_1", ffn.layer_norm),
            ]
    slots += _dense("bert/pooler/dense", backbone.pooler)
    if model is backbone:
        return slots
    if hasattr(model, "span_head") or hasattr(model, "v2_head"):  # AlbertQuestionAnswerer
        if model.span_head is None:
            raise CheckpointError(
                "the v2 SQuAD head has no Hugging Face / official v1 layout; "
                "convert a head='simple' AlbertQuestionAnswerer"
            )
        # The official (2, H) kernel, HF's qa_outputs.weight; a Keras Dense kernel is (H, 2).
        return slots + [
            ((f"{SQUAD_HEAD}output_weights",), model.span_head.kernel, "transpose"),
            ((f"{SQUAD_HEAD}output_bias",), model.span_head.bias, "same"),
        ]
    head = model.mlm_head  # a TiedMaskedLMHead; its output is the tied token embedding
    slots += [
        ((f"{MLM_HEAD}transform/dense/kernel",), head.intermediate_kernel, "same"),
        ((f"{MLM_HEAD}transform/dense/bias",), head.intermediate_bias, "same"),
        ((f"{MLM_HEAD}transform/LayerNorm/gamma",), head.layer_norm_gamma, "same"),
        ((f"{MLM_HEAD}transform/LayerNorm/beta",), head.layer_norm_beta, "same"),
        ((f"{MLM_HEAD}output_bias",), head.output_bias, "same"),
    ]
    if model.sentence_head is not None:
        # The official SOP kernel is (2, H); a Keras Dense kernel is (H, 2).
        slots += [
            ((f"{SENTENCE_HEAD}output_weights",), model.sentence_head.kernel, "transpose"),
            ((f"{SENTENCE_HEAD}output_bias",), model.sentence_head.bias, "same"),
        ]
    return slots


def _dense(scope, layer):
    return [((f"{scope}/kernel",), layer.kernel, "same"), ((f"{scope}/bias",), layer.bias, "same")]


def _layer_norm(scope, layer):
    return [((f"{scope}/gamma",), layer.gamma, "same"), ((f"{scope}/beta",), layer.beta, "same")]
