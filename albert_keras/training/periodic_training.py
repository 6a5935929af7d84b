"""`PeriodicTraining`: `fit` in checkpoint periods, exactly resumable, then the run's outputs."""

import json
import math
import os
import time

import keras

from albert_keras.training import strategy as strategies
from albert_keras.training.fit_timer import FitTimer
from albert_keras.training.model_files import one_line_os_errors, save_keras
from albert_keras.training.record_inputs import RecordInputs
from albert_keras.training.step_checkpoint import StepCheckpoint, remove_stale_temporaries
from albert_keras.training.step_progress import progress_callbacks
from albert_keras.training.step_tensor_board import tensorboard_callbacks
from albert_keras.training.stop_at_step import StopAtStep
from albert_keras.training.stop_on_non_finite_loss import NonFiniteLoss, StopOnNonFiniteLoss
from albert_keras_contracts import atomic_write
from albert_keras_contracts.output_folder import MANIFEST, OutputFolder, check_apart
from albert_keras_contracts.vocabulary_identity import run_vocabulary_sha256
from albert_keras_settings.setting import check_positive_values
from pipelines.record_reader import bad_record_line

CHECKPOINT_DIR = "checkpoints"
# What a periodic training job writes at the top of its folder (besides the SentencePiece model).
ENTRIES = ("checkpoints", "logs", "model.keras", "backbone.keras", "summary.json")


