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
