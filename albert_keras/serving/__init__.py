"""Serving: a fine-tuned classifier as a TensorFlow SavedModel over raw strings."""

from albert_keras.serving.export_saved_model import export_saved_model

__all__ = ["export_saved_model"]
