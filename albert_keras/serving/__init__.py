"""Serving: a fine-tuned classifier or question answerer as a TensorFlow SavedModel over raw
strings."""

from albert_keras.serving.export_saved_model import export_saved_model
from albert_keras.serving.question_answering_export import export_question_answerer
from albert_keras.serving.warmup_requests import warm_up

__all__ = ["export_question_answerer", "export_saved_model", "warm_up"]
