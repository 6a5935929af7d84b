"""Presets with weights: Google's releases by name, `hf://` repositories, keras-hub / Kaggle
handles and local paths, downloaded, checked and converted once into a cache."""

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