class PeriodicTraining:
    """Trains a model with `fit` in periods of `checkpoint_every` updates, resumable after a kill.

    One epoch of `fit` is one checkpoint period: it ends with a `StepCheckpoint` of the whole
    training state (weights, optimizer, seed generators), Keras resets the metrics each epoch
    (so the logged losses are each period's means), and a resumed run starts at an epoch
    boundary. `StopAtStep` ends the last period at `max_steps`; TensorBoard, a progress line in
    steps and a `FitTimer` ride along. The pretrain and distill jobs share this block; so can a
    notebook.

    Args:
        output_dir: str, or the `OutputFolder` the job opened (then every entry written is
            claimed in its manifest, and stale temporaries of killed runs are removed). Gets
            `checkpoints/` and `logs/` (TensorBoard) now, and whatever `save_model` and
            `write_summary` write at the end.
        run_config: dict (JSON-able). What a resumed run must share with the run it continues;
            a checkpoint saved with another is refused.
        max_steps: int. Optimizer updates in all.
        checkpoint_every: int. Updates per period.
        gradient_accumulation_steps: int. Batches per update (`fit` counts batches).

    Example:
    >>> from albert_keras.training.record_inputs import RecordInputs
    >>> pretrainer = keras.saving.load_model("albert.keras")
    >>> pretrainer.compile()
    >>> training = PeriodicTraining("run", {"seed": 1}, max_steps=4, checkpoint_every=2)
    >>> start = training.saved_step()  # 0: no checkpoint yet; the batches start there
    >>> data = RecordInputs("records/*.tfrecord").train_data(4, seed=1, start_step=start)
    >>> training.restore(pretrainer)
    0
    >>> training.fit(pretrainer, data, verbose=0)
    >>> training.save_pretrainer(pretrainer)
    >>> sorted(os.listdir("run"))
    ['backbone.keras', 'checkpoints', 'logs', 'model.keras']
    >>> training.summary(4 * 32)["steps"]
    {'total': 4, 'resumed_from': 0, 'run': 4}
    """

    def __init__(
        self,
        output_dir: str | OutputFolder,
        run_config: dict,
        *,
        max_steps: int,
        checkpoint_every: int,
        gradient_accumulation_steps: int = 1,
    ):
        check_positive_values(max_steps=max_steps, checkpoint_every=checkpoint_every)
        self.folder = output_dir if isinstance(output_dir, OutputFolder) else None
        self.output_dir = self.folder.path if self.folder else output_dir
        tokens = self.folder.temporary_tokens if self.folder else ()
        if self.folder:  # the folder is locked: no other run is writing there
            remove_stale_temporaries(self.output_dir, tokens)
        self.run_config = run_config
        self.max_steps = max_steps
        self.checkpoint_every = checkpoint_every
        self.accumulate = gradient_accumulation_steps
        self.checkpoint = StepCheckpoint(
            self.path(CHECKPOINT_DIR), run_config, checkpoint_every, max_steps
        )
        self.checkpoint.temporary_tokens = tokens
        self.timer = FitTimer()
        self.initial_step = 0
        self.started = time.perf_counter()

    def saved_step(self) -> int:
        """The update the newest checkpoint ended at (0 without one), before any model exists."""
        saved = self.checkpoint.saved_state()
        return saved["step"] if saved else 0

    def restore(self, model: keras.Model) -> int:
        """Loads the newest checkpoint into `model` (built and compiled); returns its step."""
        self.initial_step, _ = self.checkpoint.restore(model)
        return self.initial_step

    @property
    def steps_left(self) -> int:
        return self.max_steps - self.initial_step

    def fit(self, model: keras.Model, dataset, verbose: str | int = "auto") -> None:
        """Runs the periods left after `restore`; bad records end it with a one-line error."""
        import tensorflow as tf

        if self.steps_left <= 0:
            return
        accumulate = self.accumulate
        fit_verbose, progress = progress_callbacks(verbose, self.max_steps, accumulate)
        callbacks = [
            StopAtStep(self.checkpoint_every * accumulate, self.max_steps * accumulate),
            # Before the checkpoint: a non-finite loss leaves `fit` before a period's end saves.
            StopOnNonFiniteLoss(self.checkpoint_every * accumulate, accumulate),
            self.checkpoint,
            self.timer,
            *tensorboard_callbacks(self.path("logs"), self.checkpoint_every, self.max_steps),
            *progress,
        ]
        try:
            model.fit(
                dataset,
                shuffle=False,  # the stream is shuffled
                callbacks=callbacks,
                epochs=math.ceil(self.max_steps / self.checkpoint_every),
                initial_epoch=self.initial_step // self.checkpoint_every,
                steps_per_epoch=self.checkpoint_every * accumulate,
                verbose=fit_verbose,
            )
        except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
            _raise_bad_record(error, "--records")
        except NonFiniteLoss as error:
            # Said in the command's one line: what is kept, and that no model was written.
            history = self.checkpoint.history  # the saved periods, a resumed run's included
            kept = (
                f"the checkpoint of step {history[-1]['step']} is kept in "
                f"{self.checkpoint.directory}"
                if history
                else "no checkpoint was saved"
            )
            raise NonFiniteLoss(error.name, error.value, error.step, f"{kept}; no model written")

    def path(self, *names: str) -> str:
        """`output_dir/names...`, claimed in the output folder's manifest when there is one."""
        if self.folder:
            return self.folder.claim(*names)
        return os.path.join(self.output_dir, *names)

    def save_model(self, model: keras.Model, name: str) -> str:
        """Saves `model` as `output_dir/name` atomically (a kill leaves no half-written file)."""
        path = self.path(name)
        with one_line_os_errors(path):
            os.makedirs(self.output_dir, exist_ok=True)
            save_keras(model, path)
        return path

    def save_pretrainer(self, pretrainer: keras.Model, spm_model: str | None = None) -> None:
        """`model.keras` (the whole pretrainer), `backbone.keras`, and the SentencePiece model
        copied beside them when one is given."""
        self.save_model(pretrainer, "model.keras")
        self.save_model(pretrainer.backbone, "backbone.keras")
        if spm_model:
            path = self.path(os.path.basename(spm_model))
            with one_line_os_errors(path):
                atomic_write.copy_file(spm_model, path)

    def summary(self, tokens_per_batch: int, **settings) -> dict:
        """The run's config (`run_config` and `settings`), steps, per-period history,
        last-period means and timings."""
        run = self.steps_left
        return {
            "config": {**self.run_config, **settings},
            "steps": {"total": self.max_steps, "resumed_from": self.initial_step, "run": run},
            # Each checkpoint period's means (Keras resets the metrics each period), and the last.
            "history": self.checkpoint.history,
            "train": {k: v for k, v in self.checkpoint.history[-1].items() if k != "step"},
            "timings": self.timer.summary(
                run * self.accumulate, tokens_per_batch, time.perf_counter() - self.started
            ),
        }

    def write_summary(self, summary: dict) -> None:
        """Writes `output_dir/summary.json` atomically."""
        path = self.path("summary.json")
        with one_line_os_errors(path):
            atomic_write.write_json(path, summary)

    def run_summary(
        self,
        inputs: RecordInputs,
        batch: int,
        *,
        distribution,
        jit_compile: bool,
        steps_per_execution: int,
        spm_model: str | None,
        held_out: tuple[dict, int],
        **figures,
    ) -> dict:
        """A pretraining job's summary (`summary.json`), as pretrain and distill share it.

        Args:
            inputs: the run's `RecordInputs` (its globs and vocabulary go into the config).
            batch: int. Examples per batch fed (the micro-batch when accumulating).
            distribution: the `tf.distribute` strategy it ran under.
            jit_compile, steps_per_execution: recorded in the summary's config.
            spm_model: str. Recorded, and its sha256 as `vocabulary_sha256` (without it, the
                one the records' `stats.json` records).
            held_out: (`held_out_means`' figures, the held-out steps they took).
            **figures: the job's own entries, between `distribution` and `eval`
                (`parameters`, distill's `eval_before`, ...).
        """
        eval_logs, eval_steps = held_out
        return {
            **self.summary(
                batch * inputs.max_seq_length,
                **inputs.description(),
                jit_compile=jit_compile,
                steps_per_execution=steps_per_execution,
                spm_model=spm_model,
            ),
            # Fine-tuning from the saved models (whose configs carry no vocabulary) reads it here.
            "vocabulary_sha256": run_vocabulary_sha256(
                inputs.vocabulary, [*inputs.files, *inputs.eval_files]
            ),
            "distribution": strategies.describe(distribution),
            **figures,
            "eval": eval_logs,
            "eval_examples": eval_steps * batch,
        }


