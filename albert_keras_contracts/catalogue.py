"""The catalogue: every named variant the library, the settings and the command line choose from.

One registry, at the bottom of the stack (pure Python: `--help` and the settings read it without
TensorFlow), so the names are written once and nothing keeps copies in step:

- GLUE tasks (`GlueTask`: files, labels, metrics, defaults): GLUE's ten, and any a user adds
  with `register_task(...)` (from the command line: `--task_module my_tasks`, imported before
  the task is looked up);
- sharing modes (`SharingMode`): which halves of a block are shared and how layers map to
  weight groups; the encoder, warm start and the converters ask the mode, not its name;
- sentence objectives (the pretrainer's second loss);
- conversion sources and targets (`albert-keras convert --from / --to`);
- architecture presets (`AlbertBackbone.from_preset("albert_base")`: configs, no weights).

Adding a GLUE-like task is one `register_task(GlueTask(...))`; adding a sharing mode is one
`register_sharing_mode(SharingMode(...))` with its routing function.

Example:
>>> sharing_mode("all").owner("ffn", layer=5, num_layers=12, num_groups=3)
1
>>> get_glue_task("sst2").metrics
('accuracy',)
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

from albert_keras_contracts.architecture_presets import BACKBONE_PRESETS
from albert_keras_contracts.glue_task import GlueTask
from albert_keras_contracts.glue_tasks import BUILTIN_GLUE_TASKS, GLUE_ALIASES

HALVES = ("attention", "ffn")  # the two halves of a transformer block


# === Sharing modes ===


def contiguous_groups(layer: int, num_layers: int, num_groups: int) -> int:
    """The official routing: layer `l` is in group `l * num_groups // num_layers` (contiguous
    runs of `num_layers / num_groups` layers, as the official `modeling.py`)."""
    return layer * num_groups // num_layers


@dataclasses.dataclass(frozen=True)
class SharingMode:
    """One way of sharing weights across layers (the paper's section 3.1, Table 4).

    Args:
        name: str. The backbone's `sharing` value, e.g. `"all"`.
        shared: frozenset of str. The halves of a block (`"attention"`, `"ffn"`) whose weights
            a group's layers share; an unshared half has weights per layer.
        summary: str. One line for help and docs.
        route: callable `(layer, num_layers, num_groups) -> group`. Which group a layer's
            shared halves use; `contiguous_groups` is the official one.
        official_checkpoint: bool. Whether the official (TF1 / HF / keras-hub) layouts can hold
            it; the converters refuse the others.

    Example:
    >>> mode = SharingMode("odd_even", frozenset(HALVES), "layers alternate between groups",
    ...                    route=lambda layer, num_layers, num_groups: layer % num_groups)
    >>> [mode.owner("attention", layer, 4, 2) for layer in range(4)]
    [0, 1, 0, 1]
    """

    name: str
    shared: frozenset
    summary: str
    route: Callable[[int, int, int], int] = contiguous_groups
    official_checkpoint: bool = False

    def __post_init__(self):
        unknown = set(self.shared) - set(HALVES)
        if unknown:
            raise ValueError(f"sharing mode {self.name!r}: unknown halves {sorted(unknown)}")
        object.__setattr__(self, "shared", frozenset(self.shared))

    def shares(self, half: str) -> bool:
        """Whether `half` (`"attention"` or `"ffn"`) is shared within a group."""
        if half not in HALVES:
            raise ValueError(f"half={half!r} is not one of {HALVES}")
        return half in self.shared

    def owner(self, half: str, layer: int, num_layers: int, num_groups: int) -> int:
        """The index of the weight set `layer` uses for `half`: its group when shared, else
        the layer itself."""
        if self.shares(half):
            return self.route(layer, num_layers, num_groups)
        return layer

    def num_owners(self, half: str, num_layers: int, num_groups: int) -> int:
        """How many weight sets `half` has: the groups when shared, else one a layer."""
        return num_groups if self.shares(half) else num_layers

    def owner_kind(self, half: str) -> str:
        """`"group"` or `"layer"`: how the weights of `half` are named (`group_0_inner_0_ffn`)."""
        return "group" if self.shares(half) else "layer"


SHARING_MODES: dict[str, SharingMode] = {
    mode.name: mode
    for mode in (
        SharingMode(
            "all", frozenset(HALVES), "ALBERT: attention and FFN shared", official_checkpoint=True
        ),
        SharingMode("attention", frozenset({"attention"}), "only attention shared (Table 4)"),
        SharingMode("ffn", frozenset({"ffn"}), "only the FFN shared (Table 4)"),
        SharingMode("none", frozenset(), "BERT: nothing shared", official_checkpoint=True),
    )
}


def register_sharing_mode(mode: SharingMode) -> SharingMode:
    """Adds a sharing mode (`AlbertBackbone(sharing=mode.name)` then builds it); returns it.
    A name already taken by another mode is refused."""
    return _register(SHARING_MODES, mode.name, mode, "sharing mode")


def sharing_mode(name: str | SharingMode) -> SharingMode:
    """The `SharingMode` called `name` (a mode passes through); ValueError naming the choices."""
    if isinstance(name, SharingMode):
        return name
    if name not in SHARING_MODES:
        raise ValueError(f"sharing={name!r} is not one of {', '.join(SHARING_MODES)}")
    return SHARING_MODES[name]


# === Sentence objectives ===

SENTENCE_OBJECTIVES: dict[str, str] = {
    "sop": "sentence-order prediction (ALBERT): two segments in or out of order",
    "nsp": "next-sentence prediction (BERT): the second segment follows, or is random",
    "none": "no sentence loss (masked LM alone)",
}

# === Conversion formats (`albert_keras.convert.convert_checkpoint`) ===

CONVERSION_SOURCES: dict[str, str] = {
    "tf1": "an official TF1 checkpoint (albert_config.json + model.ckpt*)",
    "hf": "a Hugging Face transformers folder (config.json + weights)",
    "keras-hub": "a keras-hub AlbertBackbone preset folder",
    "keras": "an albert-keras .keras file",
}
CONVERSION_TARGETS: dict[str, str] = {
    name: CONVERSION_SOURCES[name] for name in ("hf", "keras-hub", "tf1")
}


# === Architecture presets ===

ARCHITECTURE_PRESETS: dict[str, dict] = BACKBONE_PRESETS  # AlbertBackbone.presets is this dict


def register_architecture(name: str, config: dict) -> dict:
    """Adds an architecture preset (`AlbertBackbone.from_preset(name)` then builds it: a
    complete backbone config, no weights); returns the config. A taken name is refused."""
    return _register(ARCHITECTURE_PRESETS, name, dict(config), "architecture preset")


# === GLUE tasks ===

GLUE_TASKS: dict[str, GlueTask] = {task.name: task for task in BUILTIN_GLUE_TASKS}
_ALIASES: dict[str, str] = dict(GLUE_ALIASES)


def register_task(task: GlueTask, aliases: tuple[str, ...] = ()) -> GlueTask:
    """Adds a GLUE-like task: `finetune-glue --task NAME` and `predict --task NAME` then know
    it (give `--task_module` the module that calls this). Returns the task.

    Example:
    >>> from albert_keras_contracts.glue_task import TsvLayout
    >>> task = register_task(GlueTask(
    ...     name="MyPolarity", directory="polarity",
    ...     splits={"train": TsvLayout("train.tsv", "sentence", None, "label"),
    ...             "dev": TsvLayout("dev.tsv", "sentence", None, "label")},
    ...     labels=("neg", "pos"), metrics=("accuracy",), dev_splits=("dev",),
    ...     test_splits={"test": "MyPolarity"}, learning_rate=2e-5, batch_size=32,
    ...     train_steps=1000, warmup_steps=100, eval_every=100))
    >>> get_glue_task("mypolarity") is task
    True
    """
    _register(GLUE_TASKS, task.name, task, "GLUE task")
    for alias in aliases:
        _ALIASES[alias.lower()] = task.name
    return task


def get_glue_task(name: str | GlueTask) -> GlueTask:
    """The `GlueTask` called `name` (case-insensitive; "sst2", "stsb" and "mnli-m" work too).

    Example:
    >>> get_glue_task("cola").labels
    ('0', '1')
    """
    if isinstance(name, GlueTask):
        return name
    by_lower = {key.lower(): key for key in GLUE_TASKS}
    key = by_lower.get(name.lower()) or _ALIASES.get(name.lower())
    if key is None:
        raise ValueError(f"unknown GLUE task {name!r}; choose from {', '.join(GLUE_TASKS)}")
    return GLUE_TASKS[key]


def trainable_task_names() -> tuple[str, ...]:
    """The tasks `finetune-glue --task` takes (those with a train split), in catalogue order."""
    return tuple(name for name, task in GLUE_TASKS.items() if task.trainable)


def import_task_module(module: str) -> None:
    """Imports `module` (`--task_module`), whose import registers tasks; one-line errors."""
    try:
        importlib.import_module(module)
    except ImportError as error:
        raise ValueError(f"--task_module {module}: cannot import it ({error})") from None


def _register(registry: dict, name: str, entry, kind: str):
    if registry.get(name, entry) != entry:
        raise ValueError(f"{kind} {name!r} is already in the catalogue: choose another name")
    registry[name] = entry
    return entry
