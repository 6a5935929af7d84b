"""AlbertDistiller: the teacher never changes, the student learns, configs round-trip."""

import keras
import numpy as np
import pytest
from distill_helpers import make_student, make_teacher

import albert_keras as ak
from albert_keras.distill import AlbertDistiller
from pipelines import read_pretraining_records


def test_training_moves_the_student_and_never_the_teacher(distill_records):
    teacher, student = make_teacher(), make_student(hidden_dim=8, intermediate_dim=16)
    distiller = AlbertDistiller(teacher, student)
    # Only the student and the projection train.
    trainable = {id(v) for v in distiller.trainable_variables}
    assert trainable == {id(v) for v in student.trainable_variables + distiller.projection.weights}
    teacher_before = [w.numpy().copy() for w in teacher.weights]
    student_before = [w.numpy().copy() for w in student.weights]
    distiller.compile(optimizer=keras.optimizers.Adam(1e-2))
    data = read_pretraining_records(
        distill_records["train"], 16, max_seq_length=32, max_predictions_per_seq=5, seed=1
    )
    history = distiller.fit(data, steps_per_epoch=15, epochs=2, verbose=0).history
    for before, after in zip(teacher_before, teacher.weights, strict=True):
        np.testing.assert_array_equal(before, after.numpy())
    moved = {
        a.path: not np.array_equal(b, a.numpy())
        for b, a in zip(student_before, student.weights, strict=True)
    }
    # Every student variable learns (the MLM head included) but the pooler, which no term
    # reaches (DistilBERT's student has none; fine-tuning trains it).
    assert moved.pop("pooler/kernel") is False and moved.pop("pooler/bias") is False
    assert all(moved.values()), [path for path, m in moved.items() if not m]
    assert history["loss"][-1] < history["loss"][0]
    assert set(history) == {
        "loss",
        "soft_target_loss",
        "mlm_loss",
        "cosine_loss",
        "mlm_accuracy",
        "teacher_mlm_accuracy",
    }


def test_get_config_round_trip():
    distiller = AlbertDistiller(
        make_teacher(), make_student(), temperature=3.0, mlm_weight=0.5, cosine_positions="tokens"
    )
    config = distiller.get_config()
    copy = AlbertDistiller.from_config(config)
    assert copy.get_config() == config
    assert copy.projection is None  # same width: no projection
    assert copy.teacher.trainable is False


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"temperature": 0}, "temperature=0 must be > 0"),
        ({"soft_target_weight": -1.0}, "each must be >= 0"),
        ({"soft_target_weight": 0, "mlm_weight": 0, "cosine_weight": 0}, "one > 0"),
        ({"cosine_positions": "all"}, "cosine_positions='all'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AlbertDistiller(make_teacher(), make_student(), **kwargs)


def test_the_models_must_be_pretrainers_with_one_vocabulary():
    with pytest.raises(ValueError, match="the teacher must be an AlbertPretrainer"):
        AlbertDistiller(make_teacher().backbone, make_student())
    with pytest.raises(ValueError, match="vocabulary_size=50 differs from the teacher's 100"):
        AlbertDistiller(make_teacher(), make_student(vocabulary_size=50))
    assert isinstance(make_student(), ak.AlbertPretrainer)


def test_masked_outputs_equal_the_full_backbones_gathered():
    # cosine_positions="masked" runs both backbones through `outputs_at` (last block on the
    # masked rows only); the logits and hidden states must equal the full backbones' rows.
    teacher, student = make_teacher(), make_student(hidden_dim=8, intermediate_dim=16)
    distiller = AlbertDistiller(teacher, student)
    rng = np.random.default_rng(5)
    padding_mask = (np.arange(12)[None, :] < np.array([12, 9, 6])[:, None]).astype("int32")
    positions = np.array([[1, 4, 7], [2, 3, 8], [5, 1, 0]])
    batch = {
        "input_ids": rng.integers(5, 100, (3, 12)) * padding_mask,
        "input_mask": padding_mask,
        "segment_ids": (np.arange(12)[None, :] >= 5) * padding_mask,
        "masked_lm_positions": positions,
    }
    outputs = distiller(batch)
    features = ak.models.albert_pretrainer.backbone_inputs(batch)
    index = positions[:, :, None]
    for model, prefix in ((student, "student"), (teacher, "teacher")):
        full = model.backbone(features)["sequence_output"]
        logits = model.mlm_head(full, mask_positions=positions)
        np.testing.assert_allclose(outputs[f"{prefix}_logits"], logits, atol=1e-5)
        rows = np.take_along_axis(np.asarray(full), index, axis=1)
        if prefix == "student":
            rows = distiller.projection(rows)
        np.testing.assert_allclose(outputs[f"{prefix}_hidden"], rows, atol=1e-5)