def schedule_config(settings, inputs: RecordInputs, precision: str) -> dict:
    """The part of a pretraining-style run's config (`pretrain`, `distill`) that their settings
    share: batch, steps, schedule, record shapes, masking, checkpoints, precision and seed, in
    the order both record it (a resumed run compares it with the one it continues).

    Args:
        settings: a `PretrainSettings` or `DistillSettings`.
        inputs: the run's `RecordInputs` (its record shapes).
        precision: the dtype policy chosen (`"mixed_bfloat16"`, ...).
    """
    s = settings
    return {
        "batch_size": s.batch_size,
        "max_steps": s.max_steps,
        "learning_rate": s.learning_rate,
        "warmup_steps": s.warmup_steps_or_default(),
        "max_seq_length": inputs.max_seq_length,
        "max_predictions_per_seq": inputs.max_predictions_per_seq,
        "dynamic_masking": s.dynamic_masking,
        "checkpoint_every": s.checkpoint_every,
        "mixed_precision": precision,
        "seed": s.seed,
    }


def held_out_means(model: keras.Model, data, steps: int) -> dict:
    """`model.evaluate`'s means over `steps` batches of `data` as floats; `{}` without data."""
    import tensorflow as tf

    if data is None:
        return {}
    try:
        logs = model.evaluate(data, steps=steps, return_dict=True, verbose=0)
    except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
        _raise_bad_record(error, "--eval_records")
    return {k: float(v) for k, v in logs.items()}


def _raise_bad_record(error, flag: str):
    """One line for a record TensorFlow could not use: the file, record and value the reader's
    checks name (`pipelines.record_reader`), else TensorFlow's first line."""
    bad = bad_record_line(error.message)
    if bad is not None:
        raise ValueError(f"{flag}: {bad}") from None
    reason = error.message.strip().splitlines()[0]
    raise ValueError(f"{flag}: unreadable record ({reason})") from None


def training_folder(
    output_dir: str, command: str, run_config: dict, extra_entries=(), **options
) -> OutputFolder:
    """The `OutputFolder` (not yet opened) of a periodic training job, whose run config is the
    resume key, as its checkpoints' is.

    A run started before output folders had manifests resumes too: a folder holding only this
    job's entries (`ENTRIES`, `extra_entries`, `*.model`) and a checkpoint of this very run
    config is adopted, its manifest written, instead of being refused as a user's folder.

    Args:
        output_dir: str. The job's `--output_dir`.
        command: str. `"albert-keras pretrain"`, `"albert-keras distill"`.
        run_config: dict. What a resumed run must share with the run it continues.
        extra_entries: names the job writes besides `ENTRIES` (distill's `eval_before.json`).
        **options: passed to `OutputFolder` (`inputs`, `overwrite`).
    """
    # Never over what it reads: `--records out/*.tfrecord --output_dir out` is refused.
    inputs = options.get("inputs") or {}
    check_apart("--output_dir", output_dir, {f"--{name}": v for name, v in inputs.items()})
    _adopt_earlier_run(output_dir, command, run_config, (*ENTRIES, *extra_entries))
    return OutputFolder(output_dir, command, run_config, **options)


def _adopt_earlier_run(output_dir: str, command: str, run_config: dict, entries) -> None:
    if "://" in output_dir or os.path.exists(os.path.join(output_dir, MANIFEST)):
        return
    try:
        names = os.listdir(output_dir)
        with open(os.path.join(output_dir, CHECKPOINT_DIR, "checkpoint.json")) as file:
            saved = json.load(file)["run_config"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    ours = json.loads(json.dumps(run_config, default=str))
    names = [name for name in names if not atomic_write.is_temporary_name(name)]
    if saved != ours or not all(n in entries or n.endswith(".model") for n in names):
        return
    adopted = "before manifests (adopted)"  # a str, as a manifest's `created` must be
    manifest = {"command": command, "arguments": ours, "inputs": {}, "created": adopted,
                "updated": adopted, "files": sorted(names)}  # fmt: skip
    atomic_write.write_json(os.path.join(output_dir, MANIFEST), manifest)
