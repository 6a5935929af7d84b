"""`fit` on a dataset prints no Keras warning (issue 46): Keras ignores `shuffle` for a dataset
but warned about its default on every fit, once per fine-tuning and pretraining run."""

import warnings

import numpy as np
import tensorflow as tf

import albert_keras as ak


def _fit_warnings(model, *args, **kwargs) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(*args, verbose=0, **kwargs)
    return [str(w.message) for w in caught]


def test_fit_on_a_dataset_gives_no_shuffle_warning(tiny_config, backbone_inputs):
    classifier = ak.AlbertClassifier(ak.AlbertBackbone(**tiny_config), num_classes=2)
    classifier.compile(optimizer="adam")
    labels = np.array([0, 1, 0, 1])
    dataset = tf.data.Dataset.from_tensor_slices((backbone_inputs, labels)).batch(2)
    assert _fit_warnings(classifier, dataset, epochs=1) == []
    # Asked for, Keras's own behaviour stays: its warning says the request is ignored.
    assert any("shuffle" in m for m in _fit_warnings(classifier, dataset, shuffle=True))
    # Arrays are shuffled as before (Keras's default), and give no warning.
    assert _fit_warnings(classifier, backbone_inputs, labels, batch_size=2) == []
