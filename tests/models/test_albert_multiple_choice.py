"""AlbertMultipleChoice: one score per (context, option) pair, logits over the options."""

import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone, AlbertMultipleChoice
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer


@pytest.fixture
def chooser(tiny_config, tiny_spm):
    backbone = AlbertBackbone(**tiny_config)
    preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), 16)
    return AlbertMultipleChoice(backbone, preprocessor=preprocessor)


def _choice_inputs(examples=2, options=3, length=10):
    rng = np.random.default_rng(0)
    mask = np.ones((examples, options, length), "int32")
    mask[..., 7:] = 0
    return {
        "token_ids": rng.integers(5, 29, mask.shape).astype("int32") * mask,
        "segment_ids": (np.arange(length) >= 4).astype("int32") * mask,
        "padding_mask": mask,
    }


def test_each_option_is_scored_on_its_own(chooser):
    inputs = _choice_inputs()
    logits = np.asarray(chooser(inputs))
    assert logits.shape == (2, 3)
    head = chooser.output_dense
    for j in range(3):
        pooled = chooser.backbone({k: v[:, j] for k, v in inputs.items()})["pooled_output"]
        expected = np.asarray(pooled) @ head.kernel.numpy()[:, 0] + head.bias.numpy()[0]
        np.testing.assert_allclose(logits[:, j], expected, atol=1e-5)


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_fit_lowers_the_loss_and_scores_accuracy(chooser):
    chooser.compile(optimizer=keras.optimizers.Adam(1e-2))
    inputs, labels = _choice_inputs(examples=4), np.array([0, 1, 2, 0])
    history = chooser.fit(inputs, labels, epochs=8, batch_size=4, verbose=0).history
    assert sorted(history) == ["accuracy", "loss"]
    assert history["loss"][-1] < history["loss"][0]


def test_choose_on_text_and_a_saved_copy_chooses_the_same(chooser, tmp_path):
    contexts = ["the cat sat", "a dog ran"]
    options = [["on the mat", "in the sky"], ["to the park", "on the river"]]
    chosen = chooser.predict((contexts, options))
    encoded = chooser.encode(contexts, options)
    assert encoded["token_ids"].shape == (2, 2, 16)
    logits = np.asarray(chooser(encoded))
    assert [c["choice"] for c in chosen] == np.argmax(logits, -1).tolist()
    assert chosen[1]["option"] == options[1][chosen[1]["choice"]]
    assert sum(chosen[0]["probabilities"]) == pytest.approx(1.0, abs=1e-5)
    chooser.save(tmp_path / "chooser.keras")
    assert (
        keras.saving.load_model(tmp_path / "chooser.keras").predict((contexts, options)) == chosen
    )


def test_options_per_example_must_agree(chooser):
    with pytest.raises(ValueError, match=r"as many options; got \[1, 2\]"):
        chooser.encode(["a", "b"], [["x"], ["y", "z"]])
