"""`albert-keras finetune-glue`: fine-tune a saved ALBERT on one GLUE task, score it, predict.

As the official `run_classifier.py` + `run_glue.sh`: per-task defaults (learning rate, batch,
warmup, steps; max_seq_length 512), the official AdamWeightDecay (Adam without bias correction,
weight decay 0.01 not on LayerNorm or biases) under warmup + linear decay, gradients clipped to norm 1, dropout 0.1 on the pooled output,
evaluation of the dev split every `eval_every` steps and the best checkpoint kept. We add early
stopping on the task's main dev metric (`--patience` evaluations without improvement).

Outputs in `--output_dir`: `model.keras` (the best fine-tuned `AlbertClassifier`, with the
`AlbertPreprocessor` it was trained through: it predicts on strings), `metrics.json`
(`{"task", "split", "num_examples", "metrics", ...}` for the best model on dev),
`dev_predictions/TASK.tsv` and, where GLUE_DIR has test files, `submission/TASK.tsv` (plus
`AX.tsv` from an MNLI model), in GLUE's submission format.
"""

from __future__ import annotations

import math
import os
import pathlib
import time

import keras
import numpy as np

from albert_keras.glue.glue_dataset import glue_dataset
from albert_keras.glue.glue_encoder import GlueEncoder
from albert_keras.glue.glue_evaluation import GlueEvaluation
from albert_keras.glue.glue_metrics import glue_metrics
from albert_keras.glue.glue_task import GlueTask
from albert_keras.glue.glue_tasks import get_glue_task
from albert_keras.glue.submission import write_submission
from albert_keras.glue.tfds_reader import read_glue_tfds
from albert_keras.glue.tsv_reader import read_glue_tsv
from albert_keras.models import AlbertClassifier
from albert_keras.optimizers import AdamWeightDecay, WarmupLinearDecay
from albert_keras.training.model_files import (
    check_outside,
    find_spm_model,
    load_model_file,
    save_keras,
    writing,
)
from albert_keras.training.precision import choose_precision, in_precision, loss_scaled
from albert_keras.training.step_progress import progress_callbacks
from albert_keras.training.stop_at_step import StopAtStep
from albert_keras.training.warmup_early_stopping import WarmupEarlyStopping
from pipelines import atomic_write
from pipelines.output_folder import OutputFolder


