"""`autotune_off`: the same elements, the dataset's other options kept, no autotuning."""

import numpy as np
import tensorflow as tf

from albert_keras.models.text_inputs import TextInputs
from albert_keras_contracts.autotune_off import autotune_off


def test_same_elements_and_other_options_kept():
    options = tf.data.Options()
    options.deterministic = False
    dataset = tf.data.Dataset.range(10).map(lambda x: x * 3, num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.with_options(options).prefetch(tf.data.AUTOTUNE)
    off = autotune_off(dataset)
    assert dataset.options().autotune.enabled is None  # tf.data's default: on
    assert off.options().autotune.enabled is False and off.options().deterministic is False
    assert sorted(int(x) for x in off) == sorted(int(x) for x in dataset) == list(range(0, 30, 3))


def test_tiny_classifier_reads_text_through_a_pipeline_without_autotuning(tiny_spm):
    from albert_keras.models import AlbertBackbone, AlbertClassifier
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

    preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), sequence_length=16)
    backbone = AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8,
                              hidden_dim=16, intermediate_dim=32, max_sequence_length=16)  # fmt: skip
    model = AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor)
    assert isinstance(model, TextInputs)
    texts = np.array(["a b c", "d e", "f"])
    for x in (texts, tf.data.Dataset.from_tensor_slices(texts).batch(2)):
        dataset = model._text_dataset(x, None, None, 2)
        assert dataset.options().autotune.enabled is False
    assert model.predict(texts, verbose=0).shape == (3, 2)
    # Arrays too go through a pipeline without autotuning: batches of 32, the last one partial,
    # as Keras would make them.
    ids = {k: v.numpy() for k, v in preprocessor(tf.constant(["a b c d"] * 70)).items()}
    np.testing.assert_allclose(
        model.predict(ids, verbose=0), model(ids, training=False).numpy(), rtol=1e-5, atol=1e-6
    )
