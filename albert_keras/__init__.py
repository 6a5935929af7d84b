"""albert-keras: ALBERT (A Lite BERT) in Keras 3.

Public names (see docs/design.md): `AlbertBackbone`, `AlbertPretrainer`, `AlbertClassifier`, the
layers in `albert_keras.layers` and the optimizers in `albert_keras.optimizers`. Importing the
package imports the model library only (layers, models, optimizers) and registers every class a
`.keras` file can name, so saved models load without `custom_objects`. The jobs and tasks above
it (`training`, `glue`, `convert`, `demo`) are loaded on first use, as `albert_keras.training`.
"""

import importlib

from albert_keras import layers, models, optimizers
from albert_keras.models import AlbertBackbone, AlbertClassifier, AlbertPretrainer
from albert_keras_cli import __version__

# Loaded on first attribute access (PEP 562): `ak.training.Lamb` works, `import albert_keras`
# stays the model library.
_LAZY_SUBPACKAGES = ("convert", "demo", "glue", "training")

__all__ = [
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertPretrainer",
    "__version__",
    "layers",
    "models",
    "optimizers",
]


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"albert_keras.{name}")
    raise AttributeError(f"module 'albert_keras' has no attribute {name!r}")