def finetune_glue(
    task: str | GlueTask,
    glue_dir: str | os.PathLike | None,
    model: str | os.PathLike | keras.Model,
    output_dir: str | os.PathLike,
    *,
    spm_model: str | os.PathLike | None = None,
    source: str = "tsv",
    max_steps: int | None = None,
    batch_size: int | None = None,
    max_seq_length: int | None = None,
    learning_rate: float | None = None,
    warmup_steps: int | None = None,
    eval_every: int | None = None,
    patience: int = 5,
    seed: int = 12345,
    jit_compile: str | bool = "auto",
    mixed_precision: str = "auto",
    verbose: str | int = 0,
    overwrite: bool = False,
) -> dict:
    """Fine-tunes a backbone on one GLUE task; writes the model, metrics and predictions.

    Args:
        task: str or GlueTask. `"CoLA"`, `"SST-2"`, `"MRPC"`, `"STS-B"`, `"QQP"`, `"MNLI"`,
            `"QNLI"`, `"RTE"` or `"WNLI"` (AX predictions come with MNLI).
        glue_dir: path. GLUE's download (`GLUE_DIR/TASK/*.tsv`); tfds's data_dir for "tfds".
        model: a `.keras` path, or a model: an `AlbertBackbone`, or a model with a `.backbone`
            (`AlbertPretrainer`, `AlbertClassifier`). A path is loaded; a model is used in place.
        output_dir: path. Created if needed; new, empty or an earlier `finetune-glue` run's
            (`pipelines.output_folder`): anything else, `model`'s own folder included, is
            refused before training.
        spm_model: path. The SentencePiece model; default `spm.model` (or the only `*.model`)
            beside a `model` path.
        source: str. `"tsv"` (GLUE's files) or `"tfds"` (`tensorflow_datasets`, network).
        max_steps, batch_size, max_seq_length, learning_rate: override the official defaults.
        warmup_steps: int. Default: the official warmup fraction of `max_steps`.
        eval_every: int. Steps between dev evaluations (default: the official checkpoint
            interval).
        patience: int. Evaluations without improvement before stopping; 0 never stops early.
        seed: int. Seeds Keras (head init, dropout) and the shuffle.
        jit_compile: `"auto"` (Keras's choice: XLA on GPU / TPU, not on CPU) or a bool.
        mixed_precision: str. `"auto"` (bfloat16 where the hardware computes it natively, see
            `albert_keras.training.precision`), `"float32"`, `"mixed_bfloat16"` or
            `"mixed_float16"`. A backbone in another policy is copied into this one.
        verbose: 0 is silent; otherwise one progress line in steps every ~10 s (`StepProgress`).
        overwrite: bool. Over an earlier run with other arguments in `output_dir`, remove what
            it wrote (and nothing else) instead of refusing.

    Returns:
        dict: what `metrics.json` holds.

    Example:
    >>> metrics = finetune_glue("RTE", "glue_data", "albert.keras", "out/rte", max_steps=4,
    ...                         batch_size=8, max_seq_length=32)
    >>> metrics["task"], metrics["split"], metrics["num_examples"], sorted(metrics["metrics"])
    ('RTE', 'dev', 277, ['accuracy'])
    """
    started = time.time()
    task = _trainable_task(task)
    check_outside("--model", model, output_dir)
    # Seeds the head's initializer and dropout. First: seeding clears TF's kernel cache, which
    # would drop the SentencePiece op's resource of an encoder made before it.
    keras.utils.set_random_seed(seed)
    settings = _settings(task, max_steps, batch_size, max_seq_length, learning_rate,
                         warmup_steps, eval_every, patience, seed)  # fmt: skip
    read = _reader(source, glue_dir)
    train = read(task, "train")
    devs = {split: read(task, split) for split in task.dev_splits}
    _, backbone, model_name = load_model_file(model)
    precision, why = choose_precision(mixed_precision, None)
    if verbose:
        print(f"mixed precision: {precision} ({why})")
    backbone = in_precision(backbone, precision)
    settings["mixed_precision"] = precision
    spm_path = find_spm_model(model, spm_model)
    encoder = GlueEncoder(spm_path, settings["max_seq_length"])
    _check_compatible(backbone, encoder, settings["max_seq_length"], spm_path)
    run = {"task": task.name, "model": model_name, "spm_model": str(spm_path), "source": source,
           "glue_dir": None if glue_dir is None else str(glue_dir), **settings}  # fmt: skip
    with OutputFolder(output_dir, "albert-keras finetune-glue", run, overwrite=overwrite) as folder:
        # The encoder's own preprocessor: saved in model.keras (vocabulary and the trained
        # sequence length), so the model predicts on strings and exports with no extra flag.
        classifier = AlbertClassifier(
            backbone, num_classes=task.num_classes, dropout=0.1, preprocessor=encoder.preprocessor
        )
        schedule = WarmupLinearDecay(
            settings["learning_rate"], settings["warmup_steps"], settings["max_steps"]
        )
        classifier.compile(
            optimizer=loss_scaled(AdamWeightDecay(learning_rate=schedule), precision),
            jit_compile=jit_compile,
        )
        dev_inputs = {
            split: glue_dataset(dev, encoder, settings["batch_size"], with_labels=False)
            for split, dev in devs.items()
        }
        train_data = glue_dataset(train, encoder, settings["batch_size"], training=True, seed=seed)
        history, steps_trained = _fit(
            classifier, task, train_data, dev_inputs, devs, settings, verbose
        )
        summary = _predict_and_write(
            folder, classifier, task, read, encoder, devs, dev_inputs, settings["batch_size"]
        )
        best = max(history, key=lambda h: _finite(h[task.main_metric]))
        summary.update(
            {
                "best_step": best["step"],
                "steps_trained": steps_trained,
                "stopped_early": steps_trained < settings["max_steps"],
                "history": history,
                "hyperparameters": settings,
                "model": model_name,
                "spm_model": str(spm_path),
                "train_examples": len(train),
                "wall_seconds": round(time.time() - started, 1),
            }
        )
        with writing(folder, "metrics.json") as path:
            _write_json(path, summary)
    return summary


