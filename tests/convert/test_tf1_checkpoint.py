import json

import numpy as np
import pytest
from convert_helpers import write_tf1_checkpoint_like_official

from albert_keras.convert.official_format import CheckpointError
from albert_keras.convert.tf1_checkpoint import read_tf1_checkpoint, write_tf1_checkpoint


def release_folder(tmp_path, config, weights, **kwargs):
    folder = tmp_path / "albert_tiny"
    folder.mkdir()
    (folder / "albert_config.json").write_text(json.dumps(config))
    write_tf1_checkpoint_like_official(weights, folder / "model.ckpt-best", **kwargs)
    return folder


def test_reads_official_names_and_skips_bookkeeping(tmp_path, official_config, official_weights):
    folder = release_folder(tmp_path, official_config, official_weights)
    config, weights, skipped = read_tf1_checkpoint(folder)
    assert config == official_config
    assert sorted(weights) == sorted(official_weights)
    for name, array in official_weights.items():
        np.testing.assert_array_equal(weights[name], array)
    assert len(skipped) == 3 and "global_step" in skipped
    assert all(name.endswith(("adam_m", "adam_v", "global_step")) for name in skipped)
    # The 2 groups x 2 inner blocks of the layout are all there.
    blocks = {"/".join(name.split("/")[3:5]) for name in weights if "/transformer/" in name}
    assert blocks == {f"group_{g}/inner_group_{i}" for g in (0, 1) for i in (0, 1)}


def test_package_writer_round_trips(tmp_path, official_config, official_weights):
    prefix = write_tf1_checkpoint(official_config, official_weights, tmp_path / "export")
    config, weights, skipped = read_tf1_checkpoint(prefix)
    assert skipped == [] and config["num_hidden_groups"] == 2
    for name, array in official_weights.items():
        np.testing.assert_array_equal(weights[name], array)


def test_missing_variable_is_named(tmp_path, official_config, official_weights):
    name = "bert/encoder/transformer/group_1/inner_group_0/ffn_1/intermediate/dense/bias"
    del official_weights[name]
    folder = release_folder(tmp_path, official_config, official_weights)
    with pytest.raises(CheckpointError, match=f"missing variables {name}"):
        read_tf1_checkpoint(folder)


def test_unknown_variable_is_named(tmp_path, official_config, official_weights):
    official_weights["bert/encoder/transformer/group_2/inner_group_0/LayerNorm/beta"] = np.zeros(
        16, np.float32
    )
    folder = release_folder(tmp_path, official_config, official_weights)
    with pytest.raises(CheckpointError, match="unknown variables .*group_2/inner_group_0"):
        read_tf1_checkpoint(folder)


def test_wrong_shape_names_both_shapes(tmp_path, official_config, official_weights):
    official_weights["bert/pooler/dense/kernel"] = np.zeros((16, 12), np.float32)
    folder = release_folder(tmp_path, official_config, official_weights)
    with pytest.raises(
        CheckpointError, match=r"bert/pooler/dense/kernel has shape \(16, 12\).*implies \(16, 16\)"
    ):
        read_tf1_checkpoint(folder)


def test_partial_head_is_missing_but_absent_head_is_fine(
    tmp_path, official_config, official_weights
):
    sop = {n: official_weights.pop(n) for n in list(official_weights) if n.startswith("cls/seq")}
    folder = release_folder(tmp_path, official_config, official_weights, extra_bookkeeping=False)
    _, weights, _ = read_tf1_checkpoint(folder)
    assert not any(name.startswith("cls/seq") for name in weights)
    del official_weights["cls/predictions/output_bias"]
    official_weights.update(sop)
    (tmp_path / "b").mkdir()
    folder = release_folder(tmp_path / "b", official_config, official_weights)
    with pytest.raises(CheckpointError, match="missing variables cls/predictions/output_bias"):
        read_tf1_checkpoint(folder)


def test_truncated_data_file_fails_clearly(tmp_path, official_config, official_weights):
    folder = release_folder(tmp_path, official_config, official_weights)
    data = folder / "model.ckpt-best.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="model.ckpt-best: unreadable checkpoint"):
        read_tf1_checkpoint(folder)


def test_config_problems(tmp_path, official_config, official_weights):
    folder = release_folder(tmp_path, official_config, official_weights)
    (folder / "albert_config.json").unlink()
    with pytest.raises(FileNotFoundError, match="albert_config.json: no such file; pass --config"):
        read_tf1_checkpoint(folder)
    bad = tmp_path / "bad.json"
    bad.write_text('{"vocab_size": 50,')
    with pytest.raises(CheckpointError, match="bad.json: not valid JSON"):
        read_tf1_checkpoint(folder, config_path=bad)
    bad.write_text(json.dumps({**official_config, "hidden_act": "relu"}))
    with pytest.raises(CheckpointError, match="bad.json: hidden_act='relu' is not supported"):
        read_tf1_checkpoint(folder, config_path=bad)
    bad.write_text(json.dumps({**official_config, "hidden_size": 24}))
    with pytest.raises(
        CheckpointError,
        match=r"mapping_in/kernel has shape \(8, 16\), the config implies \(8, 24\)",
    ):
        read_tf1_checkpoint(folder, config_path=bad)
