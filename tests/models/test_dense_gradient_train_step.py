"""Stock Keras optimizers get dense embedding gradients from every model's train step.

The reference: the same model trained by hand with the same stock `keras.optimizers.Adam` fed
gradients densified before it sees them (Adam on dense gradients is textbook Adam). Both
sides run eagerly, so their gradients are the same numbers: the key bias's gradient is zero
up to round-off (softmax ignores it), and Adam would turn different round-off into different
steps of size `learning_rate`.
"""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf
from model_inputs import make_backbone_inputs, make_pretraining_batch

from albert_keras.distill import AlbertDistiller
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertPretrainer,
    AlbertQuestionAnswerer,
)

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="sparse gradients are TensorFlow's"
)
# Two steps: the sparse-gradient error shows in the first (Adam's first moment over the square
# root of its second is `sum(g) / sqrt(sum(g²))` for a repeated row, against `sign(sum(g))`),
# the second runs on the moments the first left, and a weight moves by at most the learning
# rate a step, so the 1e-3 of "trained" below needs two. Each eager step costs ~0.4 s a side.
STEPS, LEARNING_RATE = 2, 1e-3
CONFIG = {
    "vocabulary_size": 20,  # 48 ids in a batch: every id repeats
    "num_layers": 2,
    "num_heads": 2,
    "embedding_dim": 8,
    "hidden_dim": 16,
    "intermediate_dim": 32,
    "max_sequence_length": 16,
}


def backbone():
    return AlbertBackbone(**CONFIG)


def pretraining_batch():
    return make_pretraining_batch(vocabulary_size=CONFIG["vocabulary_size"]), None


def classifier_batch():
    inputs = make_backbone_inputs(vocabulary_size=CONFIG["vocabulary_size"])
    return inputs, np.array([0, 1, 2, 1])


def squad_batch():
    inputs = make_backbone_inputs(vocabulary_size=CONFIG["vocabulary_size"])
    return inputs, {
        "start_positions": np.array([1, 2, 3, 0]),
        "end_positions": np.array([2, 4, 3, 0]),
    }


def distiller():
    teacher = AlbertPretrainer(backbone())
    return AlbertDistiller(teacher, AlbertPretrainer(backbone(), sentence_objective=None))


MODELS = {
    "pretrainer": (lambda: AlbertPretrainer(backbone()), pretraining_batch),
    "classifier": (lambda: AlbertClassifier(backbone(), 3, dropout=0.0), classifier_batch),
    "question_answerer": (lambda: AlbertQuestionAnswerer(backbone()), squad_batch),
    "distiller": (distiller, pretraining_batch),
}


def twins(name):
    """Two copies of one model with the same weights, and a batch for it."""
    make, make_batch = MODELS[name]
    keras.utils.set_random_seed(0)
    model, reference = make(), make()
    reference.set_weights(model.get_weights())
    return model, reference, make_batch()


def weights(model):
    """The trainable values by position (the twins' paths differ in their models' names)."""
    return {i: keras.ops.convert_to_numpy(v) for i, v in enumerate(model.trainable_variables)}


def fitted(model, x, y):
    """`STEPS` steps of `fit`'s train step with stock Adam (each model's default loss)."""
    model.compile(optimizer=keras.optimizers.Adam(LEARNING_RATE), run_eagerly=True)
    for _ in range(STEPS):
        model.train_on_batch(x, y)
    return weights(model)


def by_hand(model, x, y, densify):
    """`STEPS` steps of stock Adam on the tape's gradients, densified first (or not)."""
    optimizer = keras.optimizers.Adam(LEARNING_RATE)
    model.compile(optimizer=optimizer)
    for _ in range(STEPS):
        with tf.GradientTape() as tape:
            y_pred = model(x, training=True)
            loss = model.compute_loss(x=x, y=y, y_pred=y_pred, training=True)
        grads = tape.gradient(loss, model.trainable_variables)
        if densify:
            grads = [None if g is None else tf.convert_to_tensor(g) for g in grads]
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return weights(model)


@functools.cache
def dense_reference(name):
    """(the starting weights, `by_hand` on densified gradients from them): both tests compare
    with it, so it is computed once per model."""
    _, reference, (x, y) = twins(name)
    return weights(reference), by_hand(reference, x, y, densify=True)


def segment_table(model):
    """The index of the 2-row segment embedding (every id repeats in every batch)."""
    paths = [v.path for v in model.trainable_variables]
    return next(i for i, p in enumerate(paths) if p.endswith("segment_embedding/embeddings"))


@pytest.mark.parametrize("name", list(MODELS))
def test_stock_adam_in_fit_equals_adam_on_dense_gradients(name):
    model, _, (x, y) = twins(name)
    start, want = dense_reference(name)
    for p, value in weights(model).items():  # the reference started here too (seeded)
        np.testing.assert_array_equal(value, start[p])
    got = fitted(model, x, y)
    assert got.keys() == want.keys()
    worst = max(np.abs(got[p] - want[p]).max() for p in got)
    assert worst <= 1e-6, worst
    table = segment_table(model)
    assert np.abs(got[table] - start[table]).max() > 1e-3  # trained, not left alone


@pytest.mark.parametrize("name", ["pretrainer", "classifier"])
def test_stock_adam_on_sparse_gradients_is_what_the_check_catches(name):
    """Stock Adam on the sparse gradients the tape gives (the train step before the fix)
    misses the dense reference by far more than 1e-6."""
    _, sparse_model, (x, y) = twins(name)
    sparse, dense = by_hand(sparse_model, x, y, False), dense_reference(name)[1]
    table = segment_table(sparse_model)
    assert np.abs(sparse[table] - dense[table]).max() > 1e-4
