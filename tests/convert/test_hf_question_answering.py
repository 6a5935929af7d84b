"""HF's AlbertForQuestionAnswering <-> our AlbertQuestionAnswerer (simple head): qa_outputs."""

import importlib.util

import numpy as np
import pytest
from convert_helpers import random_official_weights, sample_inputs
from safetensors.numpy import load_file

from albert_keras.convert import CheckpointError
from albert_keras.convert.hf_checkpoint import read_hf_folder, write_hf_folder
from albert_keras.convert.keras_weights import official_from_model, question_answerer_from_official
from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer

HAS_TORCH_TRANSFORMERS = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))


def _logits(answerer, config):
    token_ids, segment_ids, padding_mask, _ = sample_inputs(config)
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    out = answerer.predict(inputs, verbose=0)
    return out["start_logits"], out["end_logits"]


def test_ours_to_hf_to_ours(tmp_path, official_config):
    weights = random_official_weights(official_config)
    weights["cls/squad/output_weights"] = (
        np.random.default_rng(1).normal(size=(2, official_config["hidden_size"])).astype("float32")
    )
    weights["cls/squad/output_bias"] = np.array([0.3, -0.2], "float32")
    answerer, fresh = question_answerer_from_official(official_config, weights)
    assert fresh == []
    np.testing.assert_array_equal(
        answerer.span_head.kernel.numpy().T, weights["cls/squad/output_weights"]
    )
    folder = write_hf_folder(*official_from_model(answerer), tmp_path / "hf")
    tensors = load_file(str(folder / "model.safetensors"))
    np.testing.assert_array_equal(tensors["qa_outputs.weight"], weights["cls/squad/output_weights"])
    assert '"AlbertForQuestionAnswering"' in (folder / "config.json").read_text()
    copy, fresh = question_answerer_from_official(*read_hf_folder(folder)[:2])
    assert fresh == []
    for ours, theirs in zip(_logits(answerer, official_config), _logits(copy, official_config)):
        np.testing.assert_array_equal(ours, theirs)
    # A partial head is refused, as any optional part.
    del weights["cls/squad/output_bias"]
    with pytest.raises(CheckpointError, match="missing variables cls/squad/output_bias"):
        question_answerer_from_official(official_config, weights)


def test_the_v2_head_is_refused(official_config):
    from albert_keras.convert.official_format import backbone_config_from_official

    backbone = AlbertBackbone(**backbone_config_from_official(official_config))
    with pytest.raises(CheckpointError, match="v2 SQuAD head has no Hugging Face"):
        official_from_model(AlbertQuestionAnswerer(backbone, head="v2"))


@pytest.mark.skipif(
    not HAS_TORCH_TRANSFORMERS, reason="torch and transformers not installed (pip install .[hf])"
)
def test_transformers_albert_for_question_answering_matches(tmp_path, official_config):
    """A randomly initialized HF AlbertForQuestionAnswering, saved by transformers, imported:
    the same start / end logits within 1e-4; and ours exported loads back into HF."""
    import torch
    import transformers

    torch.manual_seed(0)
    hf_config = transformers.AlbertConfig(
        **{k: v for k, v in official_config.items() if k != "down_scale_factor"}
        | {"hidden_act": "gelu_new"}
    )
    hf_model = transformers.AlbertForQuestionAnswering(hf_config).eval()
    with torch.no_grad():  # a non-zero bias, so its mapping is checked too
        hf_model.qa_outputs.bias.copy_(torch.tensor([0.5, -0.25]))
    hf_model.save_pretrained(tmp_path / "hf")
    config, weights, _ = read_hf_folder(tmp_path / "hf")
    answerer, fresh = question_answerer_from_official(config, weights)
    assert fresh == ["bert/pooler/dense/bias", "bert/pooler/dense/kernel"]  # HF's QA has none
    token_ids, segment_ids, padding_mask, _ = sample_inputs(official_config)
    with torch.no_grad():
        hf_out = hf_model(
            input_ids=torch.tensor(token_ids, dtype=torch.long),
            token_type_ids=torch.tensor(segment_ids, dtype=torch.long),
            attention_mask=torch.tensor(padding_mask, dtype=torch.long),
        )
    start, end = _logits(answerer, official_config)
    np.testing.assert_allclose(start, hf_out.start_logits.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(end, hf_out.end_logits.numpy(), atol=1e-4, rtol=0)

    write_hf_folder(*official_from_model(answerer), tmp_path / "back")
    back = transformers.AlbertForQuestionAnswering.from_pretrained(tmp_path / "back").eval()
    with torch.no_grad():
        again = back(
            input_ids=torch.tensor(token_ids, dtype=torch.long),
            token_type_ids=torch.tensor(segment_ids, dtype=torch.long),
            attention_mask=torch.tensor(padding_mask, dtype=torch.long),
        )
    np.testing.assert_allclose(again.start_logits.numpy(), hf_out.start_logits.numpy(), atol=1e-5)
