import numpy as np
import pytest
from layer_reference import feed_forward_block, randomize

from albert_keras.layers import FeedForwardBlock


def test_matches_numpy_gelu_ffn_with_post_layer_norm():
    block = FeedForwardBlock(intermediate_dim=12)
    block.build((None, None, 8))
    randomize(block, seed=0)
    x = np.random.default_rng(1).normal(size=(2, 5, 8)).astype("float32")
    weights = {
        "intermediate_kernel": block.intermediate_dense.kernel.numpy(),
        "intermediate_bias": block.intermediate_dense.bias.numpy(),
        "output_kernel": block.output_dense.kernel.numpy(),
        "output_bias": block.output_dense.bias.numpy(),
        "gamma": block.layer_norm.gamma.numpy(),
        "beta": block.layer_norm.beta.numpy(),
    }
    expected = feed_forward_block(x.astype("float64"), weights)
    np.testing.assert_allclose(block(x), expected, atol=1e-5)
    assert block.count_params() == 8 * 12 + 12 + 12 * 8 + 8 + 2 * 8


def test_config_round_trip():
    block = FeedForwardBlock(intermediate_dim=12, dropout=0.2, layer_norm_epsilon=1e-6)
    clone = FeedForwardBlock.from_config(block.get_config())
    assert (clone.intermediate_dim, clone.dropout, clone.layer_norm_epsilon) == (12, 0.2, 1e-6)


@pytest.mark.parametrize("override", [{"intermediate_dim": 0}, {"dropout": 1.5}])
def test_bad_arguments_raise(override):
    with pytest.raises(ValueError, match="intermediate_dim|dropout"):
        FeedForwardBlock(**{"intermediate_dim": 12, **override})
