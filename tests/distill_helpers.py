"""Tiny teachers and students for the distillation tests (a 4-layer teacher, 2-layer students)."""

import keras
from synthetic_records import SEQ_LENGTH, VOCABULARY_SIZE

import albert_keras as ak

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
