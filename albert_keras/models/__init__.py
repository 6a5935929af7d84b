"""ALBERT's models: the backbone, the pretrainer and the classifier."""

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_classifier import AlbertClassifier
from albert_keras.models.albert_presets import BACKBONE_PRESETS
from albert_keras.models.albert_pretrainer import SENTENCE_OBJECTIVES, AlbertPretrainer

__all__ = [
    "BACKBONE_PRESETS",
    "SENTENCE_OBJECTIVES",
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertPretrainer",
]
