"""The main job end to end on a small scale: text -> vocabulary -> records -> pretraining ->
saved model -> fine-tuning, with a summary and a plot. `make demo` runs it on the embedded
docstring corpus (no download); flags point it at your own corpus and sizes.
"""

import glob
import json
import os
import pathlib
import time

import numpy as np

# A model small enough to learn something visible in a few CPU minutes (2 cores).
DEMO_CONFIG = {
    "num_layers": 4,
    "num_heads": 4,
    "embedding_dim": 64,
    "hidden_dim": 128,
    "intermediate_dim": 512,
    "num_groups": 1,
    "sharing": "all",
}


def _step(title: str):
    print(f"\n=== {title} ===", flush=True)
    return time.perf_counter()


def _eval_pretrainer(model, files, run, batches=20):
    """MLM / sentence accuracy of `model` on the first `batches` held-out batches."""
    from pipelines import read_pretraining_records

    dataset = read_pretraining_records(
        files,
        run["batch_size"],
        max_seq_length=run["max_seq_length"],
        max_predictions_per_seq=run["max_predictions_per_seq"],
        shuffle=False,
        repeat=True,
    )
    return model.evaluate(dataset, steps=batches, return_dict=True, verbose=0)


def _tensorboard_scalars(log_dir: str) -> dict:
    """{tag: [(step, value), ...]} from the event files under `log_dir`."""
    import tensorflow as tf

    scalars = {}
    pattern = os.path.join(log_dir, "**", "events.out.tfevents.*")
    for path in sorted(glob.glob(pattern, recursive=True)):
        split = pathlib.Path(path).parent.name
        for record in tf.data.TFRecordDataset(path):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for value in event.summary.value:
                number = (
                    float(tf.make_ndarray(value.tensor))
                    if value.HasField("tensor")
                    else value.simple_value
                )
                scalars.setdefault(f"{split}/{value.tag}", []).append((event.step, number))
    return scalars


