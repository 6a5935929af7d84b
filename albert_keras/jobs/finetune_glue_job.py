"""`albert-keras finetune-glue`: fine-tune a saved ALBERT on one GLUE task, score it, predict.

As the official `run_classifier.py` + `run_glue.sh`: per-task defaults (learning rate, batch,
warmup, steps; max_seq_length 512, or the model's own where shorter), the official
AdamWeightDecay (Adam without bias correction, weight decay 0.01 not on LayerNorm or biases)
under warmup + linear decay, gradients clipped to norm 1, dropout 0.1 on the pooled output
(`--dropout`), evaluation of the dev split every `eval_every` steps and the best checkpoint
kept. We add early stopping on the task's main dev metric (`patience`
evaluations without improvement) and run under a distribution strategy (`--strategy`, as
`pretrain`): the classifier is built, trained and scored inside it.

The flow is `JobRun`'s: pick the strategy and precision -> read the task's splits -> load the
backbone under the strategy -> build and compile the classifier -> `fit` with dev evaluations ->
score and predict -> write.

Outputs in `output_dir`: `model.keras` (the best fine-tuned `AlbertClassifier`, with the
`AlbertPreprocessor` it was trained through: it predicts on strings), `metrics.json`
(`{"task", "split", "num_examples", "metrics", ...}` for the best model on dev),
`dev_predictions/TASK.tsv` and, where GLUE_DIR has test files, `submission/TASK.tsv` (plus
`AX.tsv` from an MNLI model), in GLUE's submission format.
"""

from __future__ import annotations

import math
import pathlib
import time

import keras
import numpy as np

from albert_keras.glue.glue_dataset import glue_dataset
from albert_keras.glue.glue_encoder import GlueEncoder
from albert_keras.glue.glue_evaluation import GlueEvaluation
from albert_keras.glue.glue_metrics import glue_metrics
from albert_keras.glue.glue_task import GlueTask
from albert_keras.glue.submission import write_submission
from albert_keras.jobs.glue_job_data import (
    glue_reader,
    predicted_splits,
    task_labels,
    trainable_task,
    user_files_task,
)
from albert_keras.jobs.job_run import JobRun
from albert_keras.models import AlbertClassifier
from albert_keras.optimizers import AdamWeightDecay, WarmupLinearDecay
from albert_keras.training import strategy as strategies
from albert_keras.training.best_weights_in_memory import BestWeightsInMemory
from albert_keras.training.model_files import (
    check_outside,
    find_spm_model,
    load_model_file,
    writing,
)
from albert_keras.training.model_sequence_length import model_sequence_length
from albert_keras.training.precision import in_precision, loss_scaled
from albert_keras.training.step_progress import progress_callbacks
from albert_keras.training.stop_at_step import StopAtStep
from albert_keras.training.stop_on_non_finite_loss import StopOnNonFiniteLoss
from albert_keras.training.warmup_early_stopping import WarmupEarlyStopping
from albert_keras_contracts import atomic_write
from albert_keras_contracts.text_path import check_model_text_path
from albert_keras_contracts.vocabulary_identity import check_model_vocabulary
from albert_keras_settings import FinetuneGlueSettings

JIT_COMPILE = {"auto": "auto", "true": True, "false": False}  # "auto": Keras's own choice


def finetune_glue(
    settings: FinetuneGlueSettings | None = None, /, *, verbose: str | int = 0, **overrides
) -> dict:
    """Fine-tunes a backbone on one GLUE task; writes the model, metrics and predictions.

    Args:
        settings: `FinetuneGlueSettings` (every setting, its default and what it does, written
            once there; `albert-keras finetune-glue`'s flags are generated from it).
        verbose: 0 is silent; otherwise one progress line in steps every ~10 s (`StepProgress`).
        **overrides: settings as keyword arguments, alone or over `settings`
            (`finetune_glue(task="RTE", glue_dir=..., init_from=..., output_dir=...)`).

    What the main settings mean for the run:
        init_from: a path is loaded inside the strategy; a model in memory is copied into it
            (its weights, not the object, are fine-tuned).
        output_dir: created if needed; new, empty or an earlier `finetune-glue` run's
            (`albert_keras_contracts.output_folder`): anything else, `init_from`'s own folder included, is
            refused before training.
        spm_model: default `spm.model` (or the only `*.model`) beside an `init_from` path.
        max_steps, batch_size, learning_rate, warmup_steps, eval_every: `None` takes the
            official value for the task; a shorter run keeps the official warmup fraction.
        max_seq_length: `None` takes the model's own (`model_sequence_length`): the length
            `init_from` was trained at, else its positions, at most the official 512.
        mixed_precision: a backbone in another policy is copied into this one.

    Returns:
        dict: what `metrics.json` holds.

    Example:
    >>> metrics = finetune_glue(task="RTE", glue_dir="glue_data", init_from="albert.keras",
    ...                         output_dir="out/rte", max_steps=4, batch_size=8,
    ...                         max_seq_length=32)
    >>> metrics["task"], metrics["split"], metrics["num_examples"], sorted(metrics["metrics"])
    ('RTE', 'dev', 277, ['accuracy'])
    """
    return _FinetuneGlue(settings, overrides, verbose).run()


