"""keras-hub files (preset folders, .keras files) and our own .keras files as sources."""

import json

import numpy as np
import pytest
from convert_helpers import sample_inputs

import albert_keras as ak
from albert_keras.convert import CheckpointError, load_any_model, read_keras_hub, write_keras_hub


def backbone_outputs(backbone, config):
    token_ids, segment_ids, padding_mask, _ = sample_inputs(
        {"vocab_size": config["vocabulary_size"]}
    )
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    return {name: np.asarray(value) for name, value in backbone(inputs).items()}


@pytest.fixture
def backbone(tiny_config):
    return ak.AlbertBackbone(**tiny_config, num_groups=2, num_inner_repetitions=2)


@pytest.mark.parametrize("name", ["kh_preset", "kh_backbone.keras"])
def test_round_trip_through_keras_hub_files(tmp_path, tiny_config, backbone, name):
    write_keras_hub(backbone, tmp_path / name)
    copy, spm, notes = read_keras_hub(tmp_path / name)
    assert spm is None and notes == []
    assert (copy.num_groups, copy.num_inner_repetitions) == (2, 2)
    expected = backbone_outputs(backbone, tiny_config)
    for key, value in backbone_outputs(copy, tiny_config).items():
        np.testing.assert_array_equal(value, expected[key], err_msg=key)


def test_hf_folder_is_not_a_keras_hub_preset(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "albert"}))
    with pytest.raises(CheckpointError, match="not a keras-hub preset folder .*use --from hf"):
        read_keras_hub(tmp_path)


def test_truncated_preset_weights_fail_clearly(tmp_path, backbone):
    write_keras_hub(backbone, tmp_path / "kh")
    weights = tmp_path / "kh" / "model.weights.h5"
    weights.write_bytes(weights.read_bytes()[:2000])
    with pytest.raises(CheckpointError, match="kh: cannot load with keras-hub"):
        read_keras_hub(tmp_path / "kh")


def test_truncated_keras_file_fails_clearly(tmp_path, backbone):
    backbone.save(tmp_path / "ours.keras")
    assert isinstance(load_any_model(tmp_path / "ours.keras"), ak.AlbertBackbone)
    data = (tmp_path / "ours.keras").read_bytes()
    (tmp_path / "ours.keras").write_bytes(data[: len(data) // 2])
    # One true line (Keras itself says "File not found" of a truncated file).
    with pytest.raises(CheckpointError, match="ours.keras: not a .keras file: not a whole zip"):
        load_any_model(tmp_path / "ours.keras")
    with pytest.raises(CheckpointError, match="ours.keras: not a .keras file: not a whole zip"):
        read_keras_hub(tmp_path / "ours.keras")
