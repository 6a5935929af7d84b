"""Fixtures for the model tests: seeded Keras and tiny inputs (see model_inputs.py)."""

import keras
import pytest
from model_inputs import make_backbone_inputs, make_pretraining_batch


@pytest.fixture(autouse=True)
def seeded_keras():
    """Same initial weights and dropout masks on every run, so fit thresholds cannot flake."""
    keras.utils.set_random_seed(1234)


@pytest.fixture
def backbone_inputs():
    return make_backbone_inputs()


@pytest.fixture
def pretraining_batch():
    return make_pretraining_batch()