def _predict_and_write(folder, classifier, task, read, encoder, devs, dev_inputs, batch_size):
    """Scores and predicts every dev split, predicts the test files there are, and saves the
    classifier; returns the summary's scores and `files` (each file claimed in `folder`)."""
    summary = {"task": task.name}
    files = {"model": "model.keras", "dev_predictions": [], "submission": []}
    for split, dev in devs.items():
        predictions = task.predictions(classifier.predict(dev_inputs[split], verbose=0))
        entry = {
            "split": split,
            "num_examples": len(dev),
            "metrics": glue_metrics(task, dev.labels, predictions),
        }
        if split == task.dev_splits[0]:
            summary.update(entry)
        else:  # MNLI's mismatched dev
            summary.setdefault("other_splits", {})[split] = entry
        stem = task.test_splits[split.replace("dev", "test")]
        with writing(folder, "dev_predictions", f"{stem}.tsv") as path:
            write_submission(path, task, dev.index, predictions)
        files["dev_predictions"].append(f"dev_predictions/{stem}.tsv")
    skipped = []
    for split, stem, predicted_task in _test_splits(task):
        try:
            test = read(predicted_task, split)
        except FileNotFoundError as error:  # GLUE_DIR without test files: dev only
            skipped.append(f"{stem}: {error}")
            continue
        inputs = glue_dataset(test, encoder, batch_size, with_labels=False)
        predictions = predicted_task.predictions(classifier.predict(inputs, verbose=0))
        with writing(folder, "submission", f"{stem}.tsv") as path:
            write_submission(path, predicted_task, test.index, predictions)
        files["submission"].append(f"submission/{stem}.tsv")
    with writing(folder, "model.keras") as path:
        save_keras(classifier, path)
    return {**summary, "files": files, "skipped": skipped}


def _fit(classifier, task, train_data, dev_inputs, devs, settings, verbose):
    """Trains `max_steps` steps (or until early stopping), scoring the first dev split every
    `eval_every` steps; leaves the classifier with the best-scoring weights. Returns the
    scores and the number of steps trained.
    """
    first = task.dev_splits[0]
    evaluation = GlueEvaluation(task, dev_inputs[first], devs[first].labels)
    monitor = f"val_{task.main_metric}"
    best = _BestWeights(monitor)
    callbacks = [
        StopAtStep(settings["eval_every"], settings["max_steps"]),
        evaluation,  # before the two below: they read the val_* it adds to the logs
        best,
    ]
    if settings["patience"]:
        # Not inside the warmup: the dev score says little while the learning rate rises.
        callbacks.append(
            WarmupEarlyStopping(monitor, settings["patience"], settings["warmup_steps"])
        )
    fit_verbose, progress = progress_callbacks(verbose, settings["max_steps"])
    classifier.fit(
        train_data,
        steps_per_epoch=settings["eval_every"],
        epochs=math.ceil(settings["max_steps"] / settings["eval_every"]),
        callbacks=callbacks + progress,
        shuffle=False,  # glue_dataset shuffles, seeded
        verbose=fit_verbose,
    )
    steps_trained = int(keras.ops.convert_to_numpy(classifier.optimizer.iterations))
    if best.weights is not None:
        classifier.set_weights(best.weights)
    return evaluation.history, steps_trained


