"""One run of a study: a cell at one seed, in its own folder.

    cells/<cell>/seed-<seed>/
        pretrain/        `albert_keras.jobs.pretrain`'s output (checkpoints/, model.keras,
                         backbone.keras, summary.json); for the no-pretraining baseline, the
                         randomly initialised models and a summary.json of 0 steps
        intrinsic.json   held-out MLM accuracy, and NSP and SOP accuracy of the sentence head
                         as it is (the paper's protocol), on records of each kind
        glue/<TASK>/     `finetune_glue`'s metrics.json and dev predictions
        summary.json     everything the report reads: written after the intrinsic evaluation
                         (`"stage": "intrinsic"`) and again after the fine-tuning ("complete")

Each step checks for its own output first, so a killed run resumes at the step it was in
(pretraining from its last checkpoint, exactly).
"""

from __future__ import annotations

import gc
import json
import math
import os
import time

from albert_keras_contracts import atomic_write

SUMMARY = "summary.json"


def run_folder(output_dir: str, cell, seed: int) -> str:
    return os.path.join(output_dir, "cells", cell.folder, f"seed-{seed}")


def read_summary(folder: str) -> dict | None:
    path = os.path.join(folder, SUMMARY)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def run_cell(spec, cell, seed: int, folder: str, data: dict, glue_dir: str | None,
             progress, *, downstream: bool = True) -> dict:  # fmt: skip
    """Pretrains (or initialises) and evaluates one cell at one seed, then (with `downstream`)
    fine-tunes it on every task; writes and returns its `summary.json` (`"stage"`:
    `"intrinsic"` before the fine-tuning, `"complete"` after)."""
    settings = spec.settings
    started = time.time()
    pretrain_dir = os.path.join(folder, "pretrain")
    pretrained = _pretrain(spec, cell, seed, pretrain_dir, data, progress)
    intrinsic = _intrinsic(spec, cell, folder, pretrain_dir, data, progress)
    results = {}
    if downstream:
        for task in settings["tasks"]:
            results[task] = _finetune(
                spec, cell, seed, folder, pretrain_dir, task, glue_dir, progress
            )
    scores = [entry["score"] for entry in results.values()]
    summary = {
        "cell": cell.name,
        "seed": seed,
        "stage": "complete" if downstream else "intrinsic",
        "sentence_objective": cell.sentence_objective,
        "pretrained": cell.pretrain,
        "backbone": spec.backbone_config(cell),
        "parameters": pretrained["parameters"],
        "pretraining": {
            "steps": pretrained["steps"]["total"],
            "steps_per_second": pretrained["timings"].get("steps_per_second"),
            "tokens_per_second": pretrained["timings"].get("tokens_per_second"),
            "train_seconds": pretrained["timings"].get("train_seconds"),
            "resumed_from": pretrained["steps"].get("resumed_from", 0),
            "history": pretrained.get("history", []),
            "train": pretrained.get("train", {}),
        },
        "intrinsic": intrinsic,
        "downstream": results,
        "downstream_average": sum(scores) / len(scores) if scores else None,
        "wall_seconds_this_session": round(time.time() - started, 1),
    }
    _write_json(os.path.join(folder, SUMMARY), summary)
    return summary


# === Pretraining ===


def _pretrain(spec, cell, seed, pretrain_dir, data, progress) -> dict:
    import keras

    summary_path = os.path.join(pretrain_dir, "summary.json")
    settings = spec.settings
    if os.path.exists(summary_path):
        with open(summary_path) as f:
            done = json.load(f)
        if done["steps"]["total"] == (settings["steps"] if cell.pretrain else 0):
            return done
    config = spec.backbone_config(cell)
    if not cell.pretrain:
        return _random_init(settings, config, seed, pretrain_dir)
    from albert_keras.jobs import pretrain

    progress.pretraining(os.path.join(pretrain_dir, "checkpoints", "checkpoint.json"))
    try:
        summary = pretrain(
            records=data["train"][cell.sentence_objective],
            output_dir=pretrain_dir,
            preset=settings["preset"],
            config=config,
            sentence_objective=cell.sentence_objective,
            batch_size=settings["batch_size"],
            max_steps=settings["steps"],
            learning_rate=settings["learning_rate"],
            warmup_steps=settings["warmup_steps"],
            checkpoint_every=min(settings["checkpoint_every"], settings["steps"]),
            spm_model=settings["spm_model"],
            mixed_precision=spec.precision(cell),
            seed=seed,
            verbose=0,
        )
    finally:
        progress.pretraining(None)
    keras.backend.clear_session()
    gc.collect()
    return summary


def _random_init(settings, config, seed, pretrain_dir) -> dict:
    """The no-pretraining baseline: the backbone as `pretrain` would build it, never trained.
    Its sentence head (random too) gives the chance levels of the intrinsic columns."""
    import keras

    from albert_keras.models import AlbertBackbone, AlbertPretrainer
    from albert_keras.training.model_files import save_keras

    backbone_config = dict(AlbertBackbone.presets[settings["preset"]])
    if "vocabulary_size" not in config:
        import sentencepiece

        processor = sentencepiece.SentencePieceProcessor(model_file=settings["spm_model"])
        backbone_config["vocabulary_size"] = processor.get_piece_size()
    backbone_config.update(config)
    keras.utils.set_random_seed(seed)  # as pretrain() seeds before building
    backbone = AlbertBackbone(**backbone_config)
    pretrainer = AlbertPretrainer(backbone, sentence_objective="sop")
    os.makedirs(pretrain_dir, exist_ok=True)
    for model, name in ((pretrainer, "model.keras"), (backbone, "backbone.keras")):
        save_keras(model, os.path.join(pretrain_dir, name))
    summary = {
        "config": {"backbone": backbone_config, "seed": seed, "sentence_objective": "sop"},
        "parameters": int(backbone.count_params()),
        "steps": {"total": 0, "resumed_from": 0, "run": 0},
        "history": [],
        "train": {},
        "eval": {},
        "timings": {},
    }
    _write_json(os.path.join(pretrain_dir, "summary.json"), summary)
    keras.backend.clear_session()
    return summary


