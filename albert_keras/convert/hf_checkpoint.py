"""Hugging Face ALBERT folders: `config.json` + `model.safetensors` (AlbertForPreTraining names).

Read with safetensors' NumPy API, so neither torch nor transformers is needed. Pickled
`pytorch_model.bin` files are refused: unpickling runs arbitrary code.
"""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file, save_file

from albert_keras.convert.official_format import (
    CONFIG_TO_BACKBONE,
    CheckpointError,
    backbone_config_from_official,
    check_official_weights,
    official_weight_shapes,
)
from albert_keras_contracts import atomic_write

WEIGHTS_NAME = "model.safetensors"
INDEX_NAME = "model.safetensors.index.json"
PICKLED_NAMES = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")
# Official names -> HF names; a trailing "^T" marks kernels that torch stores as (out, in).
_BLOCK_NAMES = {
    "attention_1/self/query/kernel": "attention.query.weight^T",
    "attention_1/self/query/bias": "attention.query.bias",
    "attention_1/self/key/kernel": "attention.key.weight^T",
    "attention_1/self/key/bias": "attention.key.bias",
    "attention_1/self/value/kernel": "attention.value.weight^T",
    "attention_1/self/value/bias": "attention.value.bias",
    "attention_1/output/dense/kernel": "attention.dense.weight^T",
    "attention_1/output/dense/bias": "attention.dense.bias",
    "LayerNorm/gamma": "attention.LayerNorm.weight",
    "LayerNorm/beta": "attention.LayerNorm.bias",
    "ffn_1/intermediate/dense/kernel": "ffn.weight^T",
    "ffn_1/intermediate/dense/bias": "ffn.bias",
    "ffn_1/intermediate/output/dense/kernel": "ffn_output.weight^T",
    "ffn_1/intermediate/output/dense/bias": "ffn_output.bias",
    "LayerNorm_1/gamma": "full_layer_layer_norm.weight",
    "LayerNorm_1/beta": "full_layer_layer_norm.bias",
}
_OTHER_NAMES = {
    "bert/embeddings/word_embeddings": "albert.embeddings.word_embeddings.weight",
    "bert/embeddings/position_embeddings": "albert.embeddings.position_embeddings.weight",
    "bert/embeddings/token_type_embeddings": "albert.embeddings.token_type_embeddings.weight",
    "bert/embeddings/LayerNorm/gamma": "albert.embeddings.LayerNorm.weight",
    "bert/embeddings/LayerNorm/beta": "albert.embeddings.LayerNorm.bias",
    "bert/encoder/embedding_hidden_mapping_in/kernel": (
        "albert.encoder.embedding_hidden_mapping_in.weight^T"
    ),
    "bert/encoder/embedding_hidden_mapping_in/bias": "albert.encoder.embedding_hidden_mapping_in.bias",
    "bert/pooler/dense/kernel": "albert.pooler.weight^T",
    "bert/pooler/dense/bias": "albert.pooler.bias",
    "cls/predictions/transform/dense/kernel": "predictions.dense.weight^T",
    "cls/predictions/transform/dense/bias": "predictions.dense.bias",
    "cls/predictions/transform/LayerNorm/gamma": "predictions.LayerNorm.weight",
    "cls/predictions/transform/LayerNorm/beta": "predictions.LayerNorm.bias",
    "cls/predictions/output_bias": "predictions.bias",
    # Both store the SOP kernel as (2, H): no transpose.
    "cls/seq_relationship/output_weights": "sop_classifier.classifier.weight",
    "cls/seq_relationship/output_bias": "sop_classifier.classifier.bias",
    # AlbertForQuestionAnswering's span head: (2, H) in both, as the official run_squad_v1.
    "cls/squad/output_weights": "qa_outputs.weight",
    "cls/squad/output_bias": "qa_outputs.bias",
}
# Tied copies HF may write beside their sources, and a non-persistent buffer older files hold.
_TIED = {
    "predictions.decoder.weight": "bert/embeddings/word_embeddings",
    "predictions.decoder.bias": "cls/predictions/output_bias",
}
_BUFFERS = ("albert.embeddings.position_ids", "albert.embeddings.token_type_ids")
# The head of HF's AlbertFor{SequenceClassification,TokenClassification,MultipleChoice}.
TASK_HEAD = "classifier."
_PROJECTION = "bert/encoder/embedding_hidden_mapping_in/"


def official_to_hf_names(config: dict) -> dict[str, tuple[str, bool]]:
    """Maps each official name to `(HF name, transpose)` for a config (official keys)."""
    names = {}
    # HF keeps the E->H projection even when E == H.
    shapes = official_weight_shapes(config, with_projection=True, with_squad_head=True)
    for official in shapes:
        if official.startswith("bert/encoder/transformer/"):
            _, _, _, group, inner, rest = official.split("/", 5)
            hf = (
                f"albert.encoder.albert_layer_groups.{group.split('_')[-1]}"
                f".albert_layers.{inner.split('_')[-1]}.{_BLOCK_NAMES[rest]}"
            )
        else:
            hf = _OTHER_NAMES[official]
        names[official] = (hf.removesuffix("^T"), hf.endswith("^T"))
    return names