class _FinetuneGlue(JobRun):
    """`finetune_glue`'s data (the task's splits), model (the classifier) and metrics."""

    command = "albert-keras finetune-glue"
    settings_class = FinetuneGlueSettings
    summary_file = "metrics.json"
    # Seeds the head's initializer and dropout, first (as its runs always have: the same draws).
    seed_first = True
    reports_precision_when_silent = False

    def read_inputs(self) -> dict:
        """The task's splits, the backbone (loaded in the strategy) and its encoder."""
        s = self.settings
        if s.train_file is not None:  # the user's own files, their labels found in train_file
            self.task, self.read = user_files_task(s)
        else:
            self.task, self.read = trainable_task(s.task), glue_reader(s.source, s.glue_dir)
        task = self.task
        check_outside("--model", s.init_from, s.output_dir)
        self.hyperparameters = hyperparameters = _hyperparameters(task, s)
        self.train = self.read(task, "train")
        self.devs = {split: self.read(task, split) for split in task.dev_splits}
        self.check_replicas(hyperparameters["batch_size"])
        with strategies.scope(self.distribution):
            self.backbone, self.model_name = _load_backbone(s, self.precision, self.note)
        hyperparameters["mixed_precision"] = self.precision
        self.spm_path = spm_path = find_spm_model(s.init_from, s.spm_model)
        self.encoder = GlueEncoder(spm_path, hyperparameters["max_seq_length"])
        _check_compatible(self.backbone, self.encoder, hyperparameters["max_seq_length"], spm_path)
        if s.train_file is not None:
            data = {"files": {split: layout.file for split, layout in task.splits.items()},
                    "text_column": s.text_column, "text_pair_column": s.text_pair_column,
                    "label_column": s.label_column, "task_type": s.task_type,
                    "labels": task_labels(task)}  # fmt: skip
        else:
            data = {"source": s.source, "glue_dir": None if s.glue_dir is None else str(s.glue_dir)}
        return {"task": task.name, "model": self.model_name, "spm_model": str(spm_path),
                **data, **hyperparameters}  # fmt: skip

    def build(self, folder):
        jit_compile = JIT_COMPILE[self.settings.jit_compile]
        # The user's labels go into the model (predict and export answer with them); GLUE's
        # models keep answering with class ids, as they always have.
        label_names = self.task.labels if self.settings.train_file is not None else None
        return _compiled_classifier(
            self.backbone, self.task, self.encoder, self.hyperparameters, jit_compile, label_names
        )

    def fit(self, model) -> None:
        """Fine-tunes on the train split, scoring the first dev split every `eval_every`
        steps; leaves the model with the best-scoring weights."""
        batch_size, seed = self.hyperparameters["batch_size"], self.hyperparameters["seed"]
        self.dev_inputs = {
            split: glue_dataset(dev, self.encoder, batch_size, with_labels=False)
            for split, dev in self.devs.items()
        }
        # Global batches; on several workers each keeps its replicas' rows, as pretraining does.
        train_data = self.worker_rows(
            glue_dataset(self.train, self.encoder, batch_size, training=True, seed=seed)
        )
        self.history, self.steps_trained = _fit(
            model, self.task, train_data, self.dev_inputs, self.devs, self.hyperparameters,
            self.verbose,
        )  # fmt: skip

    def evaluate(self, folder, model) -> dict:
        return _predict_and_write(
            folder, model, self.task, self.read, self.encoder, self.devs, self.dev_inputs,
            self.hyperparameters["batch_size"],
        )  # fmt: skip

    def summary(self, model, figures: dict) -> dict:
        """`metrics.json`: the scores, the files, the history (keys in the order they were)."""
        best = max(self.history, key=lambda h: _finite(h[self.task.main_metric]))
        return {
            **figures,
            "best_step": best["step"],
            "steps_trained": self.steps_trained,
            "stopped_early": self.steps_trained < self.hyperparameters["max_steps"],
            "history": self.history,
            "hyperparameters": self.hyperparameters,
            "model": self.model_name,
            "spm_model": str(self.spm_path),
            "train_examples": len(self.train),
            # The user's files' labels, as class ids 0, 1, ... (GLUE's tasks: their own lists).
            **({"labels": task_labels(self.task)} if self.settings.train_file is not None else {}),
            "distribution": strategies.describe(self.distribution),
            "wall_seconds": round(time.time() - self.started, 1),
        }

    def write_summary(self, path, summary: dict) -> None:
        _write_json(path, summary)


# === Steps ===


