"""Official google-research/albert TF1 checkpoints: `albert_config.json` + `model.ckpt-*`."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import tensorflow as tf

from albert_keras.convert.official_format import (
    CheckpointError,
    backbone_config_from_official,
    check_official_weights,
    is_bookkeeping,
)
from albert_keras_contracts import atomic_write

CONFIG_NAME = "albert_config.json"


def find_tf1_checkpoint(path: str | pathlib.Path) -> pathlib.Path:
    """Returns the checkpoint prefix for a folder, a prefix, or one of the prefix's files.

    In a folder, the `checkpoint` state file wins; else the single `*.index` file; with several,
    `model.ckpt-best` (the release's name) or an error listing them.
    """
    path = pathlib.Path(path)
    if path.suffix == ".index" or ".data-" in path.name:
        path = path.with_name(path.name.split(".index")[0].split(".data-")[0])
    if path.is_dir():
        latest = tf.train.latest_checkpoint(str(path))
        if latest:
            return pathlib.Path(latest)
        indexes = sorted(path.glob("*.index"))
        if not indexes:
            raise FileNotFoundError(f"{path}: no TF1 checkpoint (*.index) in this folder")
        prefixes = [index.with_suffix("") for index in indexes]
        best = [p for p in prefixes if p.name == "model.ckpt-best"]
        if len(prefixes) > 1 and not best:
            names = ", ".join(p.name for p in prefixes)
            raise CheckpointError(f"{path}: several checkpoints ({names}); pass one prefix")
        return best[0] if best else prefixes[0]
    if not pathlib.Path(f"{path}.index").is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint ({path}.index not found)")
    return path


def read_albert_config(path: str | pathlib.Path) -> dict:
    """Parses an `albert_config.json` and checks it maps onto `AlbertBackbone` arguments."""
    path = pathlib.Path(path)
    try:
        config = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such config file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(config, dict):
        raise CheckpointError(f"{path}: expected a JSON object")
    backbone_config_from_official(config, source=str(path))  # validates
    return config


def read_tf1_checkpoint(
    path: str | pathlib.Path, config_path: str | pathlib.Path | None = None
) -> tuple[dict, dict[str, np.ndarray], list[str]]:
    """Reads an official ALBERT checkpoint into official-named NumPy arrays.

    Args:
        path: str or Path. A checkpoint prefix (`.../model.ckpt-best`) or its folder.
        config_path: str or Path. The `albert_config.json`; default: the one beside the prefix.

    Returns:
        `(config, weights, skipped)`: the official config dict, the weights checked against it
        (names and shapes), and the names of skipped optimizer/step variables.

    Example:
    >>> from albert_keras.convert import export_model
    >>> _ = export_model(keras.saving.load_model("albert.keras"), "tf1", "albert_tf1/")
    >>> config, weights, _ = read_tf1_checkpoint("albert_tf1/")
    >>> config["embedding_size"], weights["bert/embeddings/word_embeddings"].shape
    (8, (50, 8))
    """
    prefix = find_tf1_checkpoint(path)
    config_path = pathlib.Path(config_path) if config_path else prefix.parent / CONFIG_NAME
    if not config_path.is_file():
        raise FileNotFoundError(f"{config_path}: no such file; pass --config albert_config.json")
    config = read_albert_config(config_path)
    weights, skipped = {}, []
    try:
        reader = tf.train.load_checkpoint(str(prefix))
        for name in sorted(reader.get_variable_to_shape_map()):
            if is_bookkeeping(name):
                skipped.append(name)
                continue
            # TF-Hub exports of the release put everything under "module/".
            weights[name.removeprefix("module/")] = np.asarray(reader.get_tensor(name), np.float32)
    except (tf.errors.OpError, IndexError, ValueError, RuntimeError, OSError) as error:
        # A truncated data file surfaces as IndexError ("Read less bytes than requested").
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        reason = message.splitlines()[0]
        raise CheckpointError(f"{prefix}: unreadable checkpoint ({reason})") from None
    check_official_weights(weights, config, source=str(prefix))
    return config, weights, skipped


def write_tf1_checkpoint(
    config: dict, weights: dict[str, np.ndarray], directory: str | pathlib.Path
) -> pathlib.Path:
    """Writes `albert_config.json` and `model.ckpt` (TF's V2 bundle format) into `directory`.

    The official `run_classifier.py --init_checkpoint=DIR/model.ckpt` reads it as a release.
    Returns the checkpoint prefix.
    """
    check_official_weights(weights, config, source="weights to write")
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    prefix = directory / "model.ckpt"
    names = sorted(weights)
    # SaveV2 writes the names exactly as given (a tf.train.Checkpoint would add its own paths).
    tf.raw_ops.SaveV2(
        prefix=str(prefix),
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(weights[name], tf.float32) for name in names],
    )
    (directory / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt"\nall_model_checkpoint_paths: "model.ckpt"\n'
    )
    _write_json(directory / CONFIG_NAME, config)
    return prefix


def _write_json(path: pathlib.Path, data: dict) -> None:
    atomic_write.write_json(path, data, sort_keys=True)