# === Intrinsic evaluation ===


def _intrinsic(spec, cell, folder, pretrain_dir, data, progress) -> dict:
    """MLM accuracy on held-out records of the cell's own kind (the baseline: sop), and the
    sentence head's accuracy on held-out NSP and SOP records (None without a head)."""
    path = os.path.join(folder, "intrinsic.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    import keras

    from pipelines import read_pretraining_records
    from pipelines.record_files import count_records

    settings = spec.settings
    progress.say(f"intrinsic evaluation on held-out records ({', '.join(data['heldout'])})")
    pretrainer = keras.saving.load_model(os.path.join(pretrain_dir, "model.keras"), compile=False)
    pretrainer.compile()
    batch = settings["batch_size"]
    by_kind = {}
    for kind, pattern in data["heldout"].items():
        import glob

        files = sorted(glob.glob(pattern))
        examples = min(count_records(files), settings["heldout_max_examples"])
        steps = examples // batch
        if steps == 0:
            raise ValueError(f"held-out {kind} records: {examples} examples, under one batch")
        # Repeated, and `steps` full batches: every batch is full (see pretrain's evaluation).
        dataset = read_pretraining_records(
            files,
            batch,
            max_seq_length=settings["max_seq_length"],
            max_predictions_per_seq=settings["max_predictions_per_seq"],
            shuffle=False,
            repeat=True,
        )
        logs = pretrainer.evaluate(dataset, steps=steps, return_dict=True, verbose=0)
        by_kind[kind] = {"examples": steps * batch, **{k: float(v) for k, v in logs.items()}}
    own = "sop" if not cell.pretrain else cell.sentence_objective
    head = pretrainer.sentence_head is not None
    intrinsic = {
        "mlm_accuracy": by_kind[own]["mlm_accuracy"],
        "mlm_records": own,
        "nsp_accuracy": by_kind["nsp"]["sentence_accuracy"] if head else None,
        "sop_accuracy": by_kind["sop"]["sentence_accuracy"] if head else None,
        "by_kind": by_kind,
    }
    _write_json(path, intrinsic)
    del pretrainer
    keras.backend.clear_session()
    gc.collect()
    return intrinsic


# === Fine-tuning ===


def finetune_as_study(spec, cell, seed: int, task: str, *, init_from: str, glue_dir: str,
                      output_dir: str, steps: int | None = None) -> None:  # fmt: skip
    """Fine-tunes `init_from` on `task` as the study fine-tunes a cell's run: its batch, sequence
    length, learning rate, evaluations and vocabulary, the cell's precision and the run's seed.
    The classifier file is removed after (the study reads `metrics.json` and keeps the dev
    predictions; dozens of classifiers would fill a disk).

    Args:
        spec: `StudySpec`. The study's fine-tuning settings.
        cell: `Cell`. Its precision.
        seed: int. The run's seed.
        task: str. A GLUE task.
        init_from: str. The backbone to fine-tune (a run's `pretrain/backbone.keras`).
        glue_dir: str. The GLUE folder (the study's capped one).
        output_dir: str. `finetune_glue`'s output folder.
        steps: int or None. Fine-tuning steps; None: the study's `finetune_steps`.
    """
    import keras

    from albert_keras.jobs.finetune_glue_job import finetune_glue

    settings = spec.settings
    steps = steps or settings["finetune_steps"]
    finetune_glue(
        task=task,
        glue_dir=glue_dir,
        init_from=init_from,
        output_dir=output_dir,
        spm_model=settings["spm_model"],
        max_steps=steps,
        batch_size=settings["finetune_batch_size"],
        max_seq_length=settings["finetune_max_seq_length"],
        learning_rate=settings["finetune_learning_rate"],
        eval_every=math.ceil(steps / settings["finetune_evaluations"]),
        patience=0,
        seed=seed,
        mixed_precision=spec.precision(cell),
        verbose=0,
    )
    model_path = os.path.join(output_dir, "model.keras")
    if os.path.exists(model_path):
        os.remove(model_path)
    keras.backend.clear_session()
    gc.collect()


def _finetune(spec, cell, seed, folder, pretrain_dir, task, glue_dir, progress) -> dict:
    out = os.path.join(folder, "glue", task)
    metrics_path = os.path.join(out, "metrics.json")
    if not os.path.exists(metrics_path):
        progress.finetuning(task)
        started = time.time()
        finetune_as_study(spec, cell, seed, task, glue_dir=glue_dir, output_dir=out,
                          init_from=os.path.join(pretrain_dir, "backbone.keras"))  # fmt: skip
        progress.finetuned(time.time() - started)
    with open(metrics_path) as f:
        metrics = json.load(f)
    from albert_keras.glue.glue_tasks import get_glue_task

    main = get_glue_task(task).main_metric
    value = metrics["metrics"][main]
    return {
        "metric": main,
        "score": 100.0 * (value if value is not None else 0.0),  # undefined correlation: 0
        "metrics": metrics["metrics"],
        "num_examples": metrics["num_examples"],
        "steps_trained": metrics["steps_trained"],
        "best_step": metrics["best_step"],
    }


def _write_json(path: str, data: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write.write_json(path, data, indent=2)
