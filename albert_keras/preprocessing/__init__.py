"""Raw text in: the official normalization, the SentencePiece tokenizer and the packer, as
Keras layers that run in TensorFlow graphs (`tf.data`, exported SavedModels)."""

from albert_keras.preprocessing.albert_preprocessor import AlbertPreprocessor
from albert_keras.preprocessing.albert_tokenizer import AlbertTokenizer
from albert_keras.preprocessing.preprocess_text import preprocess_text

__all__ = ["AlbertPreprocessor", "AlbertTokenizer", "preprocess_text"]
