"""What a study is: a grid of pretraining cells and one budget they all share.

A spec is a dict (from a built-in name, a YAML or JSON file, or Python), with `--config`
overrides applied on top. `load_spec` checks it whole and returns a `StudySpec`; every mistake is
one `ValueError` line that names the spec and the key.

The built-ins follow the paper's ablation tables, each with a no-pretraining baseline (the same
backbone, random weights, fine-tuned with the same budget):

- `table3`: `embedding_dim` (E) 64 / 128 / 256, not shared and all-shared (Table 3).
- `table4`: `sharing` all / attention / ffn / none (Table 4).
- `table5`: `sentence_objective` none / nsp / sop (Table 5).
- `quick`: table5's grid at a few minutes' budget (one seed, a tiny backbone, SST-2 only).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os

from albert_keras_contracts import catalogue
from albert_keras_settings.study_settings import STUDY_DEFAULTS, VOCABULARY_KEYS

# The catalogue's names (albert_keras_contracts.catalogue): a registered sharing mode is a
# study cell's choice too.
SENTENCE_OBJECTIVES = tuple(catalogue.SENTENCE_OBJECTIVES)
SHARING = catalogue.SHARING_MODES
BASELINE = "no-pretraining"

# Every key and its default (albert_keras_settings, free of TensorFlow: `study --help` lists them).
DEFAULT_SPEC = STUDY_DEFAULTS

BUILTIN_CELLS = {
    "table3": [
        {"name": f"E={e} {label}", "backbone": {"embedding_dim": e, "sharing": sharing}}
        for label, sharing in (("not-shared", "none"), ("all-shared", "all"))
        for e in (64, 128, 256)
    ],
    "table4": [
        {"name": name, "backbone": {"sharing": sharing}}
        for name, sharing in (
            ("all-shared", "all"),
            ("shared-attention", "attention"),
            ("shared-FFN", "ffn"),
            ("not-shared", "none"),
        )
    ],
    "table5": [
        {"name": "None", "sentence_objective": "none"},
        {"name": "NSP", "sentence_objective": "nsp"},
        {"name": "SOP", "sentence_objective": "sop"},
    ],
}
# `quick`: table5's grid at a budget of a few minutes on a laptop's CPU (one seed, the
# `albert_tiny` backbone, a 2,000-piece vocabulary made by the study, SST-2 only): to try the
# study, not to measure anything.
BUILTIN_CELLS["quick"] = BUILTIN_CELLS["table5"]
QUICK_SETTINGS = {
    "backbone": {"num_layers": 2, "hidden_dim": 128, "num_heads": 2, "intermediate_dim": 512,
                 "embedding_dim": 64, "max_sequence_length": 64},
    "steps": 200, "learning_rate": 0.01, "checkpoint_every": 100, "seeds": [1],
    "vocab_size": 2000, "dupe_factor": 1, "heldout_max_examples": 256, "tasks": ["SST-2"],
    "finetune_steps": 100, "finetune_learning_rate": 2e-4, "finetune_max_dev_examples": 200,
}  # fmt: skip
BUILTIN_DESCRIPTIONS = {
    "table3": "The effect of vocabulary embedding size E (paper, Table 3).",
    "table4": "The effect of cross-layer parameter sharing (paper, Table 4).",
    "table5": "The effect of the sentence-prediction loss: none, NSP, SOP (paper, Table 5).",
    "quick": "Table 5's grid at a few minutes' budget: a try of the study, not a measurement.",
}
_CELL_KEYS = {"name", "sentence_objective", "backbone", "pretrain", "mixed_precision"}


@dataclasses.dataclass(frozen=True)
class Cell:
    """One pretraining setting of the grid (run once per seed).

    Args:
        name: str. The row's label in the report; also its folder name (made filesystem-safe).
        sentence_objective: str. `"none"`, `"nsp"` or `"sop"`.
        backbone: dict. Backbone arguments over the study's (e.g. `{"sharing": "ffn"}`).
        pretrain: bool. False for the no-pretraining baseline (random weights).
        mixed_precision: str. The cell's dtype policy (`"auto"`, `"float32"`, ...); None: the
            study's `mixed_precision`.
    """

    name: str
    sentence_objective: str = "sop"
    backbone: dict = dataclasses.field(default_factory=dict)
    pretrain: bool = True
    mixed_precision: str | None = None

    @property
    def folder(self) -> str:
        safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in self.name)
        return safe.strip("-") or "cell"


@dataclasses.dataclass(frozen=True)
class StudySpec:
    """A checked study: the shared budget (`settings`) and the cells.

    `settings` holds every key of `DEFAULT_SPEC` but `cells`; `source` says where the spec came
    from (a built-in name or a file path), for error messages and the report.
    """

    settings: dict
    cells: tuple
    source: str

    def backbone_config(self, cell: Cell) -> dict:
        """The backbone arguments of `cell`: the study's, then the cell's overrides."""
        return {**self.settings["backbone"], **cell.backbone}

    def precision(self, cell: Cell) -> str:
        """The dtype policy name `cell` trains in (before `"auto"` is resolved)."""
        return cell.mixed_precision or self.settings["mixed_precision"]

    def to_dict(self) -> dict:
        """The spec as a dict that `load_spec` reads back (the baseline cell comes from
        `baseline: true`, so it is not listed)."""
        settings = copy.deepcopy(self.settings)
        if settings.get("spm_model"):  # the vocabulary is given: the keys to make one mean nothing
            for key in VOCABULARY_KEYS:
                settings.pop(key, None)
        return {
            **settings,
            "cells": [dataclasses.asdict(cell) for cell in self.cells if cell.pretrain],
        }


def load_spec(spec: str | dict, overrides: dict | None = None) -> StudySpec:
    """A built-in name (`table3`, `table4`, `table5`), a `.yaml`/`.json` path, or a dict, with
    `overrides` (`{"steps": 500, "backbone.num_layers": 2}`) applied; checked.

    Args:
        spec: str or dict. What to run.
        overrides: dict. Keys of the spec (dotted for `backbone.*`), e.g. from `--config`.

    Returns:
        StudySpec.

    Example:
    >>> spec = load_spec("table5", {"steps": 100, "seeds": [1]})
    >>> [cell.name for cell in spec.cells]
    ['None', 'NSP', 'SOP', 'no-pretraining']
    """
    if isinstance(spec, dict):
        source, raw = "<dict>", copy.deepcopy(spec)
    elif spec in BUILTIN_CELLS:
        source = spec
        raw = {
            "name": spec,
            "description": BUILTIN_DESCRIPTIONS[spec],
            **(copy.deepcopy(QUICK_SETTINGS) if spec == "quick" else {}),
            "cells": copy.deepcopy(BUILTIN_CELLS[spec]),
        }
    else:
        source, raw = str(spec), _read_file(str(spec))
    where = f"spec {source}"
    if not isinstance(raw, dict):
        # ValueError, not TypeError: the CLI reports ValueErrors as one-line errors.
        raise ValueError(  # noqa: TRY004
            f"{where}: must be a mapping of keys to values, got {type(raw).__name__}"
        )
    unknown = sorted(set(raw) - set(DEFAULT_SPEC))
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_SPEC)}"
        )
    settings = copy.deepcopy(DEFAULT_SPEC)
    backbone = raw.pop("backbone", None)
    settings.update(raw)
    if backbone is not None:
        if not isinstance(backbone, dict):
            raise ValueError(f"{where}: backbone must be a mapping")
        settings["backbone"] = {**DEFAULT_SPEC["backbone"], **backbone}
    for key, value in (overrides or {}).items():
        _apply_override(settings, key, value, where)
    cells_raw = settings.pop("cells")
    cells = [_cell(item, i, where) for i, item in enumerate(cells_raw or [])]
    if settings["baseline"]:
        cells.append(Cell(name=BASELINE, sentence_objective="sop", pretrain=False))
    _check(settings, cells, where)
    return StudySpec(settings=settings, cells=tuple(cells), source=source)


# === Checks ===


def _read_file(path: str):
    if not os.path.isfile(path):
        builtins = ", ".join(BUILTIN_CELLS)
        raise FileNotFoundError(f"spec {path}: no such file (built-in specs: {builtins})")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith((".yaml", ".yml")):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:  # its message names the line
            reason = " ".join(str(error).split())
            raise ValueError(f"spec {path}: not YAML ({reason})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"spec {path}: line {error.lineno}: not JSON ({error.msg})") from None


def _apply_override(settings: dict, key: str, value, where: str) -> None:
    if key.startswith("backbone."):
        settings["backbone"][key.removeprefix("backbone.")] = value
    elif key in DEFAULT_SPEC and key != "cells":
        settings[key] = value
    else:
        raise ValueError(
            f"{where}: --config {key}: not a study key; choose from "
            f"{', '.join(k for k in DEFAULT_SPEC if k != 'cells')} or backbone.ARG"
        )


def _cell(item, index: int, where: str) -> Cell:
    if not isinstance(item, dict) or "name" not in item:
        raise ValueError(f"{where}: cells[{index}] must be a mapping with a name")
    unknown = sorted(set(item) - _CELL_KEYS)
    if unknown:
        raise ValueError(
            f"{where}: cells[{index}] ({item['name']}): unknown key(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(_CELL_KEYS))}"
        )
    objective = item.get("sentence_objective", "sop")
    objective = "none" if objective is None else objective
    return Cell(
        name=str(item["name"]),
        sentence_objective=objective,
        backbone=dict(item.get("backbone") or {}),
        pretrain=bool(item.get("pretrain", True)),
        mixed_precision=item.get("mixed_precision"),
    )


def _check(settings: dict, cells: list[Cell], where: str) -> None:
    """Checks the spec whole: its cells' names, its numbers, its preset, each cell's settings
    and backbone, then its tasks (in that order: the first mistake is the one reported)."""
    from albert_keras.models import AlbertBackbone

    if not cells:
        raise ValueError(f"{where}: no cells (give `cells`, or use table3 / table4 / table5)")
    folders = [cell.folder for cell in cells]
    twice = sorted({f for f in folders if folders.count(f) > 1})
    if twice:
        raise ValueError(f"{where}: cell name(s) used twice: {', '.join(twice)}")
    _check_numbers(settings, where)
    preset = settings["preset"]
    if preset not in AlbertBackbone.presets:
        raise ValueError(
            f"{where}: preset {preset!r} is unknown; choose one of "
            f"{', '.join(sorted(AlbertBackbone.presets))}"
        )
    known = set(AlbertBackbone.presets[preset])
    for cell in cells:
        _check_cell(cell, settings, known, where)
    _check_tasks(settings, cells, where)


def _check_numbers(settings: dict, where: str) -> None:
    """The sizes and counts positive integers, the learning rates positive numbers, the seeds
    distinct integers >= 0."""
    for name in ("steps", "batch_size", "max_seq_length", "max_predictions_per_seq",
                 "checkpoint_every", "dupe_factor", "finetune_steps", "finetune_batch_size",
                 "finetune_max_seq_length", "finetune_evaluations", "heldout_max_examples",
                 "vocab_size"):  # fmt: skip
        value = settings[name]
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{where}: {name}={value!r} must be a positive integer")
    for name in ("learning_rate", "finetune_learning_rate"):
        if not isinstance(settings[name], (int, float)) or settings[name] <= 0:
            raise ValueError(f"{where}: {name}={settings[name]!r} must be a positive number")
    seeds = settings["seeds"]
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and s >= 0 for s in seeds)
        or len(set(seeds)) != len(seeds)
    ):
        raise ValueError(f"{where}: seeds={seeds!r} must be a list of distinct integers >= 0")


def _check_cell(cell: Cell, settings: dict, known: set[str], where: str) -> None:
    """One cell: its precision and sentence objective known, its backbone (the spec's with the
    cell's over it) made of `known` arguments, a known sharing and room for max_seq_length."""
    from albert_keras.training.precision import PRECISIONS

    precision = cell.mixed_precision or settings["mixed_precision"]
    if precision not in PRECISIONS:
        raise ValueError(
            f"{where}: cell {cell.name}: mixed_precision={precision!r}; "
            f"choose one of {', '.join(PRECISIONS)}"
        )
    if cell.sentence_objective not in SENTENCE_OBJECTIVES:
        raise ValueError(
            f"{where}: cell {cell.name}: sentence_objective={cell.sentence_objective!r}; "
            f"choose one of {', '.join(SENTENCE_OBJECTIVES)}"
        )
    config = {**settings["backbone"], **cell.backbone}
    unknown = sorted(set(config) - known)
    if unknown:
        raise ValueError(
            f"{where}: cell {cell.name}: backbone {', '.join(unknown)}: not a backbone "
            f"argument; choose from {', '.join(sorted(known))}"
        )
    if config.get("sharing", "all") not in SHARING:
        raise ValueError(
            f"{where}: cell {cell.name}: sharing={config['sharing']!r}; "
            f"choose one of {', '.join(SHARING)}"
        )
    if config.get("max_sequence_length", 512) < settings["max_seq_length"]:
        raise ValueError(
            f"{where}: cell {cell.name}: max_sequence_length="
            f"{config['max_sequence_length']} < max_seq_length={settings['max_seq_length']}"
        )


def _check_tasks(settings: dict, cells: list[Cell], where: str) -> None:
    """The GLUE tasks: a list of trainable task names, fine-tuned at a length every cell's
    backbone holds."""
    tasks = settings["tasks"]
    if not isinstance(tasks, list):
        raise ValueError(f"{where}: tasks={tasks!r} must be a list of GLUE task names")  # noqa: TRY004
    if tasks:
        from albert_keras.glue.glue_tasks import GLUE_TASKS

        trainable = [name for name, task in GLUE_TASKS.items() if task.trainable]
        bad = [t for t in tasks if t not in trainable]
        if bad:
            raise ValueError(
                f"{where}: tasks {', '.join(map(str, bad))}: not a GLUE task; "
                f"choose from {', '.join(trainable)}"
            )
        if settings["finetune_max_seq_length"] > min(
            {**settings["backbone"], **c.backbone}.get("max_sequence_length", 512) for c in cells
        ):
            raise ValueError(f"{where}: finetune_max_seq_length exceeds max_sequence_length")
