"""`albert-keras distill`: a smaller ALBERT pretrained against a frozen teacher, resumable.

The flow is `JobRun`'s, as `albert-keras pretrain`'s: pick the strategy and precision -> infer
the record shapes -> load the teacher (a saved `AlbertPretrainer`) and build the student (the
teacher's architecture, a preset or a JSON config, plus `--config` overrides) -> warm-start the student from the teacher
where the widths match -> evaluate both on held-out records before any training (how much of the
teacher a truncated student keeps) -> compile with LAMB and warmup/linear decay -> restore the
last checkpoint -> `fit` the `AlbertDistiller` -> evaluate -> write the student's `model.keras`
(an `AlbertPretrainer`, which `finetune-glue` takes), `backbone.keras` and `summary.json`.

Resume is exact, as pretraining's: checkpoint periods of `checkpoint_every` steps hold the whole
state (the teacher's frozen weights included) and the batches are a pure function of
(seed, step).
"""

import glob
import json
import os

from albert_keras.distill.albert_distiller import AlbertDistiller
from albert_keras.distill.warm_start import warm_start, warm_start_mismatch
from albert_keras.jobs.job_run import JobRun, text_preprocessor
from albert_keras.models import AlbertBackbone, AlbertPretrainer
from albert_keras.optimizers import Lamb, WarmupLinearDecay
from albert_keras.training import strategy as strategies
from albert_keras.training.model_files import check_outside, load_keras_file, one_line_os_errors
from albert_keras.training.periodic_training import (
    PeriodicTraining,
    held_out_means,
    schedule_config,
    training_folder,
)
from albert_keras.training.precision import loss_scaled
from albert_keras.training.record_inputs import RecordInputs
from albert_keras_contracts import atomic_write
from albert_keras_contracts.text_path import check_model_text_path
from albert_keras_settings import DistillSettings

BEFORE_FILE = "eval_before.json"


def distill(
    settings: DistillSettings | None = None, /, *, verbose: str | int = "auto", **overrides
) -> dict:
    """Distils a saved teacher into a student on pretraining records; returns the summary.

    Args:
        settings: `DistillSettings` (every setting, its default and what it does, written
            once there; `albert-keras distill`'s flags are generated from it).
        verbose: 0 is silent; otherwise one progress line in steps every ~10 s
            (`StepProgress`).
        **overrides: settings as keyword arguments, alone or over `settings`
            (`distill(teacher=..., records=..., output_dir=..., max_steps=100)`).

    What the main settings mean for the run:
        output_dir: gets `model.keras` (the student `AlbertPretrainer`, no sentence head),
            `backbone.keras`, `summary.json`, `eval_before.json`, `checkpoints/`, `logs/`
            (TensorBoard) and the SentencePiece model. The same settings again resume; a
            folder holding anything else is refused (`albert_keras_contracts.output_folder`).
        student_init: `"auto"` starts from the teacher's weights (`warm_start`) when the
            architectures allow it (same width), from random ones otherwise; the summary's
            config says which.

    Example:
    >>> summary = distill(teacher="albert.keras", records="records/*.tfrecord",
    ...                   output_dir="student/", config={"num_layers": 1}, batch_size=8,
    ...                   max_steps=4, eval_records="records/*.tfrecord", eval_steps=2,
    ...                   verbose=0)
    mixed precision: ...
    distilling steps 1..4 on 2 file(s) (new run), student init teacher: ...
    >>> summary["steps"]["total"], "mlm_accuracy" in summary["eval_before"]  # before training
    (4, True)
    """
    return _Distill(settings, overrides, verbose).run()


