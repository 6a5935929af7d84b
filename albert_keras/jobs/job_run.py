"""`JobRun`: the one skeleton the four jobs go through; each supplies its data, model and metrics."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import time

import keras
import tensorflow as tf

from albert_keras.training import strategy as strategies
from albert_keras.training.model_files import save_keras, writing
from albert_keras.training.multi_worker_strategy import (
    LOST_WORKER_ERRORS,
    broadcast_from_chief,
    chief_value,
    distribute_rows,
    is_chief,
    is_multi_worker,
    lost_worker_line,
    remove_dead_worker_folders,
    worker_folder_prefix,
)
from albert_keras_contracts import atomic_write
from albert_keras_contracts.output_folder import OutputFolder, check_apart
from albert_keras_settings import resolve_settings

# The settings, across the jobs, that name files or folders a job reads.
INPUT_SETTINGS = (
    "records", "eval_records", "init_from", "teacher", "student_init", "spm_model", "glue_dir",
    "train_file", "validation_file", "test_file", "predict_file", "tfds_data_dir",
)  # fmt: skip


class JobRun:
    """One run of a job, from its settings to a written folder, in the steps every job shares.

    `run()` goes: resolve the settings -> op determinism (when `deterministic`) -> strategy ->
    precision -> `read_inputs` (everything that can fail before the folder is touched; returns
    the run's arguments) -> seed -> `output_folder` (ownership and lock: equal arguments
    resume) -> `prepare` (what needs the folder, such as the step a checkpoint saved) -> in the
    strategy's scope, `build` (the model, restored or initialized) and `fit` -> `evaluate` (in
    the scope) -> `save`, atomic, which runs even when the evaluation fails, so the training is
    never lost -> `summary`, written atomically as `summary_file`. A job subclasses it and
    overrides the hooks: its data (`read_inputs`, `prepare`), its model (`build`, `fit`,
    `save`) and its metrics (`evaluate`, `summary`).

    Args:
        settings: the job's settings (an instance of `settings_class`), or None.
        overrides: dict. Settings as keywords, alone or over `settings`.
        verbose: passed to the job's `fit` (0 is silent); a job whose
            `reports_precision_when_silent` is False prints its notes only when it is set.

    Attributes set by `run()` for the hooks: `distribution` (the `tf.distribute` strategy or
    Keras distribution), `precision` (the dtype policy), `started` (`time.time()` at the start).

    Example:
    >>> import dataclasses
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class LineSettings:
    ...     output_dir: str
    ...     seed: int = 1
    ...     strategy: str = "auto"
    ...     deterministic: bool = False
    ...     mixed_precision: str = "float32"
    ...     overwrite: bool = False
    >>> class FitLine(JobRun):
    ...     command, settings_class = "albert-keras example", LineSettings
    ...     def read_inputs(self):
    ...         self.x = np.arange(8.0).reshape(8, 1)
    ...         return {"seed": self.settings.seed}
    ...     def build(self, folder):
    ...         model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    ...         model.compile(optimizer="sgd", loss="mse")
    ...         return model
    ...     def fit(self, model):
    ...         model.fit(self.x, 2 * self.x, epochs=2, verbose=self.verbose)
    ...     def evaluate(self, folder, model):
    ...         return {"mse": model.evaluate(self.x, 2 * self.x, verbose=0)}
    ...     def summary(self, model, figures):
    ...         return {"seed": self.settings.seed, **figures}
    >>> summary = FitLine(None, {"output_dir": "line/"}, verbose=0).run()
    mixed precision: float32 (asked for)
    >>> sorted(summary), sorted(os.listdir("line"))
    (['mse', 'seed'], ['.albert-keras.json', 'model.keras', 'summary.json'])
    """

    # The command that owns the output folder, as a user types it ("albert-keras pretrain").
    command: str
    # The job's frozen settings dataclass (`albert_keras_settings`).
    settings_class: type
    # The file `summary()`'s dict is written to.
    summary_file = "summary.json"
    # Seed before the inputs are read (the fine-tuning jobs) or after (the pretraining jobs).
    # Either order works since the tokenizer's SentencePiece op outlives a seeding
    # (`AlbertTokenizer._sentencepiece`); each job keeps its own so a run draws what it drew
    # before.
    seed_first = False
    # Print the precision chosen (and other notes) even with `verbose=0`.
    reports_precision_when_silent = True

    def __init__(self, settings=None, overrides: dict | None = None, verbose: str | int = 0):
        self.settings = resolve_settings(self.settings_class, settings, overrides or {})
        self.verbose = verbose
        self.distribution = None
        self.precision = None
        self.started = time.time()

    def run(self) -> dict:
        """Runs the steps in order; returns the summary written."""
        s = self.settings
        self.started = time.time()
        # Never over what it reads: the output folder is no input, holds none, lies in none.
        check_apart("--output_dir", s.output_dir, self.input_paths())
        if s.deterministic:
            # Process-wide, and for good: TensorFlow has no public way to turn it off.
            tf.config.experimental.enable_op_determinism()
        if self.seed_first:
            keras.utils.set_random_seed(s.seed)
        self.distribution = strategies.get_strategy(s.strategy)
        if not is_chief(self.distribution):
            # The chief alone owns --output_dir (docs/scaling.md); this worker writes the same
            # files into a folder of its own, removed at the end.
            remove_dead_worker_folders()  # those of workers killed before their end
            with tempfile.TemporaryDirectory(prefix=worker_folder_prefix()) as folder:
                self.settings = dataclasses.replace(s, output_dir=folder)
                with lost_worker_said():
                    return self._run()
        with lost_worker_said():
            return self._run()

    def _run(self) -> dict:
        s = self.settings
        self.precision, why = strategies.choose_precision(s.mixed_precision, self.distribution)
        self.note(f"mixed precision: {self.precision} ({why})")
        arguments = self.read_inputs()
        if not self.seed_first:
            # Before anything random is built: tf.data shuffles mix their seed with TF's.
            keras.utils.set_random_seed(s.seed)
        with self.output_folder(arguments) as folder:
            self.prepare(folder)
            with strategies.scope(self.distribution):
                model = self.build(folder)
                self.fit(model)
            try:
                with strategies.scope(self.distribution):
                    figures = self.evaluate(folder, model)
            finally:
                self.save(folder, model)
            summary = self.summary(model, figures)
            with writing(folder, self.summary_file) as path:
                self.write_summary(path, summary)
        return summary

    # === Helpers for the hooks ===

    def note(self, line: str) -> None:
        """Prints `line` unless the job is silent (`verbose=0` where it reports only then)."""
        if self.verbose or self.reports_precision_when_silent:
            print(line)

    def check_replicas(self, batch_size: int) -> None:
        """Refuses a batch the strategy's replicas cannot share evenly."""
        replicas = strategies.num_replicas(self.distribution)
        if batch_size % replicas:
            raise ValueError(f"--batch_size={batch_size} is not divisible by {replicas} replicas")

    def chief_step(self, training) -> int:
        """`training.saved_step()` (a `PeriodicTraining`): the chief's, on every worker."""
        return chief_value(self.distribution, training.saved_step())

    def restore_from_chief(self, training, model: keras.Model) -> int:
        """`training.restore(model)`; in a multi-worker run, then the chief's step and every
        model and optimizer variable on every worker (the others read no checkpoint)."""
        step = training.restore(model)
        if is_multi_worker(self.distribution):
            variables = [*model.variables, *model.optimizer.variables]
            broadcast_from_chief(self.distribution, variables)
            step = training.initial_step = chief_value(self.distribution, step)
        return step

    def worker_rows(self, dataset):
        """`dataset`'s global batches as this worker's rows (`distribute_rows`)."""
        return distribute_rows(self.distribution, dataset)

    # === The hooks ===

    def read_inputs(self) -> dict:
        """Reads and checks the inputs (the strategy and precision are chosen); returns the run's
        arguments: what a rerun must repeat to resume, recorded in the folder's manifest."""
        raise NotImplementedError

    def input_paths(self) -> dict:
        """What the run reads, by flag (`{"--records": "data/*.tfrecord", ...}`): its output
        folder must be none of them, hold none and lie in none (`check_apart`). By default the
        job's settings named in `INPUT_SETTINGS`."""
        return {f"--{name}": getattr(self.settings, name, None) for name in INPUT_SETTINGS}

    def output_folder(self, arguments: dict) -> OutputFolder:
        """The folder the run owns while it writes (not yet opened)."""
        s = self.settings
        return OutputFolder(s.output_dir, self.command, arguments, overwrite=s.overwrite)

    def prepare(self, folder: OutputFolder) -> None:
        """What needs the opened folder before the model is built (none by default)."""

    def build(self, folder: OutputFolder) -> keras.Model:
        """The model, built in the strategy's scope and restored or initialized."""
        raise NotImplementedError

    def fit(self, model: keras.Model) -> None:
        """Trains `model` (in the strategy's scope)."""
        raise NotImplementedError

    def evaluate(self, folder: OutputFolder, model: keras.Model) -> dict:
        """The trained model's figures (in the strategy's scope); may write predictions."""
        return {}

    def save(self, folder: OutputFolder, model: keras.Model) -> None:
        """Writes the model's files atomically: `model.keras` by default."""
        with writing(folder, "model.keras") as path:
            save_keras(model, path)

    def summary(self, model: keras.Model, figures: dict) -> dict:
        """The run's summary, from what the steps found."""
        raise NotImplementedError

    def write_summary(self, path: str, summary: dict) -> None:
        """Writes `summary` to `path` atomically."""
        atomic_write.write_json(path, summary)


def text_preprocessor(spm_model: str | None, sequence_length: int, text_path: str | None = None):
    """The `AlbertPreprocessor` of a SentencePiece model (None without one), which a pretraining
    job's `model.keras` carries so that the loaded model takes strings.

    Args:
        spm_model: str or None. The SentencePiece `.model` the run's records were written with.
        sequence_length: int. The records' length.
        text_path: str or None. The text path of the records' ids, which the tokenizer records
            (`albert_keras_contracts.text_path`); None: today's.

    Example:
    >>> text_preprocessor("spm.model", 32).sequence_length, text_preprocessor(None, 32)
    (32, None)
    """
    if spm_model is None:
        return None
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

    return AlbertPreprocessor(AlbertTokenizer(spm_model, text_path=text_path), sequence_length)


@contextlib.contextmanager
def lost_worker_said():
    """A collective that lost its peer (a worker killed, its host gone) as one line naming it.

    Raised as a `ValueError`, which the command line prints and exits 2 on; in a run of one
    process these errors are TensorFlow's own and pass through unchanged.
    """
    try:
        yield
    except LOST_WORKER_ERRORS as error:
        if "TF_CONFIG" not in os.environ:
            raise
        raise ValueError(lost_worker_line(error)) from None
