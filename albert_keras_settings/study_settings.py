"""The keys of an `albert-keras study` spec, each default written once with what it means.

A study's spec is a mapping (a built-in, a YAML / JSON file, `--config KEY=VALUE`), not a job's
dataclass: its cells are a list and its backbone a nested mapping. Here, free of TensorFlow, so
`albert-keras study --help` lists every key with its default (`describe_study_keys`);
`albert_keras.study.study_spec` checks a spec against them.
"""

from __future__ import annotations

import json

# A tiny ALBERT that pretrains on two CPU cores in minutes; scale it with --config.
STUDY_DEFAULTS = {
    "name": "study",
    "description": "",
    # --- the pretraining budget every cell shares ---
    "preset": "albert_base",
    "backbone": {
        "num_layers": 4,
        "hidden_dim": 256,
        "num_heads": 4,
        "intermediate_dim": 1024,
        "embedding_dim": 128,
        "max_sequence_length": 64,
    },
    "steps": 1000,
    "batch_size": 32,
    "max_seq_length": 64,
    "max_predictions_per_seq": 10,
    "learning_rate": 0.00176,
    "warmup_steps": None,  # None: the official 2.5% of `steps`
    "checkpoint_every": 100,
    "mixed_precision": "auto",  # pretraining and fine-tuning; a cell may set its own
    "seeds": [1, 2, 3],
    # --- data: made once per sentence objective from the same corpus ---
    "corpus": None,  # glob(s) of training text
    "heldout": None,  # glob(s) of held-out text (removed from `corpus`)
    "spm_model": None,  # None: the study trains one on the training files (below)
    "vocab_size": 8000,
    "vocab_lower_case": True,
    "dupe_factor": 2,
    "data_seed": 12345,
    "heldout_max_examples": 2048,
    # --- downstream: the same fine-tuning budget for every cell ---
    "glue_dir": None,
    "tasks": ["SST-2", "MRPC", "RTE", "CoLA", "STS-B"],
    "finetune_steps": 300,
    "finetune_batch_size": 32,
    "finetune_learning_rate": 5e-5,
    "finetune_max_seq_length": 64,
    "finetune_evaluations": 1,  # dev evaluations per run (the best is kept)
    "finetune_max_dev_examples": None,  # None: the whole dev split
    # --- the grid ---
    "baseline": True,  # add the no-pretraining cell
    "cells": [],
}

# Keys that only mean something when the study makes its own vocabulary (no `spm_model`): left
# out of a spec that names one, so the studies run before they existed resume as they were.
VOCABULARY_KEYS = ("vocab_size", "vocab_lower_case")

STUDY_KEY_HELP = {
    "name": "the study's name, in the report's title",
    "description": "one sentence for the report",
    "preset": "the AlbertBackbone preset the backbone overrides start from",
    "backbone": "backbone arguments over the preset (--config backbone.ARG=VALUE)",
    "steps": "pretraining steps of every run",
    "batch_size": "pretraining batch",
    "max_seq_length": "tokens per pretraining example",
    "max_predictions_per_seq": "masked positions per example",
    "learning_rate": "LAMB's peak learning rate",
    "warmup_steps": "linear warmup steps; null: the official 2.5% of steps",
    "checkpoint_every": "steps between checkpoints (a stopped study resumes from the last)",
    "mixed_precision": "auto, float32, mixed_bfloat16 or mixed_float16 (a cell may set its own)",
    "seeds": "one run of every cell per seed",
    "corpus": "glob(s) of training text, commas between them (--corpus)",
    "heldout": "glob(s) of held-out text, taken out of the corpus (--heldout)",
    "spm_model": "SentencePiece .model (--spm_model); null: the study trains one on the "
    "corpus' training files (pipelines.train_vocab) into its data/vocab/",
    "vocab_size": "with no spm_model: the pieces of the vocabulary the study trains",
    "vocab_lower_case": "with no spm_model: lower-case the text of the vocabulary it trains",
    "dupe_factor": "differently masked copies of the training text",
    "data_seed": "seeds the records (the same text, cut and masked the same, for every cell)",
    "heldout_max_examples": "held-out examples evaluated per kind (none, NSP, SOP)",
    "glue_dir": "GLUE's download (--glue_dir), for the fine-tuning tasks",
    "tasks": "GLUE tasks every run is fine-tuned on ([]: none)",
    "finetune_steps": "fine-tuning steps per task",
    "finetune_batch_size": "fine-tuning batch",
    "finetune_learning_rate": "fine-tuning peak learning rate",
    "finetune_max_seq_length": "fine-tuning sequence length",
    "finetune_evaluations": "dev evaluations per fine-tuning (the best is kept)",
    "finetune_max_dev_examples": "dev examples scored (a seeded sample); null: all",
    "baseline": "add the no-pretraining cell (the same backbone, random weights)",
    "cells": "the grid: [{name, sentence_objective, backbone, mixed_precision}, ...]",
}


def describe_study_keys() -> str:
    """Every spec key, its default (as JSON) and what it means, one line each.

    Example:
    >>> [line for line in describe_study_keys().splitlines() if "steps = " in line][0]
    '  steps = 1000: pretraining steps of every run'
    """
    lines = []
    for key, default in STUDY_DEFAULTS.items():
        shown = json.dumps(default) if key != "backbone" else "{...}"
        lines.append(f"  {key} = {shown}: {STUDY_KEY_HELP[key]}")
        if key == "backbone":
            lines += [f"    backbone.{k} = {json.dumps(v)}" for k, v in default.items()]
    return "\n".join(lines)