class _Distill(JobRun):
    """`distill`'s data (records), model (the distiller of teacher and student) and metrics."""

    command = "albert-keras distill"
    settings_class = DistillSettings

    def read_inputs(self) -> dict:
        """Checks the inputs, loads the teacher and chooses the student."""
        s = self.settings
        if not os.path.isfile(s.teacher):
            raise FileNotFoundError(f"--teacher {s.teacher}: no such file")
        check_outside("--teacher", s.teacher, s.output_dir)
        self.spm_model = _find_spm_model(s.teacher, s.spm_model)
        self.inputs = inputs = RecordInputs(s.records, s.eval_records)
        self.check_replicas(s.batch_size)
        self.use_xla = strategies.resolve_jit_compile(s.jit_compile, self.distribution)
        with strategies.scope(self.distribution):
            self.teacher = _load_teacher(s.teacher)
        student = _student_config(s.student, s.config, self.teacher.backbone, inputs.max_seq_length)
        init = _student_init(s.student_init, self.teacher.backbone, student)
        check_model_text_path(self.teacher, s.teacher, s.accept_old_text_path)
        inputs.check_token_ids(
            student["vocabulary_size"], f"--teacher {s.teacher}", self.spm_model,
            s.accept_old_text_path,
        )  # fmt: skip
        self.run_config = _run_config(s, inputs, student, init, self.precision)
        return self.run_config

    def output_folder(self, arguments: dict):
        s = self.settings
        used = {"teacher": s.teacher, "records": s.records, "eval_records": s.eval_records}
        return training_folder(
            s.output_dir, self.command, arguments, (BEFORE_FILE,), inputs=used,
            overwrite=s.overwrite,
        )  # fmt: skip

    def prepare(self, folder) -> None:
        s = self.settings
        self.training = PeriodicTraining(
            folder, self.run_config, max_steps=s.max_steps, checkpoint_every=s.checkpoint_every
        )
        self.start_step = self.chief_step(self.training)
        self.train_data = self.inputs.train_data(
            s.batch_size,
            seed=s.seed,
            start_step=self.start_step,
            dynamic_masking=s.dynamic_masking,
            vocabulary_size=self.run_config["student"]["vocabulary_size"],
        )
        self.eval_data, self.eval_steps = self.inputs.eval_data(s.batch_size, s.eval_steps)
        # Made after seeding (which drops the SentencePiece op of a tokenizer made before).
        self.preprocessor = text_preprocessor(
            self.spm_model, self.inputs.max_seq_length, self.inputs.text_path
        )

    def build(self, folder):
        """The distiller, evaluated before training (`eval_before.json`), then restored."""
        s, run_config = self.settings, self.run_config
        student = AlbertPretrainer(
            AlbertBackbone(**run_config["student"], dtype=run_config["mixed_precision"]),
            sentence_objective=None,
            preprocessor=self.preprocessor,  # saved with it: the student takes strings
        )
        distiller, self.copied = _build_distiller(
            s, self.teacher, student, run_config, self.use_xla
        )
        self.eval_before = _eval_before(
            self.training,
            distiller,
            self.worker_rows(self.eval_data),
            self.eval_steps,
            self.start_step,
        )
        initial_step = self.restore_from_chief(self.training, distiller)
        if initial_step < s.max_steps:
            print(
                f"distilling steps {initial_step + 1}..{s.max_steps} on "
                f"{len(self.inputs.files)} file(s) "
                f"({'resumed' if initial_step else 'new run'}), student init "
                f"{run_config['student_init']}: {strategies.describe(self.distribution)}, "
                f"{run_config['mixed_precision']}, jit_compile={self.use_xla}"
            )
        return distiller

    def fit(self, model) -> None:
        self.training.fit(model, self.worker_rows(self.train_data), self.verbose)

    def evaluate(self, folder, model) -> dict:
        return held_out_means(model, self.worker_rows(self.eval_data), self.eval_steps)

    def save(self, folder, model) -> None:
        self.training.save_pretrainer(model.student, self.spm_model)

    def summary(self, model, figures: dict) -> dict:
        return self.training.run_summary(
            self.inputs,
            self.settings.batch_size,
            distribution=self.distribution,
            jit_compile=self.use_xla,
            steps_per_execution=self.settings.steps_per_execution,
            spm_model=self.spm_model,
            held_out=(figures, self.eval_steps),
            parameters={
                "teacher": int(self.teacher.backbone.count_params()),
                "student": int(model.student.backbone.count_params()),
            },
            warm_started_variables=len(self.copied),
            eval_before=self.eval_before,
        )


# === Steps ===


def _student_init(student_init: str, teacher_backbone, student_config: dict) -> str:
    """What the student starts from: `"teacher"` where `student_init` and the widths allow it."""
    mismatch = warm_start_mismatch(teacher_backbone.get_config(), student_config)
    if student_init == "teacher" and mismatch:
        raise ValueError(f"--student_init teacher: the student cannot start from it ({mismatch})")
    return "random" if student_init == "random" or mismatch else "teacher"


def _run_config(
    s: DistillSettings, inputs: RecordInputs, student_config: dict, init: str, precision: str
) -> dict:
    """What a resumed run must share with the one it continues (its keys and values are what
    runs have recorded since distill was written: keep them)."""
    return {
        "files": inputs.absolute_files(),
        "num_examples": inputs.num_examples,
        "teacher": os.path.abspath(s.teacher),
        "teacher_bytes": os.path.getsize(s.teacher),
        "student": student_config,
        "student_init": init,
        "temperature": s.temperature,
        "loss_weights": [s.soft_target_weight, s.mlm_weight, s.cosine_weight],
        "cosine_positions": s.cosine_positions,
        **schedule_config(s, inputs, precision),
    }


