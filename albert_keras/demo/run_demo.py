"""The main job end to end on a small scale: text -> vocabulary -> records -> pretraining ->
saved model -> fine-tuning (with and without pretraining), with a summary and a plot.
`make demo` runs it on the embedded corpus (no download); flags point it at your own corpus.
"""

import glob
import json
import os
import pathlib
import shutil
import time

from albert_keras_contracts.output_folder import MANIFEST, OutputFolder

# Chosen by measurement (docs/results.md, "How the demo's defaults were picked"): a model, corpus
# and budget that learn visibly in about 5 minutes on 2 CPU cores.
DEMO_CONFIG = {
    "num_layers": 2,
    "num_heads": 4,
    "embedding_dim": 64,
    "hidden_dim": 128,
    "intermediate_dim": 512,
    "num_groups": 1,
    "sharing": "all",
}
DEFAULTS = {
    "vocab_size": 4000,
    "max_seq_length": 64,
    "max_predictions_per_seq": 10,
    "dupe_factor": 4,
    "paragraphs_per_document": 1,
    "pretrain_steps": 1000,
    "batch_size": 32,
    "learning_rate": 1e-2,
    "warmup_steps": 50,
    "finetune_steps": 200,
    "finetune_learning_rate": 1e-4,
    "corpus_megabytes": 1.0,
    "seed": 12345,
}


COMMAND = "albert-keras demo"
# What the demo writes at the top of its folder (a rerun replaces these, nothing else).
ENTRIES = ("corpus", "vocab", "records", "untrained", "pretrain", "source_task", "finetune",
           "summary.json", "loss_curves.png")  # fmt: skip


def _stage(title: str) -> float:
    print(f"\n=== {title} ===", flush=True)
    return time.perf_counter()


def run_demo(
    output_dir: str = "demo_output",
    *,
    corpus: str | None = None,
    heldout: str | None = None,
    input_format: str = "text",
    config: dict | None = None,
    finetune_task: str | None = None,
    glue_dir: str | None = None,
    verbose: str | int = 2,
    **settings,
) -> dict:
    """Runs the whole chain and returns (and writes) `summary.json`.

    Args:
        output_dir: str. Everything goes here (`corpus/`, `vocab/`, `records/`, `untrained/`,
            `pretrain/`, `source_task/`, `finetune/`, `summary.json`, `loss_curves.png`).
            A new or empty folder, or an earlier demo's: a rerun replaces the files the earlier
            demo wrote (its manifest lists them) and nothing else; any other folder is refused
            (`albert_keras_contracts.output_folder`).
        corpus: str. Glob(s) of your training text; default: the embedded corpus (docstrings
            and the language reference of the installed Python, see `docstring_corpus`).
        heldout: str. Glob(s) of held-out text for evaluation (needed with `corpus`).
        input_format: str. `"text"` (prose) or `"sentences"` (one per line, blank between docs).
        config: dict. Backbone arguments overriding `DEMO_CONFIG`.
        finetune_task: str. A GLUE task name (with `glue_dir`); default: the docstring-source
            classification made from the embedded corpus.
        glue_dir: str. GLUE's download, for `finetune_task`.
        verbose: passed to `fit`.
        **settings: any of `DEFAULTS` (sizes, steps, learning rates, seed).

    Example (not run as a doctest: the whole demo, minutes of CPU; tests/demo runs it small):
    >>> summary = run_demo("demo_output", pretrain_steps=100, finetune_steps=50)  # doctest: +SKIP
    >>> summary["pretrain"]["after"]["mlm_loss"] < summary["pretrain"]["before"]["mlm_loss"]
    ... # doctest: +SKIP
    True
    """
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown demo setting(s) {', '.join(unknown)}")
    s = {**DEFAULTS, **settings}
    backbone_config = _backbone_config(config or {})
    started = time.perf_counter()
    out = pathlib.Path(output_dir).resolve()
    _check_inputs_outside(out, corpus=corpus, heldout=heldout, glue_dir=glue_dir)
    arguments = {"corpus": corpus, "heldout": heldout, "input_format": input_format,
                 "config": backbone_config, "finetune_task": finetune_task,
                 "glue_dir": glue_dir, **s}  # fmt: skip
    with OutputFolder(out, COMMAND, arguments, overwrite=True) as folder:
        _remove_earlier_run(out)
        for name in ENTRIES:
            folder.claim(name)
        text_flags, task_flags = (corpus, heldout, input_format), (finetune_task, glue_dir)
        return _run_stages(out, s, backbone_config, started, text_flags, task_flags, verbose)


