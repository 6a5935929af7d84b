"""A saved classifier on raw text: one prediction per text, or a GLUE dev split's scores.

What `albert-keras predict` runs. Both go through the classifier's own `AlbertPreprocessor`
(the one it was fine-tuned through and is exported with), so they give what the exported
SavedModel gives.
"""

from __future__ import annotations

import os

import keras
import numpy as np

from albert_keras.glue.glue_metrics import glue_metrics
from albert_keras.glue.glue_tasks import get_glue_task
from albert_keras.glue.tsv_reader import read_glue_tsv


def check_text_classifier(model, source: str = "the model") -> None:
    """Refuses, in one line, a model that cannot classify raw strings.

    Args:
        model: the loaded model.
        source: str. Where it came from (a path), for the message.

    Raises:
        ValueError: not an `AlbertClassifier`, one saved without a preprocessor, or one whose
            preprocessor has more pieces than the model embeds.

    Example:
    >>> check_text_classifier(keras.saving.load_model("albert.keras"), "albert.keras")
    Traceback (most recent call last):
    ...
    ValueError: albert.keras: AlbertPretrainer is not an AlbertClassifier
    """
    if getattr(model, "num_classes", None) is None:
        raise ValueError(f"{source}: {type(model).__name__} is not an AlbertClassifier")
    if getattr(model, "preprocessor", None) is None:
        raise ValueError(
            f"{source}: saved without a preprocessor (made before finetune-glue saved one?), so "
            "it cannot read text: fine-tune it again, or build it with AlbertClassifier(..., "
            "preprocessor=AlbertPreprocessor(AlbertTokenizer('spm.model'), sequence_length))"
        )
    pieces = model.preprocessor.tokenizer.vocabulary_size()
    embedded = model.backbone.get_config()["vocabulary_size"]
    if pieces > embedded:
        raise ValueError(
            f"{source}: its preprocessor's vocabulary has {pieces} pieces but the model embeds "
            f"only {embedded} tokens"
        )


def predict_texts(
    model: keras.Model, texts_a: list[str], texts_b: list[str] | None = None, batch_size: int = 32
) -> list[dict]:
    """One prediction per text (or pair of texts), as JSON-ready dicts.

    Args:
        model: `AlbertClassifier` with a preprocessor.
        texts_a: list of str.
        texts_b: list of str or None. Second segments, one per text, for pair tasks.
        batch_size: int.

    Returns:
        list of dicts: `{"label": class id, "probabilities": [...]}` (the softmax of the
        logits, as the exported SavedModel's `probabilities`), or `{"score": x}` for a
        regression model. A model saved with `label_names` (fine-tuned on your own files)
        answers `{"label": name, "class_id": id, "probabilities": [...]}`, the probabilities
        in `label_names`' order.

    Example:
    >>> from albert_keras.models import AlbertClassifier
    >>> from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    >>> model = AlbertClassifier(  # as finetune-glue saves one: with its preprocessor
    ...     keras.saving.load_model("albert.keras").backbone,
    ...     preprocessor=AlbertPreprocessor(AlbertTokenizer("spm.model"), sequence_length=16))
    >>> [(sorted(p), len(p["probabilities"])) for p in predict_texts(model, ["a film I loved"])]
    [(['label', 'probabilities'], 2)]
    """
    check_text_classifier(model)
    if not texts_a:
        return []
    if texts_b is not None and len(texts_b) != len(texts_a):
        raise ValueError(f"{len(texts_a)} first texts but {len(texts_b)} second texts")
    x = list(texts_a) if texts_b is None else (list(texts_a), list(texts_b))
    logits = np.asarray(model.predict(x, batch_size=batch_size, verbose=0), "float32")
    if model.num_classes == 1:
        return [{"score": float(row[0])} for row in logits]
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
    names = getattr(model, "label_names", None)
    if names is not None:
        return [
            {"label": names[i], "class_id": i, "probabilities": [float(p) for p in row]}
            for i, row in zip(probabilities.argmax(axis=-1).tolist(), probabilities)
        ]
    return [
        {"label": int(row.argmax()), "probabilities": [float(p) for p in row]}
        for row in probabilities
    ]


def score_glue_dev(
    model: keras.Model, task: str, glue_dir: str | os.PathLike, batch_size: int = 32
) -> dict:
    """GLUE's metrics of `model` on each dev split of `task` (MNLI: matched and mismatched).

    Args:
        model: `AlbertClassifier` with a preprocessor, fine-tuned on `task`.
        task: str. A GLUE task name (`"SST-2"`).
        glue_dir: path. GLUE's download (`GLUE_DIR/SST-2/dev.tsv`).
        batch_size: int.

    Returns:
        `{"task", "splits": {split: {"num_examples", "metrics"}}}`.

    Example:
    >>> from albert_keras.models import AlbertClassifier
    >>> from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    >>> model = AlbertClassifier(
    ...     keras.saving.load_model("albert.keras").backbone,
    ...     preprocessor=AlbertPreprocessor(AlbertTokenizer("spm.model"), sequence_length=16))
    >>> scores = score_glue_dev(model, "SST-2", "glue_data")
    >>> scores["splits"]["dev"]["num_examples"], sorted(scores["splits"]["dev"]["metrics"])
    (872, ['accuracy'])
    """
    check_text_classifier(model)
    task = get_glue_task(task)
    if model.num_classes != task.num_classes:
        raise ValueError(
            f"the model has {model.num_classes} output(s) but {task.name} has "
            f"{task.num_classes}: was it fine-tuned on another task?"
        )
    splits = {}
    for split in task.dev_splits:
        dev = read_glue_tsv(glue_dir, task, split)
        x = dev.text_a if dev.text_b is None else (dev.text_a, dev.text_b)
        outputs = model.predict(x, batch_size=batch_size, verbose=0)
        metrics = glue_metrics(task, dev.labels, task.predictions(outputs))
        splits[split] = {"num_examples": len(dev), "metrics": metrics}
    return {"task": task.name, "splits": splits}
