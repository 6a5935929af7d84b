"""Each loss term against a NumPy reference, alone and inside AlbertDistiller on a fixed batch."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from distill_helpers import make_student, make_teacher

from albert_keras.distill import AlbertDistiller
from albert_keras.distill.distillation_losses import (
    cosine_distance,
    soft_target_cross_entropy,
    weighted_mean,
)
from pipelines import read_pretraining_records


def np_log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def np_soft_ce(student, teacher, temperature):
    targets = np.exp(np_log_softmax(teacher / temperature))
    return -(temperature**2) * (targets * np_log_softmax(student / temperature)).sum(-1)


def np_cosine(student, teacher):
    dot = (student * teacher).sum(-1)
    return 1 - dot / (np.linalg.norm(student, axis=-1) * np.linalg.norm(teacher, axis=-1))


def np_weighted_mean(values, weights):
    return (values * weights).sum() / (weights.sum() + 1e-5)


@pytest.mark.parametrize("temperature", [1.0, 2.0, 5.0])
def test_soft_target_cross_entropy(temperature):
    rng = np.random.default_rng(0)
    student, teacher = rng.normal(size=(2, 3, 4, 50)).astype("float32") * 3
    got = keras.ops.convert_to_numpy(soft_target_cross_entropy(student, teacher, temperature))
    np.testing.assert_allclose(got, np_soft_ce(student, teacher, temperature), rtol=1e-5)
    # Against itself it is the teacher's entropy (KL 0) times T^2, and its minimum over students.
    self_ce = keras.ops.convert_to_numpy(soft_target_cross_entropy(teacher, teacher, temperature))
    assert np.all(self_ce <= got + 1e-4)


def test_soft_target_gradient_reaches_the_student_only():
    student = tf.Variable(np.random.default_rng(1).normal(size=(4, 10)).astype("float32"))
    teacher = tf.Variable(np.random.default_rng(2).normal(size=(4, 10)).astype("float32"))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(soft_target_cross_entropy(student, teacher, 2.0))
    d_student, d_teacher = tape.gradient(loss, [student, teacher])
    assert d_teacher is None
    # d/ds of T^2 CE(p_t, softmax(s/T)) is T (softmax(s/T) - p_t).
    want = 2.0 * (tf.nn.softmax(student / 2.0) - tf.nn.softmax(teacher / 2.0))
    np.testing.assert_allclose(d_student.numpy(), want.numpy(), atol=1e-6)


def test_cosine_distance():
    rng = np.random.default_rng(3)
    student, teacher = rng.normal(size=(2, 5, 7, 16)).astype("float32")
    got = keras.ops.convert_to_numpy(cosine_distance(student, teacher))
    np.testing.assert_allclose(got, np_cosine(student, teacher), atol=1e-6)
    same = keras.ops.convert_to_numpy(cosine_distance(student, 3 * student))
    np.testing.assert_allclose(same, 0.0, atol=1e-6)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(cosine_distance(student, -student)), 2.0)


def test_weighted_mean():
    values = np.array([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]], "float32")
    weights = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]], "float32")
    assert float(weighted_mean(values, weights)) == pytest.approx(2.5, rel=1e-5)
    assert float(weighted_mean(values, np.zeros_like(weights))) == 0.0  # no prediction: finite


def test_soft_target_rejects_a_bad_temperature():
    with pytest.raises(ValueError, match="temperature=0"):
        soft_target_cross_entropy(np.zeros((1, 2)), np.zeros((1, 2)), 0)


@pytest.fixture(scope="module")
def fixed_batch(distill_records):
    """The eval records' first batch of 8, read once for the module's distillers."""
    records = distill_records["eval"]
    dataset = read_pretraining_records(
        records, 8, max_seq_length=32, max_predictions_per_seq=5, shuffle=False, repeat=False
    )
    return next(iter(dataset))


def np_hidden(backbone, batch):
    outputs = backbone(
        {
            "token_ids": tf.cast(batch["input_ids"], "int32"),
            "segment_ids": tf.cast(batch["segment_ids"], "int32"),
            "padding_mask": tf.cast(batch["input_mask"], "int32"),
        }
    )
    return outputs["sequence_output"].numpy()


@pytest.mark.parametrize(
    "student_overrides, cosine_positions",
    [({}, "masked"), ({}, "tokens"), ({"hidden_dim": 8, "intermediate_dim": 16}, "masked")],
    ids=["same-width", "all-tokens", "narrower-projected"],
)
def test_distiller_terms_on_a_fixed_batch(fixed_batch, student_overrides, cosine_positions):
    teacher, student = make_teacher(), make_student(**student_overrides)
    distiller = AlbertDistiller(
        teacher, student, temperature=2.0, cosine_positions=cosine_positions
    )
    distiller.compile(optimizer="sgd")
    batch = fixed_batch
    logs = distiller.test_on_batch(batch, return_dict=True)

    # The reference: the two pretrainers' own outputs and NumPy.
    student_logits = student(batch)["mlm_logits"].numpy()
    teacher_logits = teacher(batch)["mlm_logits"].numpy()
    weights = batch["masked_lm_weights"].numpy()
    labels = batch["masked_lm_ids"].numpy()
    positions = batch["masked_lm_positions"].numpy()
    soft = np_weighted_mean(np_soft_ce(student_logits, teacher_logits, 2.0), weights)
    log_probs = np_log_softmax(student_logits)
    mlm = np_weighted_mean(-np.take_along_axis(log_probs, labels[..., None], -1)[..., 0], weights)
    h_student, h_teacher = np_hidden(student.backbone, batch), np_hidden(teacher.backbone, batch)
    if distiller.projection is not None:
        kernel, bias = (w.numpy() for w in distiller.projection.weights)
        h_student = h_student @ kernel + bias
    if cosine_positions == "masked":
        h_student = np.take_along_axis(h_student, positions[..., None], 1)
        h_teacher = np.take_along_axis(h_teacher, positions[..., None], 1)
        cosine_weights = weights
    else:
        cosine_weights = batch["input_mask"].numpy().astype("float32")
    cosine = np_weighted_mean(np_cosine(h_student, h_teacher), cosine_weights)

    assert logs["soft_target_loss"] == pytest.approx(soft, rel=1e-4)
    assert logs["mlm_loss"] == pytest.approx(mlm, rel=1e-4)
    assert logs["cosine_loss"] == pytest.approx(cosine, rel=1e-4)
    assert logs["loss"] == pytest.approx(5 * soft + 2 * mlm + cosine, rel=1e-4)
    hits = np.take_along_axis(teacher_logits, labels[..., None], -1)[..., 0] >= teacher_logits.max(
        -1
    )
    assert logs["teacher_mlm_accuracy"] == pytest.approx(np_weighted_mean(hits, weights), abs=1e-5)
