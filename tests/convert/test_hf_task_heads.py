"""HF AlbertFor{SequenceClassification,TokenClassification,MultipleChoice,QuestionAnswering}
folders -> our task models (`from_preset`) -> HF folders again: the same logits as transformers."""

import importlib.util
import json

import numpy as np
import pytest
from convert_helpers import TINY_OFFICIAL_CONFIG, sample_inputs

from albert_keras.convert import export_model
from albert_keras.convert.hf_checkpoint import read_hf_folder
from albert_keras.convert.hf_task_heads import read_hf_task_head
from albert_keras.models import (
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertQuestionAnswerer,
    AlbertTokenClassifier,
)

HAS_TORCH_TRANSFORMERS = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
needs_transformers = pytest.mark.skipif(
    not HAS_TORCH_TRANSFORMERS,
    reason="torch and transformers not installed (make install-hf)",
)
TAGS = ["O", "B-PER", "I-PER"]
# HF class -> (our class, from_preset kwargs, HF config extras)
CASES = {
    "AlbertForSequenceClassification": (AlbertClassifier, {}, {"num_labels": 3}),
    "AlbertForTokenClassification": (
        AlbertTokenClassifier, {}, {"id2label": dict(enumerate(TAGS))},
    ),
    "AlbertForMultipleChoice": (AlbertMultipleChoice, {}, {}),
    "AlbertForQuestionAnswering": (AlbertQuestionAnswerer, {}, {}),
}  # fmt: skip


def _hf_model(architecture, tmp_path):
    """A random tiny HF task model (non-zero head bias), saved by transformers."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = {k: v for k, v in TINY_OFFICIAL_CONFIG.items() if k != "down_scale_factor"}
    config.update(hidden_act="gelu_new", classifier_dropout_prob=0.1, **CASES[architecture][2])
    hf_config = transformers.AlbertConfig(**config)
    model = getattr(transformers, architecture)(hf_config).eval()
    head = model.qa_outputs if architecture == "AlbertForQuestionAnswering" else model.classifier
    with torch.no_grad():
        head.bias.copy_(torch.linspace(-0.5, 0.5, head.bias.shape[0]))
    model.save_pretrained(tmp_path / "hf")
    return model


def _inputs(architecture):
    token_ids, segment_ids, padding_mask, _ = sample_inputs(TINY_OFFICIAL_CONFIG)
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    if architecture == "AlbertForMultipleChoice":  # (examples, options, length): 2 x 2
        inputs = {k: np.concatenate([v, v[::-1]]).reshape(2, 2, -1) for k, v in inputs.items()}
    return inputs


def _hf_logits(model, inputs):
    import torch

    with torch.no_grad():
        out = model(
            input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long),
        )
    if hasattr(out, "start_logits"):
        return [out.start_logits.numpy(), out.end_logits.numpy()]
    return [out.logits.numpy()]


def _our_logits(task, inputs):
    out = task(inputs, training=False)
    if isinstance(out, dict):
        return [np.asarray(out["start_logits"]), np.asarray(out["end_logits"])]
    return [np.asarray(out)]


@needs_transformers
@pytest.mark.parametrize("architecture", list(CASES))
def test_hf_task_folder_loads_into_our_task_and_saves_back(tmp_path, architecture):
    import transformers

    task_class = CASES[architecture][0]
    hf_model = _hf_model(architecture, tmp_path)
    inputs = _inputs(architecture)
    expected = _hf_logits(hf_model, inputs)

    task = task_class.from_preset(str(tmp_path / "hf"))
    assert type(task) is task_class
    for ours, theirs in zip(_our_logits(task, inputs), expected):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)
    if task_class is AlbertTokenClassifier:
        assert task.labels == TAGS
    if task_class is AlbertClassifier:
        assert task.num_classes == 3

    export_model(task, "hf", tmp_path / "back")
    config = json.loads((tmp_path / "back" / "config.json").read_text())
    assert config["architectures"] == [architecture]
    back = getattr(transformers, architecture).from_pretrained(tmp_path / "back").eval()
    for again, theirs in zip(_hf_logits(back, inputs), expected):
        np.testing.assert_allclose(again, theirs, atol=1e-5, rtol=0)
    copy = task_class.from_preset(str(tmp_path / "back"))
    for ours, theirs in zip(_our_logits(copy, inputs), _our_logits(task, inputs)):
        np.testing.assert_array_equal(ours, theirs)


@needs_transformers
def test_a_task_folder_still_converts_as_a_backbone(tmp_path):
    """`convert --source hf` / `AlbertBackbone.from_preset` read the backbone and say the head
    was left out; another task class gets the backbone and a fresh head."""
    _hf_model("AlbertForTokenClassification", tmp_path)
    _, weights, notes = read_hf_folder(tmp_path / "hf")
    assert not any(name.startswith("cls/") for name in weights)
    assert any("classifier.bias, classifier.weight: a task head" in note for note in notes)
    with pytest.raises(ValueError, match="loads into AlbertTokenClassifier, not AlbertClassifier"):
        AlbertClassifier.from_preset(str(tmp_path / "hf"))
    head = read_hf_task_head(tmp_path / "hf")
    assert (head["num_classes"], head["labels"], head["dropout"]) == (3, TAGS, 0.1)
