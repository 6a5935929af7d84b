import keras
import numpy as np
import pytest
from layer_walk import all_layers
from model_inputs import make_backbone_inputs

import albert_keras as ak

ALBERT_PARAMS = {  # the official configs' counts (docs/design.md; equal to keras-hub's presets)
    "albert_base": 11_683_584,
    "albert_large": 17_683_968,
    "albert_xlarge": 58_724_864,
    "albert_xxlarge": 222_595_584,
}


def _count_without_allocating(preset):
    # Building xxlarge for real takes ~15 s on 2 cores (truncated-normal init of 222M values);
    # inside a StatelessScope with deferred initialization the variables only have shapes.
    with keras.StatelessScope(initialize_variables=False):
        count = ak.AlbertBackbone.from_preset(preset).count_params()
    # Drop the never-initialized variables, or the next StatelessScope exit would fill them:
    # Keras lists them in its global state, which clear_session resets.
    keras.backend.clear_session(free_memory=False)
    return count


def _expected_params(v, e, h, i, layers, groups, inner, sharing, positions=512, segments=2):
    attention = 4 * h * h + 4 * h + 2 * h  # fused qkv + output + LayerNorm
    ffn = 2 * h * i + i + h + 2 * h
    blocks_attention = (groups if sharing in ("all", "attention") else layers) * inner
    blocks_ffn = (groups if sharing in ("all", "ffn") else layers) * inner
    embeddings = (v + positions + segments) * e + 2 * e + (e * h + h if e != h else 0)
    return embeddings + blocks_attention * attention + blocks_ffn * ffn + h * h + h


@pytest.mark.parametrize("preset", list(ALBERT_PARAMS))
def test_official_parameter_counts(preset):
    assert _count_without_allocating(preset) == ALBERT_PARAMS[preset]


@pytest.mark.parametrize("preset, paper_millions", [("bert_base", 108), ("bert_large", 334)])
def test_bert_presets_match_formula_and_paper(preset, paper_millions):
    config = ak.AlbertBackbone.presets[preset]
    count = _count_without_allocating(preset)
    h, layers = config["hidden_dim"], config["num_layers"]
    assert count == _expected_params(30000, h, h, 4 * h, layers, 1, 1, "none")
    assert round(count / 1e6) in (paper_millions, paper_millions + 1)  # paper's Table 1 (108M/334M)


def test_the_tiny_preset_is_the_demo_s_model():
    config = ak.AlbertBackbone.presets["albert_tiny"]
    shape = [config[k] for k in ("num_layers", "hidden_dim", "embedding_dim", "num_heads")]
    assert shape == [2, 128, 64, 2] and config["sharing"] == "all"
    assert _count_without_allocating("albert_tiny") == 2_176_128
    assert _expected_params(30000, 64, 128, 512, 2, 1, 1, "all") == 2_176_128


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn", "none"])
def test_parameter_count_of_each_sharing_mode(tiny_config, sharing):
    backbone = ak.AlbertBackbone(
        **{**tiny_config, "num_layers": 4}, num_groups=2, num_inner_repetitions=2, sharing=sharing
    )
    expected = _expected_params(100, 8, 16, 32, 4, 2, 2, sharing, positions=32)
    assert backbone.count_params() == expected


def test_outputs_and_padding_invariance(tiny_config):
    backbone = ak.AlbertBackbone(**tiny_config)
    inputs = make_backbone_inputs(length=8)
    outputs = backbone(inputs)
    assert outputs["sequence_output"].shape == (4, 8, 16)
    assert outputs["pooled_output"].shape == (4, 16)
    # Append 5 more padding positions holding junk token ids: real positions must not move.
    padded = {
        name: np.concatenate([value, np.full((4, 5), 7 if name == "token_ids" else 0)], axis=1)
        for name, value in inputs.items()
    }
    longer = backbone(padded)
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(
        np.asarray(longer["sequence_output"])[:, :8][real],
        np.asarray(outputs["sequence_output"])[real],
        atol=1e-5,
    )
    np.testing.assert_allclose(longer["pooled_output"], outputs["pooled_output"], atol=1e-5)


def test_outputs_at_positions_equal_the_full_outputs_gathered(tiny_config, backbone_inputs):
    backbone = ak.AlbertBackbone(**tiny_config, num_inner_repetitions=2)
    # Rows 2 and 3 are short (padding from position 8 and 3 on); repeats and position 0 too.
    positions = np.array([[5, 1, 11], [0, 3, 3], [7, 2, 0], [2, 1, 0]], "int32")
    rows = backbone.outputs_at(backbone_inputs, positions)
    full = backbone(backbone_inputs)
    assert rows["sequence_output"].shape == (4, 3, 16)
    np.testing.assert_allclose(
        rows["sequence_output"],
        np.take_along_axis(np.asarray(full["sequence_output"]), positions[..., None], axis=1),
        atol=1e-5,
    )
    np.testing.assert_allclose(rows["pooled_output"], full["pooled_output"], atol=1e-5)


