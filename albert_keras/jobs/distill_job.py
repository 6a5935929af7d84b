"""`albert-keras distill`: a smaller ALBERT pretrained against a frozen teacher, resumable.

The flow mirrors `albert-keras pretrain`: infer the record shapes -> pick the strategy -> load
the teacher (a saved `AlbertPretrainer`) and build the student (the teacher's architecture, a
preset or a JSON config, plus `--config` overrides) -> warm-start the student from the teacher
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
from typing import Any, NamedTuple

import keras

from albert_keras.distill.albert_distiller import AlbertDistiller
from albert_keras.distill.warm_start import warm_start, warm_start_mismatch
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
from albert_keras_settings import DistillSettings, resolve_settings

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
    s = resolve_settings(DistillSettings, settings, overrides)
    run = _set_up(s)
    keras.utils.set_random_seed(s.seed)  # before anything random (see pretrain)
    inputs_used = {"teacher": s.teacher, "records": s.records, "eval_records": s.eval_records}
    with training_folder(
        s.output_dir,
        "albert-keras distill",
        run.config,
        (BEFORE_FILE,),
        inputs=inputs_used,
        overwrite=s.overwrite,
    ) as folder:
        training = PeriodicTraining(
            folder, run.config, max_steps=s.max_steps, checkpoint_every=s.checkpoint_every
        )
        return _train(s, run, training, verbose)


# === Steps ===


class _Run(NamedTuple):
    """What `_set_up` found: the run is these, whichever folder it writes."""

    config: dict  # the run config: what a resumed run must share with the one it continues
    inputs: RecordInputs
    distribution: Any  # the tf.distribute strategy
    jit_compile: bool
    teacher: AlbertPretrainer
    spm_model: str | None


def _set_up(s: DistillSettings) -> _Run:
    """Checks the inputs, picks the strategy and precision, loads the teacher and chooses the
    student: everything that can fail before the output folder is touched."""
    if not os.path.isfile(s.teacher):
        raise FileNotFoundError(f"--teacher {s.teacher}: no such file")
    check_outside("--teacher", s.teacher, s.output_dir)
    spm_model = _find_spm_model(s.teacher, s.spm_model)
    inputs = RecordInputs(s.records, s.eval_records)
    distribution = strategies.get_strategy(s.strategy)
    replicas = strategies.num_replicas(distribution)
    if s.batch_size % replicas:
        raise ValueError(f"--batch_size={s.batch_size} is not divisible by {replicas} replicas")
    use_xla = strategies.resolve_jit_compile(s.jit_compile, distribution)
    precision, why = strategies.choose_precision(s.mixed_precision, distribution)
    print(f"mixed precision: {precision} ({why})")
    with strategies.scope(distribution):
        teacher = _load_teacher(s.teacher)
    student = _student_config(s.student, s.config, teacher.backbone, inputs.max_seq_length)
    init = _student_init(s.student_init, teacher.backbone, student)
    inputs.check_token_ids(student["vocabulary_size"], f"--teacher {s.teacher}", spm_model)
    run_config = _run_config(s, inputs, student, init, precision)
    return _Run(run_config, inputs, distribution, use_xla, teacher, spm_model)


def _train(s: DistillSettings, run: _Run, training: PeriodicTraining, verbose) -> dict:
    """Builds the distiller, evaluates it before training, trains it from the last checkpoint,
    evaluates it again and saves the student; returns the summary."""
    start_step = training.saved_step()
    train_data = run.inputs.train_data(
        s.batch_size,
        seed=s.seed,
        start_step=start_step,
        dynamic_masking=s.dynamic_masking,
        vocabulary_size=run.config["student"]["vocabulary_size"],
    )
    eval_data, eval_steps = run.inputs.eval_data(s.batch_size, s.eval_steps)
    with strategies.scope(run.distribution):
        distiller, copied = _build_distiller(s, run.teacher, run.config, run.jit_compile)
        eval_before = _eval_before(training, distiller, eval_data, eval_steps, start_step)
        initial_step = training.restore(distiller)
        if initial_step < s.max_steps:
            print(
                f"distilling steps {initial_step + 1}..{s.max_steps} on {len(run.inputs.files)} "
                f"file(s) ({'resumed' if initial_step else 'new run'}), student init "
                f"{run.config['student_init']}: {strategies.describe(run.distribution)}, "
                f"{run.config['mixed_precision']}, jit_compile={run.jit_compile}"
            )
        training.fit(distiller, train_data, verbose)
        eval_logs = held_out_means(distiller, eval_data, eval_steps)

    return training.finish(
        distiller.student,
        run.inputs,
        s.batch_size,
        distribution=run.distribution,
        jit_compile=run.jit_compile,
        steps_per_execution=s.steps_per_execution,
        spm_model=run.spm_model,
        held_out=(eval_logs, eval_steps),
        parameters={
            "teacher": int(run.teacher.backbone.count_params()),
            "student": int(distiller.student.backbone.count_params()),
        },
        warm_started_variables=len(copied),
        eval_before=eval_before,
    )


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
    s: DistillSettings, teacher: AlbertPretrainer, run_config: dict, jit_compile: bool
) -> tuple[AlbertDistiller, dict]:
    """The student (warm-started from `teacher` when the run config says so) and the compiled
    distiller of the two; and the variables the warm start copied (`{}` for none)."""
    student = AlbertPretrainer(
        AlbertBackbone(**run_config["student"], dtype=run_config["mixed_precision"]),
        sentence_objective=None,
    )
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
    )
    distiller.optimizer.build(distiller.trainable_variables)  # so a checkpoint can load
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