def _plot(scalars: dict, finetune_history: list | None, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    for tag, label in (
        ("train/epoch_mlm_loss", "MLM loss"),
        ("train/epoch_sentence_loss", "SOP loss"),
    ):
        if tag in scalars:
            steps, values = zip(*sorted(scalars[tag]))
            axes[0].plot(steps, values, marker=".", label=label)
    axes[0].set(title="Pretraining", xlabel="step", ylabel="loss")
    axes[0].legend()
    for entry_metric in ("accuracy", "matthews_corr", "pearson"):
        points = [(h["step"], h[entry_metric]) for h in finetune_history or [] if entry_metric in h]
        if points:
            axes[1].plot(*zip(*points), marker=".", label=f"dev {entry_metric}")
    axes[1].set(title="Fine-tuning", xlabel="step", ylabel="dev metric")
    axes[1].legend()
    figure.tight_layout()
    tmp = path + ".tmp.png"
    figure.savefig(tmp, dpi=100)
    os.replace(tmp, path)
    plt.close(figure)


def run_demo(
    output_dir: str = "demo_output",
    *,
    corpus: str | None = None,
    heldout: str | None = None,
    input_format: str = "text",
    vocab_size: int = 8000,
    max_seq_length: int = 64,
    max_predictions_per_seq: int = 10,
    dupe_factor: int = 4,
    config: dict | None = None,
    pretrain_steps: int = 600,
    batch_size: int = 32,
    learning_rate: float = 5e-3,
    finetune_task: str | None = None,
    glue_dir: str | None = None,
    finetune_steps: int = 200,
    corpus_megabytes: float = 1.0,
    seed: int = 12345,
) -> dict:
    """Runs the whole chain and returns (and writes) `summary.json`.

    Args:
        output_dir: str. Everything goes here (`corpus/`, `vocab/`, `records/`, `pretrain/`,
            `finetune/`, `summary.json`, `loss_curves.png`).
        corpus: str. Glob(s) of your training text; default: the installed Python's docstrings.
        heldout: str. Glob(s) of held-out text for evaluation (needed with `corpus`).
        input_format: str. `"text"` (prose) or `"sentences"` (one per line, blank between docs).
        vocab_size, max_seq_length, max_predictions_per_seq, dupe_factor: the data's sizes.
        config: dict. Backbone arguments (default `DEMO_CONFIG`).
        pretrain_steps, batch_size, learning_rate: pretraining (LAMB, warmup + linear decay).
        finetune_task: str. A GLUE task name (with `glue_dir`); default: the docstring-source
            classification made from the embedded corpus.
        glue_dir: str. GLUE's download, for `finetune_task`.
        finetune_steps: int. Fine-tuning steps.
        corpus_megabytes: float. Text read per docstring source (the embedded corpus).
        seed: int. Every random draw.

    Example:
    >>> summary = run_demo("demo_output", pretrain_steps=100, finetune_steps=50)
    >>> summary["pretrain"]["after"]["mlm_accuracy"] > summary["pretrain"]["before"]["mlm_accuracy"]
    True
    """
    import keras

    from albert_keras.demo.docstring_corpus import extract_docstring_corpus
    from albert_keras.demo.source_task import write_source_task
    from albert_keras.models import AlbertBackbone, AlbertPretrainer
    from albert_keras.training.finetune_glue import finetune_glue
    from albert_keras.training.pretrain_job import pretrain
    from pipelines.pretraining_data import write_pretraining_data
    from pipelines.train_vocab import train_vocab

    if (corpus is None) != (heldout is None):
        raise ValueError("--corpus and --heldout go together (held-out text for evaluation)")
    if (finetune_task is None) != (glue_dir is None):
        raise ValueError("--finetune_task and --glue_dir go together")
    started = time.perf_counter()
    out = pathlib.Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = {"output_dir": str(out.resolve())}
    timings = summary["seconds"] = {}

    t = _step("1/6 corpus")
    if corpus is None:
        extracted = extract_docstring_corpus(
            out / "corpus", max_megabytes_per_source=corpus_megabytes
        )
        corpus, heldout = extracted["train_files"], extracted["heldout_files"]
        summary["corpus"] = {"source": "installed Python docstrings", **extracted["sources"]}
        print(json.dumps(extracted["sources"]))
    else:
        summary["corpus"] = {"train": corpus, "heldout": heldout}
    timings["corpus"] = time.perf_counter() - t

    t = _step("2/6 SentencePiece vocabulary")
    vocab = train_vocab(
        corpus,
        str(out / "vocab" / "spm"),
        vocab_size=vocab_size,
        input_format=input_format,
        seed=seed,
        hard_vocab_limit=False,
    )
    spm_model = str(out / "vocab" / "spm.model")
    summary["vocab"] = vocab
    timings["vocab"] = time.perf_counter() - t

    t = _step("3/6 pretraining records (SOP + n-gram masking)")
    record_args = {
        "max_seq_length": max_seq_length,
        "max_predictions_per_seq": max_predictions_per_seq,
        "input_format": input_format,
        "seed": seed,
    }
    train_stats = write_pretraining_data(
        corpus,
        spm_model,
        str(out / "records" / "train"),
        dupe_factor=dupe_factor,
        num_shards=2,
        **record_args,
    )
    heldout_stats = write_pretraining_data(
        heldout, spm_model, str(out / "records" / "heldout"), dupe_factor=1, **record_args
    )
    summary["records"] = {
        "train": train_stats.get("examples"),
        "heldout": heldout_stats.get("examples"),
    }
    print(f"records: {summary['records']}")
    timings["records"] = time.perf_counter() - t

    t = _step("4/6 pretraining (MLM + SOP, LAMB)")
    backbone_config = {**DEMO_CONFIG, **(config or {})}
    train_files = str(out / "records" / "train" / "*.tfrecord")
    heldout_files = sorted(glob.glob(str(out / "records" / "heldout" / "*.tfrecord")))
    run = {
        "batch_size": batch_size,
        "max_seq_length": max_seq_length,
        "max_predictions_per_seq": max_predictions_per_seq,
    }
    keras.utils.set_random_seed(seed)  # the same initial weights as pretrain() draws
    untrained = AlbertPretrainer(
        AlbertBackbone(
            vocabulary_size=vocab["vocab_size"],
            max_sequence_length=max_seq_length,
            **backbone_config,
        )
    )
    untrained.compile()
    before = _eval_pretrainer(untrained, heldout_files, run)
    pretrain_dir = out / "pretrain"
    pretrain_summary = pretrain(
        train_files,
        str(pretrain_dir),
        preset="albert_base",
        config={**backbone_config, "max_sequence_length": max_seq_length},
        batch_size=batch_size,
        max_steps=pretrain_steps,
        learning_rate=learning_rate,
        eval_records=",".join(heldout_files),
        eval_steps=20,
        checkpoint_every=max(1, pretrain_steps // 16),
        spm_model=spm_model,
        seed=seed,
        verbose=2,
    )
    after = pretrain_summary["eval"]
    summary["pretrain"] = {
        "config": pretrain_summary["config"]["backbone"],
        "parameters": pretrain_summary["parameters"],
        "steps": pretrain_steps,
        "timings": pretrain_summary["timings"],
        "before": {k: float(v) for k, v in before.items()},
        "after": after,
    }
    for name in ("mlm_accuracy", "sentence_accuracy"):
        print(f"held-out {name}: {before[name]:.3f} before -> {after[name]:.3f} after pretraining")
    timings["pretrain"] = time.perf_counter() - t

    t = _step("5/6 save / reload check")
    reloaded = keras.saving.load_model(pretrain_dir / "model.keras")
    again = _eval_pretrainer(reloaded, heldout_files, run)
    backbone = keras.saving.load_model(pretrain_dir / "backbone.keras")
    batch = next(iter(_first_batch(heldout_files, run)))
    inputs = {
        "token_ids": batch["input_ids"],
        "segment_ids": batch["segment_ids"],
        "padding_mask": batch["input_mask"],
    }
    difference = float(
        np.max(
            np.abs(
                np.asarray(reloaded.backbone(inputs)["sequence_output"])
                - np.asarray(backbone(inputs)["sequence_output"])
            )
        )
    )
    summary["reload"] = {
        "max_abs_difference": difference,
        "eval": {k: float(v) for k, v in again.items()},
    }
    print(f"model.keras and backbone.keras reloaded: max |difference| {difference:.2e}")
    if difference > 1e-5:
        raise RuntimeError(f"reloaded models disagree by {difference}")
    timings["reload"] = time.perf_counter() - t

    t = _step("6/6 fine-tuning")
    if finetune_task is None:
        task = write_source_task(out / "corpus", out / "source_task", seed=seed)
        glue_dir = out
    else:
        task = finetune_task
    result = finetune_glue(
        task,
        str(glue_dir),
        str(pretrain_dir / "model.keras"),
        str(out / "finetune"),
        spm_model=spm_model,
        max_steps=finetune_steps,
        max_seq_length=max_seq_length,
        batch_size=32,
        eval_every=max(1, finetune_steps // 10),
        seed=seed,
        verbose=2,
    )
    summary["finetune"] = result
    timings["finetune"] = time.perf_counter() - t

    _plot(
        _tensorboard_scalars(str(pretrain_dir / "logs")),
        result.get("history"),
        str(out / "loss_curves.png"),
    )
    timings["total"] = time.perf_counter() - started
    _write_summary(out / "summary.json", summary)
    print(f"\nDone in {timings['total']:.0f} s. Everything is in {out.resolve()}:")
    for name in (
        "summary.json",
        "loss_curves.png",
        "pretrain/model.keras",
        "finetune",
        "vocab/spm.model",
    ):
        print(f"  {out / name}")
    return summary


def _first_batch(files, run):
    from pipelines import read_pretraining_records

    return read_pretraining_records(
        files,
        4,
        max_seq_length=run["max_seq_length"],
        max_predictions_per_seq=run["max_predictions_per_seq"],
        shuffle=False,
        repeat=False,
    ).take(1)


def _write_summary(path: pathlib.Path, summary: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary, indent=2, default=str))
    tmp.replace(path)
