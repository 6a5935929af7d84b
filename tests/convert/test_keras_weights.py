import json

import numpy as np
import pytest
from convert_helpers import pretrainer_outputs, write_tf1_checkpoint_like_official
from reference_albert import albert_forward

import albert_keras as ak
from albert_keras.convert.keras_weights import (
    load_official_weights,
    official_from_model,
    pretrainer_from_official,
)
from albert_keras.convert.official_format import CheckpointError
from albert_keras.convert.tf1_checkpoint import read_tf1_checkpoint


def test_tf1_checkpoint_matches_the_numpy_reference(tmp_path, official_config, official_weights):
    (tmp_path / "albert_config.json").write_text(json.dumps(official_config))
    write_tf1_checkpoint_like_official(official_weights, tmp_path / "model.ckpt-best")
    config, weights, _ = read_tf1_checkpoint(tmp_path)
    pretrainer, fresh = pretrainer_from_official(config, weights)
    assert fresh == []
    assert pretrainer.backbone.num_groups == 2 and pretrainer.backbone.num_inner_repetitions == 2

    ours, (token_ids, segment_ids, padding_mask, positions) = pretrainer_outputs(
        pretrainer, official_config
    )
    expected = albert_forward(
        official_weights, official_config, token_ids, segment_ids, padding_mask, positions
    )
    assert ours["mlm_logits"].shape == (2, 3, 50) and ours["sentence_logits"].shape == (2, 2)
    for name in ("sequence_output", "pooled_output", "mlm_logits", "sentence_logits"):
        np.testing.assert_allclose(ours[name], expected[name], atol=1e-5, rtol=0, err_msg=name)
    # The reference is sensitive to the layout: swapping the two groups changes the output.
    swapped = {
        name.replace("group_0/", "group_X/")
        .replace("group_1/", "group_0/")
        .replace("group_X/", "group_1/"): array
        for name, array in official_weights.items()
    }
    other = albert_forward(swapped, official_config, token_ids, segment_ids, padding_mask)
    assert np.abs(other["sequence_output"] - expected["sequence_output"]).max() > 1e-2


def test_model_to_official_round_trip(official_config, official_weights):
    pretrainer, _ = pretrainer_from_official(official_config, official_weights)
    config, weights = official_from_model(pretrainer)
    assert config["num_hidden_groups"] == 2 and config["inner_group_num"] == 2
    assert sorted(weights) == sorted(official_weights)
    for name, array in official_weights.items():
        np.testing.assert_array_equal(weights[name], array, err_msg=name)


def test_absent_heads_keep_fresh_init(official_config, official_weights):
    for name in [n for n in official_weights if n.startswith(("cls/", "bert/pooler/"))]:
        del official_weights[name]
    pretrainer, fresh = pretrainer_from_official(official_config, official_weights)
    assert fresh == ["pooler", "MLM head", "sentence-order head"]
    np.testing.assert_array_equal(pretrainer.mlm_head.output_bias.numpy(), np.zeros(50))


def test_bert_layout_writes_one_group_per_layer(tiny_config):
    backbone = ak.AlbertBackbone(**{**tiny_config, "sharing": "none", "embedding_dim": 16})
    config, weights = official_from_model(backbone)
    assert config["num_hidden_groups"] == tiny_config["num_layers"]
    assert "bert/encoder/embedding_hidden_mapping_in/kernel" not in weights
    copy = ak.AlbertBackbone(**{**tiny_config, "sharing": "none", "embedding_dim": 16})
    load_official_weights(copy, weights)
    inputs = {
        "token_ids": np.array([[2, 5, 7, 3]], "int32"),
        "segment_ids": np.zeros((1, 4), "int32"),
        "padding_mask": np.ones((1, 4), "int32"),
    }
    np.testing.assert_array_equal(
        np.asarray(copy(inputs)["sequence_output"]), np.asarray(backbone(inputs)["sequence_output"])
    )


def test_partial_sharing_has_no_official_layout(tiny_config):
    backbone = ak.AlbertBackbone(**{**tiny_config, "sharing": "attention"})
    with pytest.raises(CheckpointError, match="sharing='attention' has no official"):
        official_from_model(backbone)


def test_heads_do_not_fit_a_backbone(official_config, official_weights):
    pretrainer, _ = pretrainer_from_official(official_config, official_weights)
    with pytest.raises(CheckpointError, match="no place for .*cls/predictions"):
        load_official_weights(pretrainer.backbone, official_weights)
