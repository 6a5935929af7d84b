"""Ours -> HF folder -> ours, and HF's own AlbertForPreTraining on the exported folder."""

import importlib.util

import numpy as np
import pytest
from convert_helpers import pretrainer_outputs, random_official_weights, sample_inputs

from albert_keras.convert.hf_checkpoint import read_hf_folder, write_hf_folder
from albert_keras.convert.keras_weights import official_from_model, pretrainer_from_official

HAS_TORCH_TRANSFORMERS = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))


@pytest.fixture
def pretrainer(official_config):
    model, _ = pretrainer_from_official(official_config, random_official_weights(official_config))
    return model


def test_ours_to_hf_to_ours_is_identical(tmp_path, pretrainer, official_config):
    write_hf_folder(*official_from_model(pretrainer), tmp_path / "hf")
    copy, fresh = pretrainer_from_official(*read_hf_folder(tmp_path / "hf")[:2])
    assert fresh == []
    ours, _ = pretrainer_outputs(pretrainer, official_config)
    theirs, _ = pretrainer_outputs(copy, official_config)
    for name, value in ours.items():
        np.testing.assert_array_equal(theirs[name], value, err_msg=name)


@pytest.mark.skipif(
    not HAS_TORCH_TRANSFORMERS, reason="torch and transformers not installed (pip install .[hf])"
)
def test_transformers_albert_for_pretraining_matches(tmp_path, pretrainer, official_config):
    import torch
    import transformers

    write_hf_folder(*official_from_model(pretrainer), tmp_path / "hf")
    hf_model = transformers.AlbertForPreTraining.from_pretrained(tmp_path / "hf").eval()
    token_ids, segment_ids, padding_mask, _ = sample_inputs(official_config)
    with torch.no_grad():
        hf_out = hf_model(
            input_ids=torch.tensor(token_ids, dtype=torch.long),
            token_type_ids=torch.tensor(segment_ids, dtype=torch.long),
            attention_mask=torch.tensor(padding_mask, dtype=torch.long),
            output_hidden_states=True,
        )
    # Our pretrainer gathers MLM logits at given positions: ask for every position.
    length = token_ids.shape[1]
    ours, _ = pretrainer_outputs(pretrainer, official_config)
    all_positions = np.tile(np.arange(length, dtype="int32"), (len(token_ids), 1))
    logits = pretrainer(
        {
            "input_ids": token_ids,
            "segment_ids": segment_ids,
            "input_mask": padding_mask,
            "masked_lm_positions": all_positions,
        }
    )
    np.testing.assert_allclose(
        ours["sequence_output"], hf_out.hidden_states[-1].numpy(), atol=1e-4, rtol=0
    )
    np.testing.assert_allclose(
        np.asarray(logits["mlm_logits"]), hf_out.prediction_logits.numpy(), atol=1e-4, rtol=0
    )
    np.testing.assert_allclose(
        np.asarray(logits["sentence_logits"]), hf_out.sop_logits.numpy(), atol=1e-4, rtol=0
    )


def test_keras_hubs_own_hf_loader_reads_our_folder(tmp_path, pretrainer, official_config):
    """An independent reader of HF folders: keras-hub's transformers converter."""
    import keras_hub

    write_hf_folder(*official_from_model(pretrainer), tmp_path / "hf")
    kh_backbone = keras_hub.models.AlbertBackbone.from_preset(str(tmp_path / "hf"))
    token_ids, segment_ids, padding_mask, _ = sample_inputs(official_config)
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    theirs = kh_backbone(inputs)
    ours = pretrainer.backbone(inputs)
    for name in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(
            np.asarray(theirs[name]), np.asarray(ours[name]), atol=1e-5, rtol=0, err_msg=name
        )


@pytest.mark.skipif(
    not HAS_TORCH_TRANSFORMERS, reason="torch and transformers not installed (pip install .[hf])"
)
@pytest.mark.parametrize("architecture", ["AlbertForPreTraining", "AlbertModel"])
def test_folder_written_by_transformers_imports(tmp_path, official_config, architecture):
    import torch
    import transformers

    torch.manual_seed(0)
    hf_config = transformers.AlbertConfig(
        **{k: v for k, v in official_config.items() if k != "down_scale_factor"}
        | {"hidden_act": "gelu_new"}
    )
    hf_model = getattr(transformers, architecture)(hf_config).eval()
    hf_model.save_pretrained(tmp_path / "hf")  # safetensors, tied copies left out
    config, weights, _ = read_hf_folder(tmp_path / "hf")
    pretrainer, fresh = pretrainer_from_official(config, weights)
    expected_fresh = (
        [] if architecture == "AlbertForPreTraining" else ["MLM head", "sentence-order head"]
    )
    assert fresh == expected_fresh
    token_ids, segment_ids, padding_mask, _ = sample_inputs(official_config)
    with torch.no_grad():
        hf_out = hf_model(
            input_ids=torch.tensor(token_ids, dtype=torch.long),
            token_type_ids=torch.tensor(segment_ids, dtype=torch.long),
            attention_mask=torch.tensor(padding_mask, dtype=torch.long),
            output_hidden_states=True,
        )
    ours, _ = pretrainer_outputs(pretrainer, official_config)
    np.testing.assert_allclose(
        ours["sequence_output"], hf_out.hidden_states[-1].numpy(), atol=1e-4, rtol=0
    )
    if architecture == "AlbertModel":
        np.testing.assert_allclose(
            ours["pooled_output"], hf_out.pooler_output.numpy(), atol=1e-4, rtol=0
        )
