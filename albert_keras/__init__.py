"""albert-keras: ALBERT (A Lite BERT) in Keras 3.

Public names (see DESIGN.md): `AlbertBackbone`, `AlbertPretrainer`, `AlbertClassifier` (each
with `from_preset`, released weights included: `albert_keras.presets`), `AlbertTokenizer`,
`AlbertPreprocessor`, and the layers in `albert_keras.layers`. Importing the package registers
every class with Keras, so `.keras` files load without `custom_objects`.
"""

# `training` registers Lamb and WarmupLinearDecay, which a saved pretrainer's compile config names.
from albert_keras import layers, models, preprocessing, training
from albert_keras.models import AlbertBackbone, AlbertClassifier, AlbertPretrainer
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

__version__ = "0.1.0"

__all__ = [
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertPreprocessor",
    "AlbertPretrainer",
    "AlbertTokenizer",
    "layers",
    "models",
    "preprocessing",
    "training",
]
