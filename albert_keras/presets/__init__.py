"""Presets with weights: Google's releases by name, `hf://` repositories, keras-hub / Kaggle
handles and local paths, downloaded, checked and converted once into a cache.

Importing this package registers `preset_loader` in `albert_keras.preset_registry`, where the
models' `from_preset` finds it (the models stand below this package and never import it)."""

from albert_keras import preset_registry
from albert_keras.presets import preset_loader
from albert_keras.presets.preset_cache import PresetFetchError, cache_dir
from albert_keras.presets.preset_loader import (
    has_weights,
    load_backbone,
    load_pretrainer,
    load_sentencepiece,
    load_with_fresh_parts,
    task_from_preset,
)
from albert_keras.presets.release_presets import RELEASES

# Every `from_preset` of the model library loads weights through this module from now on.
preset_registry.register_preset_loader(preset_loader)

__all__ = [
    "RELEASES",
    "PresetFetchError",
    "cache_dir",
    "has_weights",
    "load_backbone",
    "load_pretrainer",
    "load_sentencepiece",
    "load_with_fresh_parts",
    "task_from_preset",
]