def test_dropout_reaches_every_layer_only_in_training(tiny_config, backbone_inputs):
    backbone = ak.AlbertBackbone(**tiny_config, dropout=0.1)
    inference = backbone(backbone_inputs)["sequence_output"]
    np.testing.assert_array_equal(
        backbone(backbone_inputs, training=False)["sequence_output"], inference
    )
    training = backbone(backbone_inputs, training=True)["sequence_output"]
    assert not np.allclose(training, inference, atol=1e-3)


def test_save_load_round_trip(tmp_path, tiny_config, backbone_inputs):
    backbone = ak.AlbertBackbone(**tiny_config, num_groups=2, sharing="ffn", dropout=0.1)
    path = tmp_path / "backbone.keras"
    backbone.save(path)
    loaded = keras.saving.load_model(path)  # no custom_objects: importing ak registered them
    assert type(loaded) is ak.AlbertBackbone
    assert loaded.get_config() == backbone.get_config()
    for name, value in backbone(backbone_inputs).items():
        np.testing.assert_array_equal(loaded(backbone_inputs)[name], value)


def test_from_preset_applies_overrides():
    with keras.StatelessScope(initialize_variables=False):
        backbone = ak.AlbertBackbone.from_preset(
            "albert_base", num_layers=2, max_sequence_length=64
        )
    keras.backend.clear_session(free_memory=False)  # drops the deferred variables, as above
    config = backbone.get_config()
    assert (config["num_layers"], config["max_sequence_length"]) == (2, 64)
    assert (config["hidden_dim"], config["embedding_dim"], config["sharing"]) == (768, 128, "all")
    assert backbone.token_embedding is backbone.embeddings.token_embedding


@pytest.mark.parametrize(
    "override, message",
    [
        ({"hidden_dim": 18, "num_heads": 4}, "hidden_dim=18 is not divisible by num_heads=4"),
        ({"num_layers": 3, "num_groups": 2}, "num_layers=3 is not divisible by num_groups=2"),
        ({"sharing": "layers"}, "sharing='layers' is not one of"),
        ({"vocabulary_size": 0}, "vocabulary_size must be a positive integer"),
        ({"num_heads": 0}, "num_heads must be a positive integer"),
        ({"intermediate_dim": -1}, "intermediate_dim must be a positive integer"),
        ({"embedding_dim": 0}, "embedding_dim must be a positive integer"),
        ({"max_sequence_length": 0}, "max_sequence_length must be a positive integer"),
        ({"num_groups": 0}, "num_groups must be a positive integer"),
        ({"dropout": 1.2}, r"dropout must be in \[0, 1\)"),
    ],
)
def test_bad_config_raises_value_error(tiny_config, override, message):
    with pytest.raises(ValueError, match=message):
        ak.AlbertBackbone(**{**tiny_config, **override})


def test_unknown_preset_raises():
    with pytest.raises(ValueError, match="unknown preset 'albert_huge'; choose one of"):
        ak.AlbertBackbone.from_preset("albert_huge")


def test_mixed_bfloat16_close_to_float32(tiny_config, backbone_inputs):
    backbone = ak.AlbertBackbone(**tiny_config)
    fast = ak.AlbertBackbone(**tiny_config, dtype="mixed_bfloat16")
    fast.set_weights(backbone.get_weights())
    outputs = fast(backbone_inputs)
    assert keras.backend.standardize_dtype(outputs["sequence_output"].dtype) == "bfloat16"
    assert all(v.dtype == "float32" for v in fast.weights)
    np.testing.assert_allclose(
        np.asarray(outputs["pooled_output"], "float32"),
        backbone(backbone_inputs)["pooled_output"],
        atol=0.05,
    )


def test_mixed_policy_survives_get_config_and_save(tmp_path, tiny_config, backbone_inputs):
    backbone = ak.AlbertBackbone(**tiny_config, dtype="mixed_bfloat16")
    assert backbone.dtype_policy.name == "mixed_bfloat16"
    assert backbone.get_config()["dtype"]["config"]["name"] == "mixed_bfloat16"
    path = tmp_path / "backbone.keras"
    backbone.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.dtype_policy.name == "mixed_bfloat16"
    # Every sublayer computes in bfloat16 on float32 variables, as before saving.
    assert {layer.dtype_policy.name for layer in all_layers(loaded)
            if not isinstance(layer, keras.layers.InputLayer)} == {"mixed_bfloat16"}  # fmt: skip
    assert {v.dtype for v in loaded.weights} == {"float32"}
    outputs = loaded(backbone_inputs)
    assert keras.backend.standardize_dtype(outputs["sequence_output"].dtype) == "bfloat16"
    for name, value in backbone(backbone_inputs).items():
        np.testing.assert_array_equal(outputs[name], value)
