import json
import os
import stat

import numpy as np
import pytest
from convert_helpers import random_official_weights
from safetensors.numpy import load_file, save_file

from albert_keras.convert.hf_checkpoint import read_hf_folder, write_hf_folder
from albert_keras.convert.official_format import CONFIG_TO_BACKBONE, CheckpointError

PREFIX = "albert.encoder.albert_layer_groups"


def test_round_trip_and_hf_names(tmp_path, official_config, official_weights):
    folder = write_hf_folder(official_config, official_weights, tmp_path / "hf")
    tensors = load_file(str(folder / "model.safetensors"))
    assert len(tensors) == len(official_weights)
    # Torch's (out, in) kernels are the transposes; the SOP kernel is (2, H) in both.
    np.testing.assert_array_equal(
        tensors[f"{PREFIX}.1.albert_layers.1.ffn.weight"],
        official_weights[
            "bert/encoder/transformer/group_1/inner_group_1/ffn_1/intermediate/dense/kernel"
        ].T,
    )
    np.testing.assert_array_equal(
        tensors["sop_classifier.classifier.weight"],
        official_weights["cls/seq_relationship/output_weights"],
    )
    hf_config = json.loads((folder / "config.json").read_text())
    assert hf_config["architectures"] == ["AlbertForPreTraining"]
    assert hf_config["hidden_act"] == "gelu_new"
    assert (hf_config["num_hidden_groups"], hf_config["inner_group_num"]) == (2, 2)

    config, weights, notes = read_hf_folder(folder)
    assert notes == []
    assert {k: config[k] for k in CONFIG_TO_BACKBONE} == {
        k: official_config[k] for k in CONFIG_TO_BACKBONE
    }
    assert sorted(weights) == sorted(official_weights)
    for name, array in official_weights.items():
        np.testing.assert_array_equal(weights[name], array)


def test_tied_copies_are_checked_and_dropped(tmp_path, official_config, official_weights):
    folder = write_hf_folder(official_config, official_weights, tmp_path / "hf")
    tensors = load_file(str(folder / "model.safetensors"))
    tensors["predictions.decoder.weight"] = tensors["albert.embeddings.word_embeddings.weight"]
    tensors["predictions.decoder.bias"] = tensors["predictions.bias"]
    save_file(tensors, str(folder / "model.safetensors"))
    _, weights, notes = read_hf_folder(folder)
    assert len(weights) == len(official_weights) and len(notes) == 2
    tensors["predictions.decoder.weight"] = tensors["predictions.decoder.weight"] + 1.0
    save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(CheckpointError, match="predictions.decoder.weight differs"):
        read_hf_folder(folder)


def test_embedding_equal_to_hidden_writes_an_identity_projection(tmp_path, official_config):
    config = {**official_config, "embedding_size": 16}
    weights = random_official_weights(config)
    folder = write_hf_folder(config, weights, tmp_path / "hf")
    tensors = load_file(str(folder / "model.safetensors"))
    np.testing.assert_array_equal(
        tensors["albert.encoder.embedding_hidden_mapping_in.weight"], np.eye(16)
    )
    _, read, _ = read_hf_folder(folder)
    assert sorted(read) == sorted(weights)
    tensors["albert.encoder.embedding_hidden_mapping_in.bias"][0] = 1.0
    save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(CheckpointError, match="not the identity"):
        read_hf_folder(folder)


def test_wrong_shape_missing_and_unknown_use_hf_names(tmp_path, official_config, official_weights):
    folder = write_hf_folder(official_config, official_weights, tmp_path / "hf")
    path = str(folder / "model.safetensors")
    tensors = load_file(path)
    good = dict(tensors)
    tensors["albert.pooler.weight"] = np.zeros((16, 4), np.float32)
    save_file(tensors, path)
    with pytest.raises(
        CheckpointError, match=r"albert.pooler.weight has shape \(16, 4\), the config implies"
    ):
        read_hf_folder(folder)
    tensors = dict(good)
    del tensors[f"{PREFIX}.0.albert_layers.1.attention.key.bias"]
    save_file(tensors, path)
    with pytest.raises(CheckpointError, match=r"missing variables .*0.albert_layers.1.attention"):
        read_hf_folder(folder)
    # (`classifier.*` is a task head: tests/convert/test_hf_task_heads.py.)
    tensors = dict(good, **{"mystery_head.weight": np.zeros((2, 16), np.float32)})
    save_file(tensors, path)
    with pytest.raises(CheckpointError, match=r"unknown variables \['mystery_head.weight'\]"):
        read_hf_folder(folder)


def test_truncated_safetensors_fails_clearly(tmp_path, official_config, official_weights):
    folder = write_hf_folder(official_config, official_weights, tmp_path / "hf")
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(CheckpointError, match="model.safetensors: corrupt or truncated"):
        read_hf_folder(folder)
    path.write_bytes(b"\x05")
    with pytest.raises(CheckpointError, match="model.safetensors: corrupt or truncated"):
        read_hf_folder(folder)


def test_pickled_bin_is_refused(tmp_path, official_config):
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(official_config))
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    with pytest.raises(CheckpointError, match="pytorch_model.bin: pickled weights are refused"):
        read_hf_folder(folder)
    with pytest.raises(CheckpointError, match="pickled weights are refused"):
        read_hf_folder(folder / "pytorch_model.bin")
    (folder / "pytorch_model.bin").unlink()
    with pytest.raises(FileNotFoundError, match="no model.safetensors"):
        read_hf_folder(folder)


def test_config_must_be_albert(tmp_path, official_config, official_weights):
    folder = write_hf_folder(official_config, official_weights, tmp_path / "hf")
    hf_config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**hf_config, "model_type": "bert"}))
    with pytest.raises(CheckpointError, match="config.json: not an ALBERT config"):
        read_hf_folder(folder)
    (folder / "config.json").write_text(json.dumps({**hf_config, "hidden_act": "gelu"}))
    _, _, notes = read_hf_folder(folder)
    assert "hidden_act='gelu'" in notes[0]


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_written_files_have_the_modes_of_new_files(
    tmp_path, official_config, official_weights, umask
):
    # safetensors wrote model.safetensors as 0600 beside a 0644 config.json.
    old = os.umask(umask)
    try:
        folder = write_hf_folder(official_config, official_weights, tmp_path / "hf")
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == {"config.json": 0o666 & ~umask, "model.safetensors": 0o666 & ~umask}
