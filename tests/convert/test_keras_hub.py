import keras
import keras_hub
import numpy as np
import pytest

import albert_keras as ak
from albert_keras.convert.keras_hub import backbone_from_keras_hub, backbone_to_keras_hub

TINY = {
    "vocabulary_size": 100,
    "num_heads": 2,
    "embedding_dim": 8,
    "hidden_dim": 16,
    "intermediate_dim": 32,
    "max_sequence_length": 32,
}


def _inputs():
    rng = np.random.default_rng(0)
    padding_mask = np.array([[1] * 10, [1] * 6 + [0] * 4, [1] * 3 + [0] * 7], "int32")
    return {
        "token_ids": rng.integers(0, 100, (3, 10)).astype("int32"),
        "segment_ids": rng.integers(0, 2, (3, 10)).astype("int32"),
        "padding_mask": padding_mask,
    }


def _randomize(model, seed):
    # Large random values everywhere (LayerNorms and biases too), so a misplaced weight shows.
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0.0, 0.5, variable.shape).astype("float32"))


@pytest.mark.parametrize("num_groups, num_inner_repetitions", [(1, 1), (2, 1), (2, 2)])
def test_outputs_equal_keras_hub_after_copying_its_weights(num_groups, num_inner_repetitions):
    kh_backbone = keras_hub.models.AlbertBackbone(
        **TINY,
        num_layers=4,
        num_groups=num_groups,
        num_inner_repetitions=num_inner_repetitions,
    )
    _randomize(kh_backbone, seed=num_groups * 10 + num_inner_repetitions)
    backbone = backbone_from_keras_hub(kh_backbone)
    assert backbone.count_params() == kh_backbone.count_params()
    inputs = _inputs()
    expected, actual = kh_backbone(inputs), backbone(inputs)
    for name in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(actual[name], expected[name], atol=1e-5, err_msg=name)

    # And back: every keras-hub weight is restored exactly.
    exported = backbone_to_keras_hub(backbone)
    for original, restored in zip(kh_backbone.weights, exported.weights, strict=True):
        assert original.path == restored.path
        np.testing.assert_array_equal(restored.numpy(), original.numpy())


def test_albert_base_parameter_count_equals_keras_hub():
    config = {**ak.AlbertBackbone.presets["albert_base"]}
    del config["sharing"]
    with keras.StatelessScope(initialize_variables=False):
        ours = ak.AlbertBackbone.from_preset("albert_base").count_params()
        theirs = keras_hub.models.AlbertBackbone(**config).count_params()
    # Shapes only (no 11M-value initialization); then forget the deferred variables (Keras
    # keeps them in its global state, which clear_session resets).
    keras.backend.clear_session(free_memory=False)
    assert ours == theirs == 11_683_584


def test_unshared_backbone_without_projection_exports_per_layer_groups():
    # BERT-style (E == H, sharing "none"): one keras-hub group per layer, identity projection.
    backbone = ak.AlbertBackbone(
        **{**TINY, "embedding_dim": 16}, num_layers=2, num_groups=2, sharing="none"
    )
    _randomize(backbone, seed=3)
    kh_backbone = backbone_to_keras_hub(backbone)
    assert kh_backbone.num_groups == 2
    inputs = _inputs()
    np.testing.assert_allclose(
        kh_backbone(inputs)["sequence_output"], backbone(inputs)["sequence_output"], atol=1e-5
    )
    back = backbone_from_keras_hub(kh_backbone)
    assert back.embeddings.projection is None


def test_grouped_sharing_that_keras_hub_cannot_express_raises():
    backbone = ak.AlbertBackbone(**TINY, num_layers=4, num_groups=2, sharing="attention")
    with pytest.raises(ValueError, match="converts only with num_groups == num_layers"):
        backbone_to_keras_hub(backbone)


def test_non_identity_projection_with_equal_widths_raises():
    kh_backbone = keras_hub.models.AlbertBackbone(**{**TINY, "embedding_dim": 16}, num_layers=2)
    with pytest.raises(ValueError, match="projection is not the identity"):
        backbone_from_keras_hub(kh_backbone)


def test_a_keras_hub_weight_the_converter_cannot_find_is_named():
    # keras-hub's weights are found by their public paths; another layout fails by name.
    from albert_keras.convert.keras_hub import _keras_hub_weight

    kh_backbone = keras_hub.models.AlbertBackbone(**TINY, num_layers=2)
    kh_block = kh_backbone.transformer_layers[0][0]
    assert _keras_hub_weight(kh_block, "self_attention_layer/query/kernel").shape == (16, 2, 8)
    with pytest.raises(ValueError, match="0 weights named 'self_attention_layer/q/kernel'"):
        _keras_hub_weight(kh_block, "self_attention_layer/q/kernel")
    with pytest.raises(ValueError, match="lays out its weights differently"):
        _keras_hub_weight(kh_backbone, "kernel")  # one per Dense: ambiguous
