"""Where `from_preset` finds the loader of weights: the model library asks, `presets` answers.

The model classes sit below `albert_keras.presets` in the stack (`presets` imports `convert`,
which imports the models), so, as in keras-hub, their `from_preset` does not import it: it looks
the loader up here when it is called. Importing `albert_keras.presets` registers its loader;
`albert_keras/__init__.py`, the top of the stack, asks for that import on first use
(`load_on_first_use`), so `AlbertBackbone.from_preset("albert_base_v2")` works after
`import albert_keras` alone, and `import albert_keras` still loads no preset machinery.

A loader has the functions of `albert_keras.presets.preset_loader`: `load_backbone(preset,
**overrides)`, `load_pretrainer(preset)`, `load_sentencepiece(preset)` and
`task_from_preset(cls, preset, **kwargs)`. This module imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import Callable

_FUNCTIONS = ("load_backbone", "load_pretrainer", "load_sentencepiece", "task_from_preset")
_registered = []  # the loaders, last one wins
_on_first_use: list[Callable[[], None]] = []  # hooks that register one when it is first needed


def register_preset_loader(loader) -> None:
    """Makes `loader` the one every `from_preset` uses (a later registration replaces it).

    Args:
        loader: a module or object with `load_backbone`, `load_pretrainer`,
            `load_sentencepiece` and `task_from_preset`.
    """
    missing = [name for name in _FUNCTIONS if not callable(getattr(loader, name, None))]
    if missing:
        raise TypeError(f"{loader!r} is not a preset loader: it lacks {', '.join(missing)}")
    _registered.append(loader)


def load_on_first_use(register: Callable[[], None]) -> None:
    """Calls `register()` the first time a loader is asked for while none is registered.

    Args:
        register: a function that registers a loader (e.g. by importing `albert_keras.presets`).
    """
    _on_first_use.append(register)


def get_preset_loader(preset: str | None = None):
    """The registered loader of weights for `from_preset`.

    Args:
        preset: str. The preset being loaded, named in the error when there is no loader.

    Example:
    >>> get_preset_loader().__name__
    'albert_keras.presets.preset_loader'
    """
    while not _registered and _on_first_use:
        _on_first_use.pop(0)()
    if not _registered:
        what = f"preset {preset!r} names weights, but " if preset is not None else ""
        raise RuntimeError(
            f"{what}no preset loader is registered: `import albert_keras.presets` registers "
            "the one for releases, hf://, keras-hub names and local files"
        )
    return _registered[-1]
