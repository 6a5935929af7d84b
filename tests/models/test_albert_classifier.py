import keras
import numpy as np
import pytest
import tensorflow as tf

import albert_keras as ak


@pytest.fixture
def backbone(tiny_config):
    return ak.AlbertBackbone(**tiny_config)


def test_logits_are_float32_even_under_mixed_precision(tiny_config, backbone_inputs):
    backbone = ak.AlbertBackbone(**tiny_config, dtype="mixed_bfloat16")
    logits = ak.AlbertClassifier(backbone, num_classes=3)(backbone_inputs)
    assert logits.shape == (4, 3)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"


def test_head_is_dense_on_pooled_output(backbone, backbone_inputs):
    classifier = ak.AlbertClassifier(backbone, num_classes=3)
    pooled = np.asarray(backbone(backbone_inputs)["pooled_output"])
    kernel, bias = classifier.get_layer("logits").get_weights()
    np.testing.assert_allclose(classifier(backbone_inputs), pooled @ kernel + bias, atol=1e-5)
    assert classifier.count_params() == backbone.count_params() + 16 * 3 + 3


def _repeated(inputs, targets, steps):
    # One epoch of `steps` batches: Keras builds one iterator instead of one per epoch.
    return tf.data.Dataset.from_tensors((inputs, targets)).repeat(steps)


def test_fit_lowers_classification_loss(backbone, backbone_inputs):
    classifier = ak.AlbertClassifier(backbone, num_classes=2)
    classifier.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=False)
    labels = np.array([0, 1, 1, 0])
    before = classifier.evaluate(backbone_inputs, labels, verbose=0, return_dict=True)
    history = classifier.fit(_repeated(backbone_inputs, labels, 15), verbose=0).history
    assert set(history) == {"loss", "accuracy"}
    after = classifier.evaluate(backbone_inputs, labels, verbose=0, return_dict=True)
    assert after["loss"] < 0.5 * before["loss"]
    assert after["accuracy"] == 1.0


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_regression_uses_mean_squared_error(backbone, backbone_inputs):
    regressor = ak.AlbertClassifier(backbone, num_classes=1)
    regressor.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=False)
    assert isinstance(regressor.loss, keras.losses.MeanSquaredError)
    scores = np.array([-0.5, 0.8, 0.1, -0.3], "float32")
    before = regressor.evaluate(backbone_inputs, scores, verbose=0)
    regressor.fit(_repeated(backbone_inputs, scores, 15), verbose=0)
    after = regressor.evaluate(backbone_inputs, scores, verbose=0)
    assert regressor(backbone_inputs).shape == (4, 1)
    assert after < 0.5 * before


def test_save_load_round_trip(tmp_path, backbone, backbone_inputs):
    classifier = ak.AlbertClassifier(backbone, num_classes=3, dropout=0.2)
    classifier.compile()
    path = tmp_path / "classifier.keras"
    classifier.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is ak.AlbertClassifier
    assert (loaded.num_classes, loaded.dropout) == (3, 0.2)
    assert isinstance(loaded.loss, keras.losses.SparseCategoricalCrossentropy)
    np.testing.assert_array_equal(loaded(backbone_inputs), classifier(backbone_inputs))


@pytest.mark.parametrize(
    "override, message",
    [
        ({"num_classes": 0}, "num_classes must be a positive integer"),
        ({"dropout": -0.1}, r"dropout must be in \[0, 1\)"),
    ],
)
def test_bad_arguments_raise(backbone, override, message):
    with pytest.raises(ValueError, match=message):
        ak.AlbertClassifier(backbone, **override)


def test_mixed_policy_survives_save(tmp_path, tiny_config, backbone_inputs):
    classifier = ak.AlbertClassifier(ak.AlbertBackbone(**tiny_config, dtype="mixed_bfloat16"))
    assert classifier.dtype_policy.name == "mixed_bfloat16"  # the backbone's, as keras-hub tasks
    path = tmp_path / "classifier.keras"
    classifier.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.dtype_policy.name == loaded.backbone.dtype_policy.name == "mixed_bfloat16"
    assert loaded.output_dense.dtype_policy.name == "float32"
    assert {v.dtype for v in loaded.weights} == {"float32"}
    np.testing.assert_array_equal(loaded(backbone_inputs), classifier(backbone_inputs))


def test_mixed_float16_compile_scales_the_loss(tiny_config):
    # The classifier reports its backbone's policy, so Keras wraps the optimizer for float16.
    classifier = ak.AlbertClassifier(ak.AlbertBackbone(**tiny_config, dtype="mixed_float16"))
    classifier.compile()
    assert isinstance(classifier.optimizer, keras.optimizers.LossScaleOptimizer)
