"""An MLM-only pretrainer never reads the backbone's pooler: it is out of the trainable set, so
pretraining neither warns that it has no gradient nor changes it (the study's no-sentence-objective
cells warned on every run; issue 46). With a sentence head the pooler trains, as before."""

import warnings

import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone, AlbertPretrainer


@pytest.mark.parametrize("objective", [None, "sop"])
def test_the_pooler_trains_only_under_a_sentence_head(tiny_config, pretraining_batch, objective):
    backbone = AlbertBackbone(**tiny_config)
    pretrainer = AlbertPretrainer(backbone, sentence_objective=objective)
    pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=False)
    pooler = {w.path for w in backbone.pooler.weights}
    trainable = {w.path for w in pretrainer.trainable_weights}
    assert pooler and (pooler <= trainable) == (objective is not None)
    assert len(pretrainer.trainable_weights) + len(pretrainer.non_trainable_weights) == len(
        pretrainer.weights
    )
    before = {w.path: keras.ops.convert_to_numpy(w) for w in backbone.pooler.weights}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pretrainer.fit(pretraining_batch, batch_size=4, epochs=1, verbose=0)
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "Gradients do not exist" in m], messages
    changed = {w.path for w in backbone.pooler.weights
               if not np.array_equal(before[w.path], keras.ops.convert_to_numpy(w))}  # fmt: skip
    assert changed == (pooler if objective else set())
    assert all(w.trainable for w in backbone.pooler.weights)  # the backbone itself unchanged
