"""albert-keras: ALBERT (A Lite BERT) in Keras 3.

Public names (see docs/design.md): `AlbertBackbone`, `AlbertPretrainer`, `AlbertClassifier`,
`AlbertQuestionAnswerer` (each
with `from_preset`, released weights included: `albert_keras.presets`), `AlbertTokenizer` and
`AlbertPreprocessor` (raw text in, `albert_keras.preprocessing`, loaded on first use), the
layers in `albert_keras.layers` and the optimizers in `albert_keras.optimizers`. Importing the
package imports the model library only (layers, models, optimizers) and registers every class a
`.keras` file can name, so saved models load without `custom_objects`. The jobs and tasks above
it (`training`, `jobs`, `distill`, `glue`, `squad`, `convert`, `demo`, `presets`, `serving`) are
loaded on first use, as `albert_keras.jobs`.
"""

import importlib

from albert_keras import layers, models, optimizers, preset_registry
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertPretrainer,
    AlbertQuestionAnswerer,
)
from albert_keras.version import __version__

# Loaded on first attribute access (PEP 562): `ak.jobs.pretrain` works, `import albert_keras`
# stays the model library.
_LAZY_SUBPACKAGES = (
    "convert",
    "demo",
    "distill",
    "glue",
    "jobs",
    "preprocessing",
    "presets",
    "serving",
    "squad",
    "study",
    "training",
)
# Classes of a lazy subpackage offered at the top: `ak.AlbertTokenizer` (tensorflow-text loads then).
_LAZY_NAMES = {"AlbertTokenizer": "preprocessing", "AlbertPreprocessor": "preprocessing"}

__all__ = [
    "AlbertBackbone",
    "AlbertClassifier",
    "AlbertPretrainer",
    "AlbertQuestionAnswerer",
    "__version__",
    "layers",
    "models",
    "optimizers",
]


def _register_preset_loader():
    import albert_keras.presets  # noqa: F401  (registers its loader on import)


# `from_preset` of weights finds its loader through the registry: the models never import
# `presets` (which stands above them); the top of the stack supplies it on first use.
preset_registry.load_on_first_use(_register_preset_loader)


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"albert_keras.{name}")
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f"albert_keras.{_LAZY_NAMES[name]}"), name)
    raise AttributeError(f"module 'albert_keras' has no attribute {name!r}")
