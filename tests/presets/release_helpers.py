"""A small pretrainer with random weights for the release tarball (tests/release_tarball.py)."""

import keras
import numpy as np

from albert_keras.models import AlbertBackbone, AlbertPretrainer


def tiny_pretrainer(vocabulary_size, seed=7):
    """A small ALBERT with random (seeded) weights, heads included."""
    keras.utils.set_random_seed(seed)
    backbone = AlbertBackbone(
        vocabulary_size=vocabulary_size,
        num_layers=2,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=32,
    )
    return AlbertPretrainer(backbone, sentence_objective="sop")


def same_weights(model_a, model_b):
    """Whether two models hold the same weights, in order."""
    a, b = model_a.get_weights(), model_b.get_weights()
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
