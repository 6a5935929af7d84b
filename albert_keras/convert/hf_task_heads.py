"""Hugging Face task heads <-> our task models: `AlbertFor{SequenceClassification,
TokenClassification, MultipleChoice, QuestionAnswering}` folders.

A task folder is an ALBERT folder (`hf_checkpoint`) plus one head: `classifier.weight` (outputs,
H) and `classifier.bias` for the three classifiers (1 output for multiple choice),
`qa_outputs.*` for question answering (mapped by `hf_checkpoint` to the official SQuAD head).
`config.json`'s `architectures` names the class; `id2label` the classes' names. The backbone
goes through the shared mapping; only the head, a Dense layer whose torch weight is its
transposed kernel, is mapped here.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

from albert_keras.convert.hf_checkpoint import INDEX_NAME, WEIGHTS_NAME, write_hf_folder
from albert_keras.convert.official_format import POOLER, CheckpointError

# HF architecture -> the name of our task class that holds its head.
HF_TASKS = {
    "AlbertForSequenceClassification": "AlbertClassifier",
    "AlbertForTokenClassification": "AlbertTokenClassifier",
    "AlbertForMultipleChoice": "AlbertMultipleChoice",
    "AlbertForQuestionAnswering": "AlbertQuestionAnswerer",
}
# HF's models without a pooler (`add_pooling_layer=False`): ours is left out when writing.
_NO_POOLER = ("AlbertForTokenClassification", "AlbertForQuestionAnswering")
_HEAD = "classifier"


def hf_task_architecture(folder: str | pathlib.Path) -> str | None:
    """The HF task class a folder's `config.json` names (`AlbertForTokenClassification`, ...),
    or None for any other folder (a pretraining or bare model, a keras-hub preset, a file).

    Example:
    >>> hf_task_architecture("albert_hf/") is None  # an AlbertForPreTraining folder
    True
    """
    config_path = pathlib.Path(folder) / "config.json"
    if not config_path.is_file():
        return None
    try:
        config = json.loads(config_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(config, dict) or "registered_name" in config:  # keras-hub's
        return None
    architectures = config.get("architectures") or []
    return next((name for name in architectures if name in HF_TASKS), None)


def read_hf_task_head(folder: str | pathlib.Path) -> dict:
    """The head of an HF task folder, as our task's constructor and Dense layer take it.

    Returns:
        dict: `architecture`, `task` (our class's name), `kernel` (H, outputs) and `bias`
        (outputs,) float32 arrays, `num_classes`, `labels` (the names of `id2label`, or None
        when they are HF's placeholders `LABEL_0`, ...) and `dropout` (HF's
        `classifier_dropout_prob`).
    """
    folder = pathlib.Path(folder)
    architecture = hf_task_architecture(folder)
    if architecture is None:
        raise CheckpointError(f"{folder}: config.json names no task ({', '.join(HF_TASKS)})")
    config = json.loads((folder / "config.json").read_text())
    name = "qa_outputs" if architecture == "AlbertForQuestionAnswering" else _HEAD
    weight, bias = (_read_tensor(folder, f"{name}.{part}") for part in ("weight", "bias"))
    if weight.ndim != 2 or bias.shape != weight.shape[:1]:
        raise CheckpointError(
            f"{folder}: {name}.weight {weight.shape} and {name}.bias {bias.shape} do not make "
            "a (outputs, hidden) head"
        )
    id2label = config.get("id2label") or {}
    labels = [str(id2label[key]) for key in sorted(id2label, key=int)] if id2label else None
    if labels is not None and (
        len(labels) != len(weight) or labels == [f"LABEL_{i}" for i in range(len(labels))]
    ):
        labels = None
    dropout = config.get("classifier_dropout_prob")
    return {
        "architecture": architecture,
        "task": HF_TASKS[architecture],
        "kernel": np.ascontiguousarray(weight.T, np.float32),
        "bias": np.asarray(bias, np.float32),
        "num_classes": int(weight.shape[0]),
        "labels": labels,
        "dropout": 0.1 if dropout is None else float(dropout),
    }


def task_kwargs(head: dict, kwargs: dict) -> dict:
    """The constructor arguments a task over this head needs: the head's `num_classes` (over
    `from_preset`'s default: the weights fit no other), then the caller's `kwargs`, then the
    folder's `id2label` names and `classifier_dropout_prob`."""
    kwargs = dict(kwargs)
    if head["task"] in ("AlbertClassifier", "AlbertTokenClassifier"):
        kwargs["num_classes"] = head["num_classes"]
        kwargs.setdefault("dropout", head["dropout"])
    if head["task"] == "AlbertTokenClassifier" and head["labels"] is not None:
        kwargs.setdefault("labels", head["labels"])
    if head["task"] == "AlbertMultipleChoice":
        kwargs.setdefault("dropout", head["dropout"])
    if head["task"] == "AlbertQuestionAnswerer" and kwargs.get("head", "simple") != "simple":
        raise ValueError(
            "an AlbertForQuestionAnswering head is the simple span head: head='simple'"
        )
    return kwargs


def load_task_head(task, head: dict) -> None:
    """Assigns a head read by `read_hf_task_head` to `task`'s output layer, in place."""
    if type(task).__name__ != head["task"]:
        raise ValueError(
            f"a {head['architecture']} folder loads into {head['task']}, not {type(task).__name__}"
        )
    layer = _head_layer(task)
    if tuple(layer.kernel.shape) != head["kernel"].shape:
        raise CheckpointError(
            f"the {head['architecture']} head {head['kernel'].shape} does not fit "
            f"{layer.kernel.path} {tuple(layer.kernel.shape)}"
        )
    layer.kernel.assign(head["kernel"])
    layer.bias.assign(head["bias"])


def write_hf_task(task, directory: str | pathlib.Path) -> pathlib.Path:
    """Writes a task model as the HF folder of its class (`AlbertForTokenClassification`
    for an `AlbertTokenClassifier`, ...), which `from_pretrained` and our `from_preset` load.

    Example:
    >>> from albert_keras.models import AlbertClassifier
    >>> backbone = keras.saving.load_model("albert.keras").backbone
    >>> _ = write_hf_task(AlbertClassifier(backbone, num_classes=3), "sst_hf/")
    >>> read_hf_task_head("sst_hf/")["num_classes"]
    3
    """
    from albert_keras.convert.keras_weights import official_from_model

    architecture = next((hf for hf, ours in HF_TASKS.items() if ours == type(task).__name__), None)
    if architecture is None:
        raise ValueError(f"a {type(task).__name__} has no Hugging Face task class")
    if architecture == "AlbertForQuestionAnswering":
        config, weights = official_from_model(task)  # its span head is the official SQuAD one
        tensors = {}
    else:
        config, weights = official_from_model(task.backbone)
        layer = _head_layer(task)
        tensors = {
            f"{_HEAD}.weight": np.asarray(layer.kernel.numpy(), np.float32).T,
            f"{_HEAD}.bias": np.asarray(layer.bias.numpy(), np.float32),
        }
    if architecture in _NO_POOLER:
        weights = {name: a for name, a in weights.items() if not name.startswith(POOLER)}
    labels = getattr(task, "labels", None)
    outputs = len(tensors[f"{_HEAD}.bias"]) if tensors else 2
    names = list(labels) if labels else [f"LABEL_{i}" for i in range(outputs)]
    extras = {
        "architectures": [architecture],
        "classifier_dropout_prob": float(getattr(task, "dropout", 0.1)),
        "id2label": {str(i): name for i, name in enumerate(names)},
        "label2id": {name: i for i, name in enumerate(names)},
    }
    return write_hf_folder(config, weights, directory, head_tensors=tensors, config_extras=extras)


def _head_layer(task):
    layer = getattr(task, "span_head", None) or getattr(task, "output_dense", None)
    if layer is None:
        raise CheckpointError(f"a {type(task).__name__} with no simple output layer to convert")
    return layer


def _read_tensor(folder: pathlib.Path, name: str) -> np.ndarray:
    """One tensor of the folder's safetensors (or of the shard its index names)."""
    from safetensors import SafetensorError, safe_open

    path = folder / WEIGHTS_NAME
    if not path.is_file() and (folder / INDEX_NAME).is_file():
        shard = json.loads((folder / INDEX_NAME).read_text())["weight_map"].get(name)
        path = folder / shard if shard else path
    try:
        with safe_open(str(path), framework="np") as file:
            names = set(file.keys())
            tensor = file.get_tensor(name) if name in names else None
    except (OSError, SafetensorError) as error:
        raise CheckpointError(f"{path}: cannot read {name} ({error})") from None
    if tensor is None:
        raise CheckpointError(f"{path}: no {name} (the task head)")
    return tensor
