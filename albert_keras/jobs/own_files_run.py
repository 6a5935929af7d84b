"""`OwnFilesRun`: fine-tuning a task model on a user's own train / validation (/ test) files.

The steps `finetune-tokens` and `finetune-choice` share, on `JobRun`'s skeleton: read and check
the files (before the folder is touched), load the backbone under the strategy, build and
compile the task model (the official `AdamWeightDecay` under warmup + linear decay, as every
fine-tuning of ours), fit for `epochs` (or `max_steps`) on the seeded, shuffled training
examples, then score the validation file and predict the test file. A job supplies its data
(`read_files`, `encode`) and its model and scores (`make_model`, `score`).
"""

from __future__ import annotations

import math
import pathlib
import time

import keras
import numpy as np

from albert_keras.jobs.job_run import JobRun
from albert_keras.optimizers import AdamWeightDecay, WarmupLinearDecay
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras.training import strategy as strategies
from albert_keras.training.model_files import check_outside, find_spm_model, load_model_file
from albert_keras.training.precision import in_precision, loss_scaled
from albert_keras.training.step_progress import progress_callbacks
from albert_keras_contracts import atomic_write
from albert_keras_contracts.text_path import check_model_text_path
from albert_keras_contracts.vocabulary_identity import check_model_vocabulary


class OwnFilesRun(JobRun):
    """A fine-tuning run on a user's files; a subclass sets `command`, `settings_class` and the
    hooks below. `summary_file` is `metrics.json`."""

    summary_file = "metrics.json"
    seed_first = True
    reports_precision_when_silent = False

    # === The job's hooks ===

    def read_files(self) -> None:
        """Reads `self.settings`' files into `self.train`, `self.validation`, `self.test`
        (None without a test file); one-line errors naming file and line."""
        raise NotImplementedError

    def encode(self, model, examples) -> tuple[dict, np.ndarray]:
        """`(inputs, labels)` NumPy arrays of labelled examples for `model`."""
        raise NotImplementedError

    def make_model(self, backbone, preprocessor) -> keras.Model:
        """The task model over `backbone` (uncompiled)."""
        raise NotImplementedError

    def score(self, folder, model) -> dict:
        """Scores the validation file and predicts the test file; writes their predictions
        (claimed in `folder`); returns the summary's figures."""
        raise NotImplementedError

    # === JobRun's steps ===

    def read_inputs(self) -> dict:
        s = self.settings
        for flag in ("train_file", "validation_file", "test_file"):
            check_outside(f"--{flag}", getattr(s, flag), s.output_dir)
        check_outside("--init_from", s.init_from, s.output_dir)
        self.read_files()
        self.check_replicas(s.batch_size)
        with strategies.scope(self.distribution):  # the strategy owns what it trains
            loaded, backbone, self.model_name = load_model_file(s.init_from)
            if isinstance(s.init_from, keras.Model):  # made outside the strategy: copied in
                copy = type(backbone).from_config(
                    {**backbone.get_config(), "dtype": self.precision}
                )
                copy.set_weights(backbone.get_weights())
                backbone = copy
            self.backbone = in_precision(backbone, self.precision)
        self.spm_path = find_spm_model(s.init_from, s.spm_model)
        message = check_model_vocabulary(loaded, self.model_name, str(self.spm_path))
        check_model_text_path(loaded, self.model_name, s.accept_old_text_path)
        if message:
            self.note(message)
        self.preprocessor = AlbertPreprocessor(
            AlbertTokenizer(str(self.spm_path)), s.max_seq_length
        )
        config = self.backbone.get_config()
        if self.preprocessor.tokenizer.vocabulary_size() > config["vocabulary_size"]:
            raise ValueError(
                f"{self.spm_path}: {self.preprocessor.tokenizer.vocabulary_size()} pieces, but "
                f"the model embeds only {config['vocabulary_size']} tokens (wrong --spm_model?)"
            )
        if s.max_seq_length > config["max_sequence_length"]:
            raise ValueError(
                f"--max_seq_length {s.max_seq_length} exceeds the model's "
                f"{config['max_sequence_length']} positions"
            )
        steps_per_epoch = math.ceil(len(self.train) / s.batch_size)
        self.max_steps = s.max_steps or s.epochs * steps_per_epoch
        self.warmup_steps = round(s.warmup_proportion * self.max_steps)
        return {
            "train_file": s.train_file,
            "validation_file": s.validation_file,
            "test_file": s.test_file,
            "model": self.model_name,
            "spm_model": str(self.spm_path),
            "max_seq_length": s.max_seq_length,
            "batch_size": s.batch_size,
            "max_steps": self.max_steps,
            "warmup_steps": self.warmup_steps,
            "learning_rate": s.learning_rate,
            "dropout": s.dropout,
            "seed": s.seed,
            "mixed_precision": self.precision,
            **self.extra_arguments(),
        }

    def extra_arguments(self) -> dict:
        """Arguments of the job's own (recorded in the manifest); none by default."""
        return {}

    def build(self, folder):
        s = self.settings
        model = self.make_model(self.backbone, self.preprocessor)
        schedule = WarmupLinearDecay(s.learning_rate, self.warmup_steps, self.max_steps)
        model.compile(
            optimizer=loss_scaled(AdamWeightDecay(learning_rate=schedule), self.precision)
        )
        return model

    def fit(self, model) -> None:
        import tensorflow as tf

        from albert_keras_contracts.autotune_off import autotune_off
        from pipelines.seeded_passes import seeded_passes

        s = self.settings
        inputs, labels = self.encode(model, self.train)
        data = autotune_off(
            seeded_passes(tf.data.Dataset.from_tensor_slices((inputs, labels)), len(labels), s.seed)
            .batch(s.batch_size, drop_remainder=strategies.num_replicas(self.distribution) > 1)
            .prefetch(tf.data.AUTOTUNE)
        )
        fit_verbose, progress = progress_callbacks(self.verbose, self.max_steps)
        history = model.fit(
            data,
            steps_per_epoch=self.max_steps,
            epochs=1,
            callbacks=progress,
            shuffle=False,  # shuffled in the dataset, seeded
            verbose=fit_verbose,
        )
        self.final_loss = float(history.history["loss"][-1])

    def evaluate(self, folder, model) -> dict:
        return self.score(folder, model)

    def summary(self, model, figures: dict) -> dict:
        return {
            **figures,
            "steps_trained": int(keras.ops.convert_to_numpy(model.optimizer.iterations)),
            "final_train_loss": round(self.final_loss, 6),
            "train_examples": len(self.train),
            "model": self.model_name,
            "spm_model": str(self.spm_path),
            "hyperparameters": {
                "max_steps": self.max_steps,
                "warmup_steps": self.warmup_steps,
                "batch_size": self.settings.batch_size,
                "max_seq_length": self.settings.max_seq_length,
                "learning_rate": self.settings.learning_rate,
                "dropout": self.settings.dropout,
                "seed": self.settings.seed,
                "mixed_precision": self.precision,
            },
            "distribution": strategies.describe(self.distribution),
            "wall_seconds": round(time.time() - self.started, 1),
        }

    def write_summary(self, path, summary: dict) -> None:
        atomic_write.write_json(path, summary)


def file_name(path) -> str:
    """The file name a prediction file is named after (`dev.txt` -> `dev`)."""
    return pathlib.Path(path).stem
