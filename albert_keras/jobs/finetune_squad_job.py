"""Fine-tune a saved ALBERT on SQuAD v1.1 or v2.0, predict, score.

As the official `run_squad_v1.py` / `run_squad_v2.py` with the release README's settings:
max_seq_length 384, doc_stride 128, max_query_length 64 (or the length a shorter model was
trained at, with a stride and question scaled to it), batch 48, 2 epochs, learning rate 5e-5
(v1.1) / 3e-5 (v2.0) with 10% warmup then linear decay, the official AdamWeightDecay; n-best 20,
max_answer_length 30; v2.0 uses the official v2 head (beam 5 x 5) and picks the no-answer
threshold that maximizes dev F1 (`best_f1_thresh`), as the official `evaluate_v2`. Training is
`model.fit` under any strategy. The command is `albert-keras finetune-squad`
(`albert_keras_cli/finetune_squad.py`); its settings are `FinetuneSquadSettings`.

The flow is `JobRun`'s: pick the strategy and precision -> read the SQuAD files and make their
features (a file with no usable question is refused here) -> load `init_from` under the strategy
and put the head on its backbone -> `fit` -> predict, pick the v2.0 no-answer threshold, score,
write -> save `model.keras` (even when predicting fails: the fine-tuning is not lost).

Outputs in `--output_dir`: `predictions.json` (and `null_odds.json` for v2.0),
`nbest_predictions.json`, `metrics.json` (the official scores of the predictions when the
predict file has answers, for v2.0 also those of the best spans with no "no answer", the
hyperparameters, the feature counts) and `model.keras`.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import keras

from albert_keras.jobs.job_run import JobRun
from albert_keras.models import AlbertQuestionAnswerer
from albert_keras.optimizers import AdamWeightDecay, WarmupLinearDecay
from albert_keras.squad.squad_answers import dev_null_threshold as _dev_threshold
from albert_keras.squad.squad_answers import examples_as_dataset as _articles
from albert_keras.squad.squad_dataset import squad_dataset
from albert_keras.squad.squad_examples import check_strict, read_squad_json
from albert_keras.squad.squad_features import make_squad_features, squad_preprocessor
from albert_keras.squad.squad_metrics import evaluate_squad
from albert_keras.squad.squad_predictions import squad_predictions, write_squad_predictions
from albert_keras.squad.tfds_reader import read_squad_tfds
from albert_keras.training.model_files import (
    check_outside,
    find_spm_model,
    load_model_file,
    writing,
)
from albert_keras.training.model_sequence_length import saved_lengths
from albert_keras.training.precision import in_precision, loss_scaled
from albert_keras.training.step_progress import progress_callbacks
from albert_keras.training.stop_at_step import StopAtStep
from albert_keras.training.stop_on_non_finite_loss import StopOnNonFiniteLoss
from albert_keras_contracts.text_path import check_model_text_path
from albert_keras_contracts.vocabulary_identity import check_model_vocabulary
from albert_keras_settings import FinetuneSquadSettings


def finetune_squad(
    settings: FinetuneSquadSettings | None = None, /, *, verbose: str | int = 0, **overrides
) -> dict:
    """Fine-tunes a backbone on SQuAD, then predicts (and scores) the predict file.

    Args:
        settings: `FinetuneSquadSettings` (every setting, its default and what it does, written
            once there; `albert-keras finetune-squad`'s flags are generated from it).
        verbose: 0 is silent; otherwise one progress line in steps every ~10 s (`StepProgress`).
        **overrides: settings as keyword arguments, alone or over `settings`
            (`finetune_squad(version="2.0", train_file=..., init_from=..., output_dir=...)`).

    What the main settings mean for the run:
        init_from: a `.keras` path or a model with a backbone (see `finetune_glue`); a saved
            `AlbertQuestionAnswerer` with the same head goes on with its trained head.
        output_dir: created if needed; new, empty or an earlier `finetune-squad` run's
            (`albert_keras_contracts.output_folder`), else refused before training.
        source: `"tfds"` reads `squad/v1.1` or `squad/v2.0` (train and validation) from
            `tfds_data_dir` instead of `train_file` / `predict_file`.
        spm_model: default beside an `init_from` path.
        epochs: 0 trains nothing: the model predicts as it is.
        max_steps: the optimizer steps, as `finetune-glue`'s `max_steps`; given, it wins over
            `epochs` (and is recorded in the hyperparameters; `epochs` stays as given).
        mixed_precision: `"auto"` (bfloat16 where the hardware computes it natively),
            `"float32"`, `"mixed_bfloat16"` or `"mixed_float16"` (see `finetune_glue`).

    Returns:
        dict: what `metrics.json` holds.

    Example (not run as a doctest: SQuAD's full train and dev files, not in the repository;
    tests/training runs it on a small file):
    >>> finetune_squad(version="2.0", train_file="train-v2.0.json",
    ...                predict_file="dev-v2.0.json", init_from="albert.keras",
    ...                output_dir="out/")  # doctest: +SKIP
    """
    return _FinetuneSquad(settings, overrides, verbose).run()


class _FinetuneSquad(JobRun):
    """`finetune_squad`'s data (features), model (the answerer) and metrics (official scores)."""

    command = "albert-keras finetune-squad"
    settings_class = FinetuneSquadSettings
    summary_file = "metrics.json"
    seed_first = True  # as finetune-glue (its runs draw what they drew before)

    def read_inputs(self) -> dict:
        # Unset feature lengths from the model's own, read from its file before loading it.
        trained, positions = saved_lengths(self.settings.init_from)
        self.settings = s = self.settings.feature_lengths(trained or positions)
        check_outside("--init_from", s.init_from, s.output_dir)
        self.data = _read_features(s)
        self.hyperparameters = _hyperparameters(s)
        return _run_arguments(s, self.data, self.hyperparameters)

    def build(self, folder):
        answerer, self.model_name = _build_answerer(self.settings, self.precision, self.data)
        return answerer

    def fit(self, model) -> None:
        self.steps, self.history = 0, {}
        if self.data.train_features is not None:
            self.steps, self.history = _train(
                model, self.data.train_features, self.hyperparameters, self.precision, self.verbose
            )

    def evaluate(self, folder, model) -> dict:
        """Predicts (and scores) the predict file; writes the prediction files."""
        data = self.data
        summary = {"version": self.settings.version, "head": model.head,
                   "predict_examples": len(data.predict)}  # fmt: skip
        self.files = _predict_and_score(
            folder, model, self.settings.version, data.predict, data.predict_features,
            self.hyperparameters, summary,
        )  # fmt: skip
        return summary

    def summary(self, model, figures: dict) -> dict:
        """`metrics.json` (keys in the order they always were)."""
        return {
            **figures,
            **_counts(self.data),
            "steps": self.steps,
            "history": self.history,
            "hyperparameters": self.hyperparameters,
            "model": self.model_name,
            "spm_model": str(self.data.spm_path),
            "files": [*self.files, "model.keras"],
            "wall_seconds": round(time.time() - self.started, 1),
        }


# === Steps ===


class _SquadData(NamedTuple):
    """The examples read and the features made from them (train ones: None when the run does
    not train: 0 epochs and no max_steps)."""

    train: object
    predict: object
    spm_path: object
    train_features: object
    predict_features: object


def _read_features(s: FinetuneSquadSettings) -> _SquadData:
    """Reads the SQuAD files and makes their features; refuses, before anything is trained,
    a file that gives no question to train on or predict."""
    train, predict = _read(s.version, s.source, s.train_file, s.predict_file, s.tfds_data_dir,
                           s.trains())  # fmt: skip
    if s.strict:
        check_strict(train)
    for examples in (train, predict):  # skipped questions and empty contexts, one line each
        for line in examples.notes() if examples is not None else ():
            print(line)
    spm_path = find_spm_model(s.init_from, s.spm_model)
    features = _feature_settings(s)
    predict_features = make_squad_features(predict, spm_path, **features)
    # Checked before training: with nothing to predict, the prediction step used to fail after
    # the whole fine-tuning, and the model with it.
    _check_usable(predict, predict_features, "--predict_file")
    train_features = None
    if s.trains():
        train_features = make_squad_features(train, spm_path, is_training=True, **features)
        _check_usable(train, train_features, "--train_file")
    return _SquadData(train, predict, spm_path, train_features, predict_features)


def _feature_settings(s: FinetuneSquadSettings) -> dict:
    return {
        "max_seq_length": s.max_seq_length,
        "doc_stride": s.doc_stride,
        "max_query_length": s.max_query_length,
    }


def _hyperparameters(s: FinetuneSquadSettings) -> dict:
    """What the run records and `metrics.json` reports (keys and order as they always were)."""
    return {
        **_feature_settings(s),
        "batch_size": s.batch_size,
        "epochs": s.epochs,
        # Only when given, so a folder of a run from before still takes the same command.
        **({"max_steps": s.max_steps} if s.max_steps is not None else {}),
        "learning_rate": s.learning_rate_or_default(),
        "warmup_proportion": s.warmup_proportion,
        "n_best_size": s.n_best_size,
        "max_answer_length": s.max_answer_length,
        "seed": s.seed,
        "strategy": s.strategy,
    }


def _run_arguments(s: FinetuneSquadSettings, data: _SquadData, hyperparameters: dict) -> dict:
    """What the output folder's manifest records: a rerun with other arguments is refused (or,
    with `overwrite`, starts anew). Keys and order as they always were, so a folder written
    before still takes the same command."""
    return {"version": s.version, "source": s.source, "train": getattr(data.train, "source", None),
            "predict": data.predict.source, "model": _model_name(s.init_from),
            "spm_model": str(data.spm_path), "head": s.head,
            "mixed_precision": s.mixed_precision, **hyperparameters}  # fmt: skip


def _counts(data: _SquadData) -> dict:
    """The examples and features read, and what was skipped, for `metrics.json`."""
    train = data.train
    return {
        "train_examples": len(train) if train is not None else 0,
        "train_features": len(data.train_features) if data.train_features is not None else 0,
        "predict_features": len(data.predict_features),
        "skipped": {"train": getattr(train, "skipped", {}), "predict": data.predict.skipped},
    }


def _build_answerer(s: FinetuneSquadSettings, precision: str, data: _SquadData):
    """Loads `init_from` (in the strategy's scope: call it within it) and puts a
    question-answering head on its backbone, computing in `precision` (a fine-tuned answerer's
    own head, where it has the head asked for); returns (answerer, the model's name)."""
    loaded, backbone, model_name = load_model_file(s.init_from)
    note = check_model_vocabulary(loaded, model_name, str(data.spm_path))
    check_model_text_path(loaded, model_name, s.accept_old_text_path)
    if note:
        print(note)
    trained = loaded if isinstance(loaded, AlbertQuestionAnswerer) else None
    head = s.head or (trained.head if trained else "simple" if s.version == "1.1" else "v2")
    backbone = in_precision(backbone, precision)
    _check_compatible(backbone, s.max_seq_length, data.spm_path, data.predict_features)
    # Its vocabulary (with its sha256) and sequence length travel in model.keras, so the
    # loaded model answers questions on text (`albert-keras predict`).
    preprocessor = squad_preprocessor(data.spm_path, s.max_seq_length)
    answerer = AlbertQuestionAnswerer(
        backbone,
        head=head,
        preprocessor=preprocessor,
        doc_stride=s.doc_stride,  # saved with it: predict cuts contexts as training did
        max_query_length=s.max_query_length,
    )
    if trained is not None and trained.head == head:
        # A fine-tuned answerer goes on with its own head (to predict, or train further).
        answerer.set_weights(trained.get_weights())
        print(f"{model_name}: its trained {head} head kept")
    elif trained is not None:
        print(f"{model_name}: its {trained.head} head dropped for a new {head} head")
    return answerer, model_name


def _train(answerer, features, hyperparameters, precision, verbose):
    """Compiles `answerer` and fits it (in the strategy's scope); returns (steps, history)."""
    batch_size, epochs = hyperparameters["batch_size"], hyperparameters["epochs"]
    steps_per_epoch = len(features) // batch_size
    steps = hyperparameters.get("max_steps") or max(1, math.ceil(epochs * steps_per_epoch))
    per_epoch = min(steps, steps_per_epoch)
    # --max_steps ends on its step; --epochs runs whole fit epochs, as it always has.
    stop = [StopAtStep(per_epoch, steps)] if "max_steps" in hyperparameters else []
    schedule = WarmupLinearDecay(
        hyperparameters["learning_rate"],
        round(hyperparameters["warmup_proportion"] * steps),
        steps,
    )
    optimizer = AdamWeightDecay(learning_rate=schedule)
    answerer.compile(optimizer=loss_scaled(optimizer, precision))
    data = squad_dataset(features, batch_size, training=True, seed=hyperparameters["seed"])
    fit_verbose, progress = progress_callbacks(verbose, steps)
    fitted = answerer.fit(
        data,
        steps_per_epoch=per_epoch,
        epochs=math.ceil(steps / per_epoch),
        verbose=fit_verbose,
        callbacks=[*stop, StopOnNonFiniteLoss(per_epoch), *progress],  # nan: one line, no model
    )
    return steps, {key: [float(v) for v in values] for key, values in fitted.history.items()}


def _predict_and_score(out, answerer, version, predict, features, hyperparameters, summary):
    """Predicts `predict`, writes the prediction files (claimed in `out`) and, when the file
    has answers, puts the official scores and the null threshold in `summary`; returns the
    names written."""
    outputs = answerer.predict(
        squad_dataset(features, max(hyperparameters["batch_size"], 8)), verbose=0
    )
    result = squad_predictions(
        features,
        outputs,
        n_best_size=hyperparameters["n_best_size"],
        max_answer_length=hyperparameters["max_answer_length"],
    )
    threshold, has_gold = None, any(example.answers for example in predict)
    dataset = _articles(predict) if has_gold else None
    if version == "2.0" and has_gold:
        # The threshold that maximizes dev F1 (official `evaluate_v2`), then the answers.
        threshold = _dev_threshold(dataset, result)
    answers = result.answers(threshold) if version == "2.0" else result.answers()
    null_odds = result.null_odds if version == "2.0" else None
    with writing(out, "predictions.json"):
        out.claim("null_odds.json")
        out.claim("nbest_predictions.json")
        files = write_squad_predictions(out.path, answers, null_odds, result.nbest)
    if has_gold:
        summary["metrics"] = evaluate_squad(dataset, answers, null_odds)
        if version == "2.0":  # the spans alone: every question answered (HasAns_* = span skill)
            summary["metrics_always_answering"] = evaluate_squad(dataset, result.answers())
    summary["null_threshold"] = threshold
    return files


def _check_usable(examples, features, flag: str) -> None:
    """One line naming the file when it gives no question to train on or predict."""
    if len(examples) and len(features):
        return
    skipped = "; ".join(f"{reason}: {n}" for reason, n in examples.skipped.items())
    raise ValueError(
        f"{flag} {examples.source}: no usable question ({len(examples)} read, "
        f"{len(features)} features{'; skipped ' + skipped if skipped else ''})"
    )


def _model_name(model) -> str:
    return type(model).__name__ if isinstance(model, keras.Model) else str(model)


def _read(version, source, train_file, predict_file, data_dir, trains):
    """The train examples (None when not training) and the predict ones, from JSON or tfds;
    refuses a file of the other SQuAD version."""
    train = None
    if source == "json":
        if trains:
            train = read_squad_json(train_file, is_training=True)
        predict = read_squad_json(predict_file, is_training=False)
    else:
        if trains:
            train = read_squad_tfds(version, "train", is_training=True, data_dir=data_dir)
        predict = read_squad_tfds(version, "validation", is_training=False, data_dir=data_dir)
    for examples in (train, predict):
        if examples is not None and examples.version != version:
            raise ValueError(
                f"{examples.source}: a SQuAD {examples.version} file, but --version {version}"
            )
    return train, predict


def _check_compatible(backbone, max_seq_length, spm_path, features) -> None:
    config = backbone.get_config()
    if max_seq_length > config["max_sequence_length"]:
        raise ValueError(
            f"--max_seq_length {max_seq_length} exceeds the model's "
            f"{config['max_sequence_length']} positions"
        )
    largest = int(features.inputs["token_ids"].max(initial=0))
    if largest >= config["vocabulary_size"]:
        raise ValueError(
            f"{spm_path}: piece id {largest} but the model embeds only "
            f"{config['vocabulary_size']} tokens (wrong --spm_model?)"
        )
