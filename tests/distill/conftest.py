"""Fixtures for the distillation tests: the training tests' synthetic records, tiny teachers."""

import pytest
from distill_helpers import make_teacher
from synthetic_records import write_synthetic_records


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
