"""Serving: a fine-tuned classifier, question answerer, token tagger or multiple-choice model as
a TensorFlow SavedModel over raw strings."""

from albert_keras.serving.export_saved_model import export_saved_model
from albert_keras.serving.question_answering_export import export_question_answerer
from albert_keras.serving.task_exports import export_multiple_choice, export_token_classifier
from albert_keras.serving.warmup_requests import warm_up

__all__ = [
    "export_multiple_choice",
    "export_question_answerer",
    "export_saved_model",
    "export_token_classifier",
    "warm_up",
]
