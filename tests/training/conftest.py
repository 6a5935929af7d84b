"""Fixtures for the training tests: tiny synthetic pretraining records with a learnable signal."""

import pytest
from synthetic_records import SEQ_LENGTH, VOCABULARY_SIZE, write_synthetic_records


@pytest.fixture(scope="session")
def tiny_records(tmp_path_factory):
    """Two training shards of 512 examples and one eval shard of 64; returns their globs."""
    root = tmp_path_factory.mktemp("records")
    for shard in range(2):
        write_synthetic_records(root / f"train-{shard}.tfrecord", 512, seed=shard)
    write_synthetic_records(root / "eval-0.tfrecord", 64, seed=99)
    return {"train": str(root / "train-*.tfrecord"), "eval": str(root / "eval-*.tfrecord")}


@pytest.fixture
def tiny_overrides():
    """Backbone overrides on top of a preset for a model that trains in seconds."""
    return {
        "vocabulary_size": VOCABULARY_SIZE,
        "num_layers": 2,
        "num_heads": 2,
        "embedding_dim": 16,
        "hidden_dim": 32,
        "intermediate_dim": 64,
        "max_sequence_length": SEQ_LENGTH,
    }