def _build_distiller(
    s: DistillSettings, teacher: AlbertPretrainer, student, run_config: dict, jit_compile: bool
) -> tuple[AlbertDistiller, dict]:
    """The compiled distiller of `teacher` and `student` (warm-started from the teacher when
    the run config says so); and the variables the warm start copied (`{}` for none)."""
    copied = warm_start(teacher, student) if run_config["student_init"] == "teacher" else {}
    distiller = AlbertDistiller(
        teacher,
        student,
        temperature=s.temperature,
        soft_target_weight=s.soft_target_weight,
        mlm_weight=s.mlm_weight,
        cosine_weight=s.cosine_weight,
        cosine_positions=s.cosine_positions,
    )
    schedule = WarmupLinearDecay(
        run_config["learning_rate"], run_config["warmup_steps"], run_config["max_steps"]
    )
    distiller.compile(
        optimizer=loss_scaled(Lamb(learning_rate=schedule), run_config["mixed_precision"]),
        jit_compile=jit_compile,
        steps_per_execution=s.steps_per_execution,
    )  # compile builds the optimizer (AlbertTask.compile): a checkpoint can load
    return distiller, copied


def _eval_before(training: PeriodicTraining, distiller, eval_data, steps: int, start_step: int):
    """Both models on the held-out records before any training, written to `eval_before.json`
    by a new run and read back by a resumed one (`{}` without held-out records)."""
    path = training.path(BEFORE_FILE)
    if eval_data is not None and not start_step:
        # No training yet: the warm-started student is the teacher truncated in depth.
        eval_before = held_out_means(distiller, eval_data, steps)
        with one_line_os_errors(path):
            atomic_write.write_json(path, eval_before, indent=2)
        return eval_before
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {}


# === Building ===


def _load_teacher(path: str) -> AlbertPretrainer:
    model = load_keras_file(path, "--teacher ")
    if not isinstance(model, AlbertPretrainer):
        # ValueError, not TypeError: the CLI reports ValueErrors as one-line errors.
        raise ValueError(  # noqa: TRY004
            f"--teacher {path}: holds {type(model).__name__}, not AlbertPretrainer (distillation "
            "needs the MLM head: pass the pretraining run's model.keras)"
        )
    return model


def _student_config(student: str, overrides: dict, teacher, seq_length: int) -> dict:
    teacher_config = {
        k: v for k, v in teacher.get_config().items() if k not in ("name", "trainable", "dtype")
    }
    if student == "teacher":
        config = dict(teacher_config)
    elif student in AlbertBackbone.presets:
        config = dict(AlbertBackbone.presets[student])
    elif student.endswith(".json"):
        if not os.path.isfile(student):
            raise FileNotFoundError(f"--student {student}: no such file")
        with open(student) as f:
            try:
                config = json.load(f)
            except json.JSONDecodeError as error:
                raise ValueError(f"--student {student}: not JSON ({error})") from None
        if not isinstance(config, dict):
            raise ValueError(f"--student {student}: not a JSON object of backbone arguments")
    else:
        raise ValueError(
            f"--student {student!r}: neither 'teacher', a preset "
            f"({', '.join(sorted(AlbertBackbone.presets))}) nor a .json file"
        )
    config = {**config, **overrides}
    unknown = sorted(set(config) - set(teacher_config))
    if unknown:
        raise ValueError(
            f"--student/--config {', '.join(unknown)}: not a backbone argument; choose from "
            f"{', '.join(sorted(teacher_config))}"
        )
    vocabulary = config.setdefault("vocabulary_size", teacher.vocabulary_size)
    if vocabulary != teacher.vocabulary_size:
        raise ValueError(
            f"the student's vocabulary_size={vocabulary} differs from the teacher's "
            f"{teacher.vocabulary_size}: soft targets need the teacher's vocabulary"
        )
    if "vocabulary_size" not in overrides and student != "teacher":
        config["vocabulary_size"] = teacher.vocabulary_size
    missing = sorted(set(teacher_config) - set(config))
    if missing:
        raise ValueError(f"--student {student}: missing backbone argument(s) {', '.join(missing)}")
    if seq_length > config["max_sequence_length"]:
        raise ValueError(
            f"records of length {seq_length} exceed the student's max_sequence_length="
            f"{config['max_sequence_length']}; pass --config max_sequence_length={seq_length}"
        )
    return config


def _find_spm_model(teacher: str, spm_model: str | None) -> str | None:
    if spm_model:
        if not os.path.isfile(spm_model):
            raise FileNotFoundError(f"--spm_model {spm_model}: no such file")
        return spm_model
    beside = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(teacher)), "*.model")))
    return beside[0] if len(beside) == 1 else None