def _run_stages(out, s, backbone_config, started, text_flags, task_flags, verbose) -> dict:
    """The five stages, in the demo's (checked, locked) folder `out`."""
    from albert_keras.demo.demo_data import prepare_corpus, prepare_records
    from albert_keras.demo.demo_finetuning import run_finetuning
    from albert_keras.demo.demo_pretraining import run_pretraining
    from albert_keras.demo.demo_report import plot_curves, print_summary, write_summary

    corpus, heldout, input_format = text_flags
    finetune_task, glue_dir = task_flags
    summary = {"output_dir": str(out), "settings": s}
    timings = summary["seconds"] = {}
    t = _stage("1/5 corpus")
    text = prepare_corpus(out, corpus, heldout, s["corpus_megabytes"])
    summary["corpus"] = text["summary"]
    timings["corpus"] = time.perf_counter() - t

    t = _stage("2/5 SentencePiece vocabulary and records (SOP + n-gram masking)")
    data = prepare_records(
        out,
        text,
        input_format=input_format,
        **{k: s[k] for k in ("vocab_size", "max_seq_length", "max_predictions_per_seq")},
        **{k: s[k] for k in ("dupe_factor", "paragraphs_per_document", "seed")},
    )
    summary["vocab"], summary["records"] = data["vocab"], data["examples"]
    print(f"{data['vocab']['vocab_size']} pieces; records: {data['examples']}")
    timings["data"] = time.perf_counter() - t

    t = _stage("3/5 pretraining (MLM + SOP, LAMB), then the reload check")
    run = {
        "batch_size": s["batch_size"],
        "max_seq_length": s["max_seq_length"],
        "max_predictions_per_seq": s["max_predictions_per_seq"],
        "steps": s["pretrain_steps"],
        "learning_rate": s["learning_rate"],
        "warmup_steps": s["warmup_steps"],
        "seed": s["seed"],
    }
    summary.update(run_pretraining(out, data, run, backbone_config, verbose=verbose))
    timings["pretrain"] = time.perf_counter() - t

    t = _stage("4/5 fine-tuning, with and without pretraining")
    summary["finetune"] = run_finetuning(
        out,
        data["spm_model"],
        task=finetune_task,
        glue_dir=glue_dir,
        steps=s["finetune_steps"],
        batch_size=s["batch_size"],
        learning_rate=s["finetune_learning_rate"],
        max_seq_length=s["max_seq_length"],
        seed=s["seed"],
        verbose=verbose,
    )
    timings["finetune"] = time.perf_counter() - t

    _stage("5/5 summary")
    plot_curves(summary, str(out / "loss_curves.png"))
    timings["total"] = time.perf_counter() - started
    write_summary(out / "summary.json", summary)
    print_summary(summary)
    return summary


def _backbone_config(overrides: dict) -> dict:
    """`DEMO_CONFIG` with `overrides`, checked before anything runs."""
    from albert_keras.models import AlbertBackbone

    known = set(AlbertBackbone.presets["albert_base"]) - {"vocabulary_size", "max_sequence_length"}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(
            f"--config {', '.join(unknown)}: not a backbone argument the demo takes; choose "
            f"from {', '.join(sorted(known))} (the vocabulary and sequence length have flags)"
        )
    return {**DEMO_CONFIG, **overrides}


def _remove_earlier_run(out: pathlib.Path) -> None:
    """Removes what an earlier demo wrote here: the entries its manifest lists, nothing else.

    A demo always starts over (its steps would otherwise resume or refuse their own earlier
    output); called with the folder's lock held.
    """
    with open(out / MANIFEST, encoding="utf-8") as file:
        earlier = json.load(file)["files"]
    for name in earlier:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def _check_inputs_outside(out: pathlib.Path, **globs: str | None) -> None:
    """A rerun replaces the demo's folder: the user's corpus or GLUE data must not be in it."""
    for flag, patterns in globs.items():
        for pattern in (patterns or "").split(","):
            for path in glob.glob(pattern.strip()) if pattern.strip() else ():
                inside = os.path.realpath(path)
                if inside == str(out) or inside.startswith(str(out) + os.sep):
                    raise ValueError(
                        f"--{flag} {path} lies inside --output_dir {out}: the demo replaces "
                        "that folder's contents; move it or choose another output folder"
                    )
