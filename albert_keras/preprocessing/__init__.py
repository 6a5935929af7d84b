"""Raw text in: the official normalization (`albert_keras_contracts.text_normalization`), the SentencePiece
tokenizer and the packer, as Keras layers that run in TensorFlow graphs (`tf.data`, exported
SavedModels)."""

from albert_keras.preprocessing.albert_preprocessor import AlbertPreprocessor
from albert_keras.preprocessing.albert_tokenizer import AlbertTokenizer

__all__ = ["AlbertPreprocessor", "AlbertTokenizer"]