def read_hf_folder(
    path: str | pathlib.Path, config_path: str | pathlib.Path | None = None
) -> tuple[dict, dict[str, np.ndarray], list[str]]:
    """Reads a HF ALBERT folder into official-named NumPy arrays.

    Args:
        path: str or Path. The folder (or its `model.safetensors` file).
        config_path: str or Path. HF's `config.json`; default: the one in the folder.

    Returns:
        `(config, weights, notes)`: the config with official keys, the checked weights, and
        notes on what was dropped (tied copies) or differs.

    Example:
    >>> from albert_keras.convert import export_model
    >>> _ = export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/")
    >>> config, weights, notes = read_hf_folder("albert_hf/")
    >>> config["hidden_size"], weights["bert/embeddings/word_embeddings"].shape
    (16, (50, 8))
    """
    path = pathlib.Path(path)
    if path.suffix in (".bin", ".h5", ".msgpack"):
        _refuse_pickled(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    folder = path if path.is_dir() else path.parent
    if path.is_dir() and not _has_safetensors(path):
        for name in PICKLED_NAMES:
            if (path / name).exists():
                _refuse_pickled(path / name)
        raise FileNotFoundError(f"{path}: no {WEIGHTS_NAME} in this folder")
    config_path = pathlib.Path(config_path) if config_path else folder / "config.json"
    config, notes = _read_hf_config(config_path)
    hf_weights = _load_safetensors(path if path.is_file() else folder)
    if not any(name.startswith("albert.") for name in hf_weights):
        # A bare AlbertModel is saved without the "albert." prefix.
        hf_weights = {
            (
                name
                if name.startswith(("predictions.", "sop_classifier.", "qa_outputs.", TASK_HEAD))
                else f"albert.{name}"
            ): a
            for name, a in hf_weights.items()
        }
    names = official_to_hf_names(config)
    expected = official_weight_shapes(config, with_projection=True, with_squad_head=True)
    to_official = {hf: (official, t) for official, (hf, t) in names.items()}
    weights, unknown = {}, []
    hf_weights = _without_task_head(hf_weights, notes)
    for name, array in hf_weights.items():
        if name in to_official:
            official, transpose = to_official[name]
            shape = expected[official][::-1] if transpose else expected[official]
            if array.shape != shape:
                raise CheckpointError(
                    f"{folder}: {name} has shape {array.shape}, the config implies {shape}"
                )
            weights[official] = np.asarray(array.T if transpose else array, np.float32)
        elif name not in _TIED and not name.endswith(_BUFFERS):
            unknown.append(name)
    if unknown:
        raise CheckpointError(f"{folder}: unknown variables {sorted(unknown)[:8]}")
    for name, source in _TIED.items():
        if name in hf_weights and source in weights:
            if not np.array_equal(hf_weights[name], weights[source]):
                raise CheckpointError(
                    f"{folder}: {name} differs from its tied source; untied MLM output "
                    "weights cannot be represented (the model ties them, as ALBERT does)"
                )
            notes.append(f"{name}: tied copy, checked equal and dropped")
    if config["embedding_size"] == config["hidden_size"]:
        _drop_identity_projection(weights, folder)
    display = {official: hf for official, (hf, _) in names.items()}
    check_official_weights(weights, config, source=str(folder), display_names=display)
    return config, weights, notes


def write_hf_folder(
    config: dict,
    weights: dict[str, np.ndarray],
    directory: str | pathlib.Path,
    *,
    head_tensors: dict[str, np.ndarray] | None = None,
    config_extras: dict | None = None,
) -> pathlib.Path:
    """Writes `config.json` + `model.safetensors` that `AlbertForPreTraining` loads (or
    `AlbertForQuestionAnswering`, when the weights hold the SQuAD span head).

    Args:
        config: dict. The official config.
        weights: dict. Official-named arrays (heads may be absent; HF then initializes them).
        directory: str or Path. Created if absent; files are written under temporary names
            and renamed into place.
        head_tensors: dict or None. HF-named tensors written as they are (a task head:
            `hf_task_heads.write_hf_task`).
        config_extras: dict or None. `config.json` entries over the written ones
            (`architectures`, `id2label`, ...).
    """
    check_official_weights(weights, config, source="weights to write")
    weights = dict(weights)
    if config["embedding_size"] == config["hidden_size"]:
        # HF always has the projection; the identity keeps the function the same.
        weights[_PROJECTION + "kernel"] = np.eye(config["hidden_size"], dtype=np.float32)
        weights[_PROJECTION + "bias"] = np.zeros(config["hidden_size"], np.float32)
    tensors = {}
    for official, (hf, transpose) in official_to_hf_names(config).items():
        if official in weights:
            array = np.asarray(weights[official], np.float32)
            tensors[hf] = np.ascontiguousarray(array.T if transpose else array)
    for name, array in (head_tensors or {}).items():
        tensors[name] = np.ascontiguousarray(array, np.float32)
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with atomic_write.atomic_path(directory / WEIGHTS_NAME) as partial:
        # transformers refuses safetensors files without a "format" entry.
        save_file(tensors, partial, metadata={"format": "pt"})
        # safetensors writes through a private temporary file (mode 0600); give it the mode
        # of its neighbours, as any file this process creates.
        os.chmod(partial, _new_file_mode())
    hf_config = {key: config[key] for key in CONFIG_TO_BACKBONE}
    with_squad = any(name.startswith("cls/squad/") for name in weights)
    hf_config.update(
        architectures=["AlbertForQuestionAnswering" if with_squad else "AlbertForPreTraining"],
        model_type="albert",
        hidden_act="gelu_new",  # HF's name for the official tanh-approximate GELU
        hidden_dropout_prob=config.get("hidden_dropout_prob", 0.0),
        attention_probs_dropout_prob=config.get("attention_probs_dropout_prob", 0.0),
        initializer_range=config.get("initializer_range", 0.02),
        layer_norm_eps=1e-12,
        classifier_dropout_prob=0.1,
        position_embedding_type="absolute",
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
        tie_word_embeddings=True,
    )
    hf_config.update(config_extras or {})
    atomic_write.write_json(directory / "config.json", hf_config, sort_keys=True)
    return directory


def _new_file_mode() -> int:
    """0o666 less the umask: the mode `open()` gives a new file."""
    umask = os.umask(0)  # the only way to read it; set back at once
    os.umask(umask)
    return 0o666 & ~umask


def _read_hf_config(path: pathlib.Path) -> tuple[dict, list[str]]:
    try:
        config = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such config file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(config, dict) or config.get("model_type", "albert") != "albert":
        raise CheckpointError(f"{path}: not an ALBERT config (model_type must be 'albert')")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise CheckpointError(f"{path}: only position_embedding_type='absolute' is supported")
    notes = []
    if str(config.get("hidden_act", "gelu_new")) == "gelu":
        # HF's "gelu" is the exact erf form; the official weights were trained with tanh-GELU.
        notes.append("config.json hidden_act='gelu' (exact in HF): run with tanh-GELU as official")
        config = {**config, "hidden_act": "gelu_new"}
    if abs(float(config.get("layer_norm_eps", 1e-12)) - 1e-12) > 1e-15:
        notes.append(f"config.json layer_norm_eps={config['layer_norm_eps']}: the model uses 1e-12")
    backbone_config_from_official(config, source=str(path))  # validates
    return config, notes


def _without_task_head(hf_weights: dict, notes: list[str]) -> dict:
    """The tensors less a sequence / token classification or multiple-choice head, which is no
    part of the backbone (`hf_task_heads` reads it for the task model's `from_preset`)."""
    head = sorted(name for name in hf_weights if name.startswith(TASK_HEAD))
    if head:
        notes.append(
            f"{', '.join(head)}: a task head, not read here (load the folder with the task "
            "model's from_preset to keep it)"
        )
    return {name: a for name, a in hf_weights.items() if not name.startswith(TASK_HEAD)}


def _refuse_pickled(path: pathlib.Path) -> None:
    raise CheckpointError(
        f"{path}: pickled weights are refused (unpickling can run arbitrary code); "
        "convert them to model.safetensors first"
    )


def _has_safetensors(folder: pathlib.Path) -> bool:
    return (folder / WEIGHTS_NAME).is_file() or (folder / INDEX_NAME).is_file()


def _load_safetensors(path: pathlib.Path) -> dict[str, np.ndarray]:
    if path.is_dir():
        index = path / INDEX_NAME
        if not (path / WEIGHTS_NAME).is_file() and index.is_file():
            try:
                shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            except (json.JSONDecodeError, KeyError, AttributeError) as error:
                raise CheckpointError(f"{index}: not a safetensors index ({error})") from None
            tensors = {}
            for shard in shards:
                tensors.update(_load_safetensors(path / shard))
            return tensors
        path = path / WEIGHTS_NAME
    try:
        return load_file(str(path))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except (SafetensorError, OSError, ValueError) as error:
        raise CheckpointError(f"{path}: corrupt or truncated safetensors file ({error})") from None


def _drop_identity_projection(weights: dict, folder: pathlib.Path) -> None:
    kernel = weights.pop(_PROJECTION + "kernel", None)
    bias = weights.pop(_PROJECTION + "bias", None)
    if kernel is None:
        return
    if not (np.array_equal(kernel, np.eye(len(kernel))) and not np.any(bias)):
        raise CheckpointError(
            f"{folder}: embedding_size == hidden_size but embedding_hidden_mapping_in is not the "
            "identity; the model (as the official code) has no projection when E == H"
        )