def _load_backbone(s: FinetuneGlueSettings, precision: str, note) -> tuple:
    """`(backbone, name)`: the backbone of `s.init_from`, computing in `precision`, made
    inside the current strategy (call it within its scope); `note` prints its notes."""
    loaded, backbone, model_name = load_model_file(s.init_from)
    spm_path = str(find_spm_model(s.init_from, s.spm_model))
    message = check_model_vocabulary(loaded, model_name, spm_path)  # a mismatch is refused
    check_model_text_path(loaded, model_name, s.accept_old_text_path)
    if message:
        note(message)
    if isinstance(s.init_from, keras.Model):
        # Its variables were made outside the strategy, which must own what it trains.
        return _copy(backbone, precision), model_name
    return in_precision(backbone, precision), model_name


def _compiled_classifier(backbone, task, encoder, hyperparameters, jit_compile, label_names=None):
    """The task's `AlbertClassifier` over `backbone`, compiled with the official optimizer."""
    # The encoder's own preprocessor: saved in model.keras (vocabulary and the trained sequence
    # length), so the model predicts on strings and exports with no extra flag.
    classifier = AlbertClassifier(
        backbone,
        num_classes=task.num_classes,
        dropout=hyperparameters["classifier_dropout"],
        preprocessor=encoder.preprocessor,
        label_names=label_names,
    )
    schedule = WarmupLinearDecay(
        hyperparameters["learning_rate"],
        hyperparameters["warmup_steps"],
        hyperparameters["max_steps"],
    )
    optimizer = AdamWeightDecay(learning_rate=schedule)
    classifier.compile(
        optimizer=loss_scaled(optimizer, hyperparameters["mixed_precision"]),
        jit_compile=jit_compile,
    )
    return classifier


def _predict_and_write(folder, classifier, task, read, encoder, devs, dev_inputs, batch_size):
    """Scores and predicts every dev split and predicts the test files there are; returns the
    summary's scores and `files` (each file claimed in `folder`; `model.keras` is saved
    after)."""
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
    for split, stem, predicted_task in predicted_splits(task):
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
    return {**summary, "files": files, "skipped": skipped}


def _fit(classifier, task, train_data, dev_inputs, devs, hyperparameters, verbose):
    """Trains `max_steps` steps (or until early stopping), scoring the first dev split every
    `eval_every` steps; leaves the classifier with the best-scoring weights. Returns the
    scores and the number of steps trained.
    """
    first = task.dev_splits[0]
    evaluation = GlueEvaluation(task, dev_inputs[first], devs[first].labels)
    monitor = f"val_{task.main_metric}"
    best = BestWeightsInMemory(monitor)
    callbacks = [
        StopAtStep(hyperparameters["eval_every"], hyperparameters["max_steps"]),
        # A nan loss ends the job in one line, before any evaluation or model is written.
        StopOnNonFiniteLoss(hyperparameters["eval_every"]),
        evaluation,  # before the two below: they read the val_* it adds to the logs
        best,
    ]
    if hyperparameters["patience"]:
        # Not inside the warmup: the dev score says little while the learning rate rises.
        callbacks.append(
            WarmupEarlyStopping(
                monitor, hyperparameters["patience"], hyperparameters["warmup_steps"]
            )
        )
    fit_verbose, progress = progress_callbacks(verbose, hyperparameters["max_steps"])
    classifier.fit(
        train_data,
        steps_per_epoch=hyperparameters["eval_every"],
        epochs=math.ceil(hyperparameters["max_steps"] / hyperparameters["eval_every"]),
        callbacks=callbacks + progress,
        shuffle=False,  # glue_dataset shuffles, seeded
        verbose=fit_verbose,
    )
    steps_trained = int(keras.ops.convert_to_numpy(classifier.optimizer.iterations))
    if best.weights is not None:
        classifier.set_weights(best.weights)
    return evaluation.history, steps_trained


def _hyperparameters(task: GlueTask, s: FinetuneGlueSettings) -> dict:
    """The run's hyperparameters: the official ones for `task`, unless given (as recorded in
    the run's manifest and metrics.json: keep the keys and their order)."""

    def given(value, default):
        return default if value is None else value

    steps = given(s.max_steps, task.train_steps)
    return {
        "max_steps": steps,
        "batch_size": given(s.batch_size, task.batch_size),
        # The model's own length (read from its file before the 20-40 s of loading it).
        "max_seq_length": given(
            s.max_seq_length, model_sequence_length(s.init_from, task.max_seq_length)
        ),
        "learning_rate": given(s.learning_rate, task.learning_rate),
        # A shorter run keeps the official warmup fraction.
        "warmup_steps": given(s.warmup_steps, round(task.warmup_steps * steps / task.train_steps)),
        "eval_every": min(given(s.eval_every, task.eval_every), steps),
        "patience": s.patience,
        "seed": s.seed,
        "classifier_dropout": s.dropout,
        "weight_decay": 0.01,  # AdamWeightDecay's default, the official value
    }


def _copy(model: keras.Model, policy: str) -> keras.Model:
    """A new `model` (same class, config and weights) computing in `policy`."""
    copy = type(model).from_config({**model.get_config(), "dtype": policy})
    copy.set_weights(model.get_weights())
    return copy


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
