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

import keras

from albert_keras.distill.albert_distiller import AlbertDistiller
from albert_keras.distill.warm_start import warm_start, warm_start_mismatch
from albert_keras.models import AlbertBackbone, AlbertPretrainer
from albert_keras.optimizers import Lamb, WarmupLinearDecay
from albert_keras.training import strategy as strategies
from albert_keras.training.flag_checks import check_positive
from albert_keras.training.model_files import check_outside, load_keras_file, one_line_os_errors
from albert_keras.training.periodic_training import PeriodicTraining, training_folder
from albert_keras.training.precision import loss_scaled
from albert_keras.training.pretrain_job import OFFICIAL_WARMUP_FRACTION
from albert_keras.training.record_inputs import RecordInputs
from pipelines import atomic_write

STUDENT_INITS = ("auto", "teacher", "random")
BEFORE_FILE = "eval_before.json"


def distill(
    teacher: str,
    records: str,
    output_dir: str,
    *,
    student: str = "teacher",
    config: dict | None = None,
    student_init: str = "auto",
    temperature: float = 2.0,
    soft_target_weight: float = 5.0,
    mlm_weight: float = 2.0,
    cosine_weight: float = 1.0,
    cosine_positions: str = "masked",
    batch_size: int = 32,
    max_steps: int = 10_000,
    learning_rate: float = 0.00176,
    warmup_steps: int | None = None,
    dynamic_masking: bool = False,
    eval_records: str | None = None,
    eval_steps: int = 100,
    checkpoint_every: int = 1000,
    strategy: str = "auto",
    mixed_precision: str = "auto",
    jit_compile: str | bool = "auto",
    steps_per_execution: int = 1,
    spm_model: str | None = None,
    seed: int = 12345,
    verbose: str | int = "auto",
    overwrite: bool = False,
) -> dict:
    """Distils a saved teacher into a student on pretraining records; returns the summary.

    Args:
        teacher: str. A saved `AlbertPretrainer` (`model.keras` of `albert-keras pretrain`).
        records: str. Glob of training shards (the teacher's, ideally).
        output_dir: str. Gets `model.keras` (the student `AlbertPretrainer`, no sentence head),
            `backbone.keras`, `summary.json`, `eval_before.json`, `checkpoints/`, `logs/`
            (TensorBoard) and the SentencePiece model. The same call again resumes; a folder
            holding anything else is refused (`pipelines.output_folder`).
        student: str. `"teacher"` (the teacher's backbone arguments), an `AlbertBackbone`
            preset, or a JSON file of backbone arguments. The vocabulary is always the
            teacher's.
        config: dict. Student backbone arguments overriding those (e.g. `{"num_layers": 2}`).
        student_init: str. `"teacher"` (`warm_start`), `"random"`, or `"auto"`: the teacher's
            weights when the architectures allow it (same width), random otherwise.
        temperature, soft_target_weight, mlm_weight, cosine_weight, cosine_positions: see
            `AlbertDistiller` (DistilBERT's 2.0, 5.0, 2.0, 1.0).
        batch_size, max_steps, learning_rate, warmup_steps, dynamic_masking, eval_records,
            eval_steps, checkpoint_every, strategy, mixed_precision, jit_compile,
            steps_per_execution, seed, verbose: as `albert_keras.training.pretrain`.
        spm_model: str. SentencePiece model copied beside the student; default the only
            `*.model` beside the teacher.
        overwrite: bool. Over an earlier distillation with other arguments in `output_dir`,
            remove what it wrote (and nothing else) and start anew, instead of refusing.

    Example:
    >>> summary = distill("albert.keras", "records/*.tfrecord", "student/",
    ...                   config={"num_layers": 1}, batch_size=8, max_steps=4,
    ...                   eval_records="records/*.tfrecord", eval_steps=2, verbose=0)
    mixed precision: ...
    distilling steps 1..4 on 2 file(s) (new run), student init teacher: ...
    >>> summary["steps"]["total"], "mlm_accuracy" in summary["eval_before"]  # before training
    (4, True)
    """
    check_positive(
        batch_size=batch_size,
        max_steps=max_steps,
        checkpoint_every=checkpoint_every,
        steps_per_execution=steps_per_execution,
    )
    if student_init not in STUDENT_INITS:
        raise ValueError(f"--student_init={student_init!r} is not one of {STUDENT_INITS}")
    if not os.path.isfile(teacher):
        raise FileNotFoundError(f"--teacher {teacher}: no such file")
    check_outside("--teacher", teacher, output_dir)
    spm_model = _find_spm_model(teacher, spm_model)
    inputs = RecordInputs(records, eval_records)
    seq_length = inputs.max_seq_length

    distribution = strategies.get_strategy(strategy)
    replicas = strategies.num_replicas(distribution)
    if batch_size % replicas:
        raise ValueError(f"--batch_size={batch_size} is not divisible by {replicas} replicas")
    use_xla = strategies.resolve_jit_compile(jit_compile, distribution)
    precision, why = strategies.choose_precision(mixed_precision, distribution)
    print(f"mixed precision: {precision} ({why})")
    with strategies.scope(distribution):
        teacher_model = _load_teacher(teacher)
    student_config = _student_config(student, config or {}, teacher_model.backbone, seq_length)
    mismatch = warm_start_mismatch(teacher_model.backbone.get_config(), student_config)
    if student_init == "teacher" and mismatch:
        raise ValueError(f"--student_init teacher: the student cannot start from it ({mismatch})")
    init = "random" if student_init == "random" or mismatch else "teacher"
    inputs.check_token_ids(student_config["vocabulary_size"], f"--teacher {teacher}", spm_model)

    run_config = {  # what a resumed run must share with the one it continues
        "files": inputs.absolute_files(),
        "num_examples": inputs.num_examples,
        "teacher": os.path.abspath(teacher),
        "teacher_bytes": os.path.getsize(teacher),
        "student": student_config,
        "student_init": init,
        "temperature": temperature,
        "loss_weights": [soft_target_weight, mlm_weight, cosine_weight],
        "cosine_positions": cosine_positions,
        "batch_size": batch_size,
        "max_steps": max_steps,
        "learning_rate": learning_rate,
        "warmup_steps": (
            round(max_steps * OFFICIAL_WARMUP_FRACTION) if warmup_steps is None else warmup_steps
        ),
        "max_seq_length": seq_length,
        "max_predictions_per_seq": inputs.max_predictions_per_seq,
        "dynamic_masking": dynamic_masking,
        "checkpoint_every": checkpoint_every,
        "mixed_precision": precision,
        "seed": seed,
    }
    keras.utils.set_random_seed(seed)  # before anything random (see pretrain)
    inputs_used = {"teacher": teacher, "records": records, "eval_records": eval_records}
    with training_folder(
        output_dir,
        "albert-keras distill",
        run_config,
        (BEFORE_FILE,),
        inputs=inputs_used,
        overwrite=overwrite,
    ) as folder:
        training = PeriodicTraining(
            folder, run_config, max_steps=max_steps, checkpoint_every=checkpoint_every
        )
        start_step = training.saved_step()
        train_data = inputs.train_data(
            batch_size,
            seed=seed,
            start_step=start_step,
            dynamic_masking=dynamic_masking,
            vocabulary_size=student_config["vocabulary_size"],
        )
        eval_data, eval_steps = inputs.eval_data(batch_size, eval_steps)

        before_path = training.path(BEFORE_FILE)
        with strategies.scope(distribution):
            student_model = AlbertPretrainer(
                AlbertBackbone(**student_config, dtype=precision), sentence_objective=None
            )
            copied = warm_start(teacher_model, student_model) if init == "teacher" else {}
            distiller = AlbertDistiller(
                teacher_model,
                student_model,
                temperature=temperature,
                soft_target_weight=soft_target_weight,
                mlm_weight=mlm_weight,
                cosine_weight=cosine_weight,
                cosine_positions=cosine_positions,
            )
            _compile(distiller, run_config, use_xla, steps_per_execution)
            eval_before = {}
            if eval_data is not None and not start_step:
                # No training yet: the warm-started student is the teacher truncated in depth.
                eval_before = _evaluate(distiller, eval_data, eval_steps)
                with one_line_os_errors(before_path):
                    atomic_write.write_json(before_path, eval_before, indent=2)
            elif os.path.exists(before_path):
                with open(before_path) as f:
                    eval_before = json.load(f)
            initial_step = training.restore(distiller)
            if initial_step < max_steps:
                print(
                    f"distilling steps {initial_step + 1}..{max_steps} on {len(inputs.files)} "
                    f"file(s) ({'resumed' if initial_step else 'new run'}), student init {init}: "
                    f"{strategies.describe(distribution)}, {precision}, jit_compile={use_xla}"
                )
            training.fit(distiller, train_data, verbose)
            eval_logs = _evaluate(distiller, eval_data, eval_steps) if eval_data is not None else {}

        training.save_pretrainer(student_model, spm_model)
        summary = {
            **training.summary(
                batch_size * seq_length,
                **inputs.description(),
                jit_compile=use_xla,
                steps_per_execution=steps_per_execution,
                spm_model=spm_model,
            ),
            "distribution": strategies.describe(distribution),
            "parameters": {
                "teacher": int(teacher_model.backbone.count_params()),
                "student": int(student_model.backbone.count_params()),
            },
            "warm_started_variables": len(copied) if init == "teacher" else 0,
            "eval_before": eval_before,
            "eval": eval_logs,
            "eval_examples": eval_steps * batch_size,
        }
        training.write_summary(summary)
        return summary


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


def _compile(distiller, run_config: dict, jit_compile: bool, steps_per_execution: int) -> None:
    schedule = WarmupLinearDecay(
        run_config["learning_rate"], run_config["warmup_steps"], run_config["max_steps"]
    )
    distiller.compile(
        optimizer=loss_scaled(Lamb(learning_rate=schedule), run_config["mixed_precision"]),
        jit_compile=jit_compile,
        steps_per_execution=steps_per_execution,
    )
    distiller.optimizer.build(distiller.trainable_variables)  # so a checkpoint can load


def _evaluate(distiller, data, steps: int) -> dict:
    logs = distiller.evaluate(data, steps=steps, return_dict=True, verbose=0)
    return {k: float(v) for k, v in logs.items()}