class _BestWeights(keras.callbacks.Callback):
    """Keeps a copy of the weights at the best `monitor` so far (higher is better), in memory.

    In memory rather than in a `best.weights.h5` as `ModelCheckpoint` keeps them: a run is not
    resumed from it, and a file meant a full disk in the middle of HDF5's own writes (a
    traceback, then a crash leaving half a file) and a `checkpoints/` folder to delete after.
    """

    def __init__(self, monitor: str):
        super().__init__()
        self.monitor = monitor
        self.best = -math.inf
        self.weights = None

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is not None and value > self.best:  # NaN never is: as ModelCheckpoint
            self.best = value
            self.weights = self.model.get_weights()


def _settings(task, max_steps, batch_size, max_seq_length, learning_rate, warmup_steps,
              eval_every, patience, seed) -> dict:  # fmt: skip
    """The run's hyperparameters: the official ones for `task`, unless given."""

    def given(value, default):
        return default if value is None else value

    steps = given(max_steps, task.train_steps)
    settings = {
        "max_steps": steps,
        "batch_size": given(batch_size, task.batch_size),
        "max_seq_length": given(max_seq_length, task.max_seq_length),
        "learning_rate": given(learning_rate, task.learning_rate),
        # A shorter run keeps the official warmup fraction.
        "warmup_steps": given(warmup_steps, round(task.warmup_steps * steps / task.train_steps)),
        "eval_every": min(given(eval_every, task.eval_every), steps),
        "patience": patience,
        "seed": seed,
        "classifier_dropout": 0.1,
        "weight_decay": 0.01,
    }
    for name in ("max_steps", "batch_size", "max_seq_length", "eval_every"):
        if settings[name] <= 0:
            raise ValueError(f"--{name} must be positive, got {settings[name]}")
    for name in ("learning_rate", "warmup_steps", "patience"):
        if settings[name] < 0:
            raise ValueError(f"--{name} must be >= 0, got {settings[name]}")
    return settings


def _trainable_task(name) -> GlueTask:
    task = get_glue_task(name)
    if not task.trainable:
        raise ValueError(
            f"{task.name} is prediction-only: fine-tune MNLI, which also writes "
            "submission/AX.tsv when GLUE_DIR/diagnostic/diagnostic.tsv exists"
        )
    return task


def _reader(source: str, glue_dir):
    if source == "tsv":
        if glue_dir is None:
            raise ValueError("glue_dir is required with source='tsv'")
        if not pathlib.Path(glue_dir).is_dir():
            raise FileNotFoundError(f"{glue_dir}: --glue_dir not found")
        return lambda task, split: read_glue_tsv(glue_dir, task, split)
    if source == "tfds":
        return lambda task, split: read_glue_tfds(task, split, data_dir=glue_dir)
    raise ValueError(f"source={source!r}: choose 'tsv' or 'tfds'")


def _test_splits(task: GlueTask):
    """(split, submission stem, task) for each test file to predict, AX included for MNLI."""
    for split, stem in task.test_splits.items():
        yield split, stem, task
    if task.diagnostic:
        diagnostic = get_glue_task(task.diagnostic)
        for split, stem in diagnostic.test_splits.items():
            yield split, stem, diagnostic


def _check_compatible(backbone, encoder: GlueEncoder, max_seq_length: int, spm_path) -> None:
    config = backbone.get_config()
    if encoder.vocabulary_size > config["vocabulary_size"]:
        raise ValueError(
            f"{spm_path}: {encoder.vocabulary_size} pieces, but the model embeds "
            f"only {config['vocabulary_size']} tokens (wrong --spm_model?)"
        )
    if max_seq_length > config["max_sequence_length"]:
        raise ValueError(
            f"--max_seq_length {max_seq_length} exceeds the model's "
            f"{config['max_sequence_length']} positions"
        )


def _finite(value: float) -> float:
    return -math.inf if math.isnan(value) else value


def _write_json(path: pathlib.Path, data: dict) -> None:
    atomic_write.write_json(path, _json_safe(data), allow_nan=False)


def _json_safe(value):
    """NumPy scalars to Python; NaN / inf (undefined correlations) to null: strict JSON."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
