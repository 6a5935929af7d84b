"""The question answerer never reads the backbone's pooler: it is out of the trainable set, so
fine-tuning neither warns that it has no gradient nor changes it (issue 30)."""

import warnings

import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer


@pytest.mark.parametrize("head", ["simple", "v2"])
def test_fit_leaves_the_pooler_untouched_without_a_warning(tiny_config, backbone_inputs, head):
    backbone = AlbertBackbone(**tiny_config)
    answerer = AlbertQuestionAnswerer(backbone, head=head, start_n_top=2, end_n_top=2)
    answerer.compile(optimizer=keras.optimizers.Adam(1e-2))
    pooler = [w.path for w in backbone.pooler.weights]
    assert pooler and not set(pooler) & {w.path for w in answerer.trainable_weights}
    assert set(pooler) <= {w.path for w in answerer.non_trainable_weights}
    assert len(answerer.trainable_weights) + len(answerer.non_trainable_weights) == len(
        answerer.weights
    )
    before = {w.path: keras.ops.convert_to_numpy(w) for w in answerer.weights}
    batch = len(backbone_inputs["token_ids"])
    y = {"start_positions": np.ones(batch, "int32"), "end_positions": np.ones(batch, "int32"),
         "is_impossible": np.zeros(batch, "int32")}  # fmt: skip
    x = {**backbone_inputs, "p_mask": np.zeros_like(backbone_inputs["token_ids"]),
         "start_positions": y["start_positions"]}  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answerer.fit(x, y, epochs=1, batch_size=batch, verbose=0)
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "Gradients do not exist" in m], messages
    changed = {w.path for w in answerer.weights
               if not np.array_equal(before[w.path], keras.ops.convert_to_numpy(w))}  # fmt: skip
    assert not changed & set(pooler)
    assert {w.path for w in backbone.trainable_weights} - set(pooler) <= changed  # trained
    # The backbone itself is unchanged: a classifier built on it trains its pooler.
    assert all(w.trainable for w in backbone.pooler.weights)
    assert set(pooler) <= {w.path for w in backbone.trainable_weights}
