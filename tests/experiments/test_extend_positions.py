"""experiments/extend_positions.py: a pretrained model with more positions, the rest unchanged."""

import importlib.util
import pathlib

import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone, AlbertPretrainer

SCRIPT = pathlib.Path(__file__).parents[2] / "experiments" / "extend_positions.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("extend_positions", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def saved_model(tiny_config, tmp_path):
    keras.utils.set_random_seed(0)
    model = AlbertPretrainer(AlbertBackbone(**tiny_config), sentence_objective="sop")
    path = tmp_path / "model.keras"
    model.save(path)
    return model, path


def test_the_position_table_repeats_and_every_other_weight_is_copied(script, saved_model, tmp_path):
    model, path = saved_model
    target = tmp_path / "wider.keras"

    assert script.main([str(path), str(target), "80"]) == 0

    wider = keras.saving.load_model(target)
    assert wider.backbone.get_config()["max_sequence_length"] == 80
    assert wider.sentence_objective == "sop"
    for new, old in zip(wider.weights, model.weights, strict=True):
        new, old = keras.ops.convert_to_numpy(new), keras.ops.convert_to_numpy(old)
        if new.shape[0] == 80:  # the position table: 32 + 32 + 16 rows of the learned one
            np.testing.assert_array_equal(new, np.concatenate([old, old, old[:16]]))
        else:
            np.testing.assert_array_equal(new, old)


def test_a_length_not_above_the_model_s_is_one_line_and_exit_2(
    script, saved_model, tmp_path, capsys
):
    _, path = saved_model

    assert script.main([str(path), str(tmp_path / "out.keras"), "32"]) == 2

    error = capsys.readouterr().err
    assert error == f"{path}: max_sequence_length 32 is not above the model's 32\n"
    assert not (tmp_path / "out.keras").exists()
