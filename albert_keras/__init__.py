"""albert-keras: ALBERT (A Lite BERT) in Keras 3.

Public names (see DESIGN.md): `AlbertBackbone`, `AlbertPretrainer`, `AlbertClassifier`, and the
layers in `albert_keras.layers`. Importing the package registers every class with Keras, so
`.keras` files load without `custom_objects`.
"""

# `training` registers Lamb and WarmupLinearDecay, which a saved pretrainer's compile config names.
from albert_keras import (
    distill,  # registers AlbertDistiller
    layers,
    models,
    training,
)
from albert_keras.models import AlbertBackbone, AlbertClassifier, AlbertPretrainer

__version__ = "0.1.0"

__all__ = [
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertPretrainer",
    "distill",
    "layers",
    "models",
    "training",
]
