"""Fixtures for the distillation tests: the training tests' synthetic records, tiny teachers."""

import importlib.util
import pathlib

import keras
import pytest

import albert_keras as ak

_spec = importlib.util.spec_from_file_location(
    "training_conftest", pathlib.Path(__file__).parents[1] / "training" / "conftest.py"
)
_training = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_training)
SEQ_LENGTH = _training.SEQ_LENGTH
VOCABULARY_SIZE = _training.VOCABULARY_SIZE
write_synthetic_records = _training.write_synthetic_records

# A 4-layer teacher; students take 2 of its layers.
TEACHER = {
    "vocabulary_size": VOCABULARY_SIZE,
    "num_layers": 4,
    "num_heads": 2,
    "embedding_dim": 8,
    "hidden_dim": 16,
    "intermediate_dim": 32,
    "max_sequence_length": SEQ_LENGTH,
}


def make_teacher(seed=1, **overrides):
    """A randomly initialised teacher `AlbertPretrainer` (SOP head, as a pretraining run's)."""
    keras.utils.set_random_seed(seed)
    return ak.AlbertPretrainer(ak.AlbertBackbone(**{**TEACHER, **overrides}), "sop")


def make_student(seed=2, **overrides):
    keras.utils.set_random_seed(seed)
    config = {**TEACHER, "num_layers": 2, **overrides}
    return ak.AlbertPretrainer(ak.AlbertBackbone(**config), sentence_objective=None)


@pytest.fixture(scope="session")
def distill_records(tmp_path_factory):
    """One training shard of 256 examples and one eval shard of 64; returns their globs."""
    root = tmp_path_factory.mktemp("distill_records")
    write_synthetic_records(root / "train-0.tfrecord", 256, seed=0)
    write_synthetic_records(root / "eval-0.tfrecord", 64, seed=99)
    return {"train": str(root / "train-*.tfrecord"), "eval": str(root / "eval-*.tfrecord")}


@pytest.fixture(scope="session")
def teacher_path(tmp_path_factory):
    """A saved teacher (`model.keras`, as `albert-keras pretrain` writes)."""
    path = tmp_path_factory.mktemp("teacher") / "model.keras"
    make_teacher().save(path)
    return str(path)
