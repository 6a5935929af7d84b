"""ALBERT's models: the backbone, the pretrainer and the task models (classifier, token
classifier, multiple choice, question answerer)."""

from albert_keras.models.albert_backbone import AlbertBackbone
from albert_keras.models.albert_classifier import AlbertClassifier
from albert_keras.models.albert_multiple_choice import AlbertMultipleChoice
from albert_keras.models.albert_presets import BACKBONE_PRESETS
from albert_keras.models.albert_pretrainer import SENTENCE_OBJECTIVES, AlbertPretrainer
from albert_keras.models.albert_question_answerer import AlbertQuestionAnswerer
from albert_keras.models.albert_token_classifier import AlbertTokenClassifier
from albert_keras.models.squad_span_loss import SquadSpanLoss

__all__ = [
    "BACKBONE_PRESETS",
    "SENTENCE_OBJECTIVES",
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertMultipleChoice",
    "AlbertPretrainer",
    "AlbertQuestionAnswerer",
    "AlbertTokenClassifier",
    "SquadSpanLoss",
]
