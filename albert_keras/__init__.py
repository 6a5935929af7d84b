"""albert-keras: ALBERT (A Lite BERT) in Keras 3.

Public names (see DESIGN.md): `AlbertBackbone`, `AlbertPretrainer`, `AlbertClassifier`, and the
layers in `albert_keras.layers`.
"""

__version__ = "0.1.0"
