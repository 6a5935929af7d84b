"""The sequence length a saved model was trained at, read from its `.keras` file's
`config.json` before the model is loaded (loading a base model takes 20-40 s on a CPU; a length
the model cannot take should be known, and a default that fits it chosen, before that)."""

from __future__ import annotations

import json
import zipfile

import keras


def saved_lengths(model) -> tuple[int | None, int | None]:
    """`(trained, positions)` of a saved ALBERT: the sequence length its preprocessor packs to
    (what it was pretrained or fine-tuned at; None without a preprocessor) and its backbone's
    `max_sequence_length` (None when unknown).

    Args:
        model: a `.keras` path, or a model in memory. A path that is not a readable `.keras`
            archive gives `(None, None)`: loading it later says what is wrong, in one line.

    Example:
    >>> saved_lengths("albert.keras")  # no preprocessor, 32 positions
    (None, 32)
    >>> saved_lengths("missing.keras")
    (None, None)
    """
    if isinstance(model, keras.Model):
        preprocessor = getattr(model, "preprocessor", None)
        backbone = getattr(model, "backbone", model)
        return (
            getattr(preprocessor, "sequence_length", None),
            getattr(backbone, "max_sequence_length", None),
        )
    try:
        with zipfile.ZipFile(model) as archive:
            config = json.loads(archive.read("config.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None, None
    return _find(config, "AlbertPreprocessor", "sequence_length"), _find(
        config, "AlbertBackbone", "max_sequence_length"
    )


def model_sequence_length(model, official: int) -> int:
    """The sequence length fine-tuning takes by default: the one `model` was trained at (its
    preprocessor's), else its positions, never above `official` (the official script's length
    for the task, what a converted release with 512 positions keeps).

    Args:
        model: a `.keras` path or a model in memory (`saved_lengths`).
        official: int. The official length (GLUE 512, SQuAD 384).

    Example:
    >>> model_sequence_length("albert.keras", official=384)  # 32 positions
    32
    """
    trained, positions = saved_lengths(model)
    for length in (trained, positions):
        if length:
            return min(int(length), official)
    return official


def _find(config, class_name: str, key: str):
    """The first `key` in the config of a `class_name` object, depth first (None if none)."""
    if isinstance(config, dict):
        if config.get("class_name") == class_name and isinstance(config.get("config"), dict):
            value = config["config"].get(key)
            if value is not None:
                return value
        children = config.values()
    elif isinstance(config, list):
        children = config
    else:
        return None
    for child in children:
        found = _find(child, class_name, key)
        if found is not None:
            return found
    return None
