import numpy as np
import pytest
from layer_reference import randomize

from albert_keras.layers import SharedEncoder

HIDDEN, INTERMEDIATE, LAYERS, GROUPS, INNER = 8, 12, 4, 2, 2
# Layer l uses group l * G // L: with L = 4 and G = 2, layers 0-1 use group 0, layers 2-3 group 1.
GROUP_OF_LAYER = [0, 0, 1, 1]
ATTENTION_PARAMS = 4 * HIDDEN * HIDDEN + 4 * HIDDEN + 2 * HIDDEN
FFN_PARAMS = 2 * HIDDEN * INTERMEDIATE + INTERMEDIATE + HIDDEN + 2 * HIDDEN
# (attention shared?, FFN shared?) for each mode of the paper's Table 4.
SHARED_HALVES = {
    "all": (True, True),
    "attention": (True, False),
    "ffn": (False, True),
    "none": (False, False),
}


def _encoder(sharing, seed=0):
    encoder = SharedEncoder(
        LAYERS, 2, INTERMEDIATE, num_groups=GROUPS, num_inner_repetitions=INNER, sharing=sharing
    )
    encoder.build((None, None, HIDDEN))
    randomize(encoder, seed, scale=0.3)
    return encoder


def _owner(shared, layer):
    return f"group_{GROUP_OF_LAYER[layer]}" if shared else f"layer_{layer}"


@pytest.mark.parametrize("sharing", list(SHARED_HALVES))
def test_parameter_count_matches_formula(sharing):
    attention_shared, ffn_shared = SHARED_HALVES[sharing]
    num_attention = (GROUPS if attention_shared else LAYERS) * INNER
    num_ffn = (GROUPS if ffn_shared else LAYERS) * INNER
    encoder = _encoder(sharing)
    assert len(encoder.attention_blocks) == num_attention
    assert len(encoder.feedforward_blocks) == num_ffn
    assert encoder.count_params() == num_attention * ATTENTION_PARAMS + num_ffn * FFN_PARAMS
    # Shared means one variable object, not copies.
    assert len({id(v) for v in encoder.weights}) == len(encoder.weights)


@pytest.mark.parametrize("sharing", list(SHARED_HALVES))
def test_layers_route_to_the_right_blocks(sharing):
    attention_shared, ffn_shared = SHARED_HALVES[sharing]
    encoder = _encoder(sharing)
    blocks = {b.name: b for b in encoder.attention_blocks + encoder.feedforward_blocks}
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, HIDDEN)).astype("float32")
    padding_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], "int32")
    attention_mask = padding_mask.astype(bool)[:, None, None, :]
    expected = x
    for layer in range(LAYERS):
        for inner in range(INNER):
            attention = blocks[f"{_owner(attention_shared, layer)}_inner_{inner}_attention"]
            ffn = blocks[f"{_owner(ffn_shared, layer)}_inner_{inner}_ffn"]
            expected = ffn(attention(expected, attention_mask=attention_mask))
    np.testing.assert_allclose(encoder(x, padding_mask=padding_mask), expected, atol=1e-5)


def test_config_round_trip_builds_same_structure():
    encoder = _encoder("attention")
    clone = SharedEncoder.from_config(encoder.get_config())
    clone.build((None, None, HIDDEN))
    assert clone.get_config() == encoder.get_config()
    assert [v.path for v in clone.weights] == [v.path for v in encoder.weights]


@pytest.mark.parametrize(
    "override, message",
    [
        ({"num_groups": 3}, "num_layers=4 is not divisible by num_groups=3"),
        ({"sharing": "some"}, "sharing='some' is not one of"),
        ({"num_layers": 0}, "num_layers must be a positive integer"),
        ({"num_inner_repetitions": 0}, "num_inner_repetitions must be a positive integer"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
    ],
)
def test_bad_config_raises(override, message):
    config = {"num_layers": 4, "num_heads": 2, "intermediate_dim": 12, **override}
    with pytest.raises(ValueError, match=message):
        SharedEncoder(**config)


@pytest.mark.parametrize("sharing", ["all", "none"])
def test_output_positions_equal_the_full_output_gathered(sharing):
    # L4 with two inner repetitions: only the last layer's second block is computed sparsely.
    encoder = _encoder(sharing)
    x = np.random.default_rng(2).normal(size=(2, 5, HIDDEN)).astype("float32")
    padding_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], "int32")
    positions = np.array([[0, 4, 1], [0, 2, 2]], "int32")
    rows = encoder(x, padding_mask=padding_mask, output_positions=positions)
    assert tuple(rows.shape) == (2, 3, HIDDEN)
    full = np.asarray(encoder(x, padding_mask=padding_mask))
    expected = np.take_along_axis(full, positions[..., None], axis=1)
    np.testing.assert_allclose(rows, expected, atol=1e-5, rtol=1e-5)
