"""Continued pretraining: start `pretrain` from existing weights (`--init_from`)."""

from __future__ import annotations

# Backbone arguments an initialization may still change: they leave every weight's shape alone.
SHAPE_FREE_OVERRIDES = ("dropout",)


def load_init_source(source: str):
    """`(model, fresh_parts)` for `--init_from`: our `.keras` file (pretrainer, backbone or
    classifier), `pretrain`'s output folder, a release name, `hf://...`, a keras-hub handle, or
    an official / Hugging Face / keras-hub folder (see `albert_keras.presets`).

    Example:
    >>> model, fresh = load_init_source("albert.keras")  # or a release: "albert_base_v2"
    >>> type(model).__name__, fresh
    ('AlbertPretrainer', [])
    """
    from albert_keras.presets import load_with_fresh_parts

    model, fresh_parts = load_with_fresh_parts(source)
    return model, fresh_parts


def init_backbone_config(
    model, overrides: dict, vocabulary_pieces: int | None = None, seq_length: int | None = None
) -> dict:
    """The backbone config of a run that starts from `model`: its own, plus `overrides` that
    keep the weights' shapes (`dropout`). Checks a SentencePiece model's size and the records'
    length against it."""
    backbone = getattr(model, "backbone", model)
    config = {
        key: value
        for key, value in backbone.get_config().items()
        if key not in ("name", "trainable", "dtype")
    }
    changed = sorted(k for k in overrides if k not in SHAPE_FREE_OVERRIDES)
    if changed:
        raise ValueError(
            f"--config {', '.join(changed)}: --init_from fixes the architecture; only "
            f"{', '.join(SHAPE_FREE_OVERRIDES)} can change"
        )
    if vocabulary_pieces is not None and vocabulary_pieces != config["vocabulary_size"]:
        raise ValueError(
            f"--spm_model has {vocabulary_pieces} pieces but the --init_from model's vocabulary "
            f"is {config['vocabulary_size']}: they do not belong together"
        )
    if seq_length is not None and seq_length > config["max_sequence_length"]:
        raise ValueError(
            f"records of length {seq_length} exceed the --init_from model's "
            f"max_sequence_length={config['max_sequence_length']}"
        )
    return {**config, **overrides}


def initialize_from(pretrainer, model, fresh_parts: list[str], source: str) -> str:
    """Copies `model`'s weights into `pretrainer` (same architecture); returns a one-line note
    of what came from `source` and what stays fresh.

    The backbone always comes from `model`; the MLM head and the sentence head come too when
    `model` is a pretrainer that has them (and, for the sentence head, the same objective), and
    were not fresh in its own source (a keras-hub or Hugging Face `AlbertModel` has no heads).

    Example:
    >>> from albert_keras.models import AlbertBackbone, AlbertPretrainer
    >>> model, fresh = load_init_source("albert.keras")
    >>> pretrainer = AlbertPretrainer(AlbertBackbone.from_config(model.backbone.get_config()))
    >>> print(initialize_from(pretrainer, model, fresh, "albert.keras"))
    initialized from albert.keras: backbone (21 variables), MLM head, SOP head; nothing fresh
    """
    from albert_keras.models import AlbertPretrainer

    backbone = getattr(model, "backbone", model)
    pretrainer.backbone.set_weights(backbone.get_weights())
    loaded, fresh = [f"backbone ({len(backbone.weights)} variables)"], []
    is_pretrainer = isinstance(model, AlbertPretrainer)
    if is_pretrainer and "MLM head" not in fresh_parts:
        pretrainer.mlm_head.set_weights(model.mlm_head.get_weights())
        loaded.append("MLM head")
    else:
        fresh.append("MLM head")
    if pretrainer.sentence_head is not None:
        label = f"{pretrainer.sentence_objective.upper()} head"
        same_head = (
            is_pretrainer
            and model.sentence_objective == pretrainer.sentence_objective
            and not any("sentence" in part for part in fresh_parts)
        )
        if same_head:
            pretrainer.sentence_head.set_weights(model.sentence_head.get_weights())
            loaded.append(label)
        else:
            fresh.append(label)
    note = f"initialized from {source}: {', '.join(loaded)}"
    return note + (f"; fresh: {', '.join(fresh)}" if fresh else "; nothing fresh")


def count_pieces(spm_model: str | None) -> int | None:
    """The number of pieces of a SentencePiece model file, or None without one."""
    if not spm_model:
        return None
    import sentencepiece

    return sentencepiece.SentencePieceProcessor(model_file=spm_model).get_piece_size()


__all__ = ["count_pieces", "init_backbone_config", "initialize_from", "load_init_source"]
