"""`albert-keras pretrain`: ALBERT pretraining on TFRecord shards, resumable after `kill -9`.

The flow: infer the record shapes -> pick the strategy -> build the pretrainer (a preset plus
`--config` overrides) -> compile with the paper's LAMB and warmup/linear decay -> restore the last
checkpoint if there is one -> `fit` -> evaluate on held-out records -> write `model.keras` (the
pretrainer), `backbone.keras` and `summary.json` into `--output_dir`.

Resume is exact: fit's epochs are checkpoint periods of `checkpoint_every` steps, each ending
with a `StepCheckpoint` of the whole training state, and the batches come from
`read_pretraining_records(start_step=...)`, a pure function of (seed, step). A run killed and
started again with the same command ends with the same weights as a run never stopped.
"""

import math
import os
import time

import keras

from albert_keras.models import AlbertBackbone, AlbertPretrainer
from albert_keras.optimizers import Lamb, PerUpdateSchedule, WarmupLinearDecay, micro_batch_size
from albert_keras.training import strategy as strategies
from albert_keras.training.fit_timer import FitTimer
from albert_keras.training.init_from import (
    count_pieces,
    init_backbone_config,
    initialize_from,
    load_init_source,
)
from albert_keras.training.precision import loss_scaled
from albert_keras.training.step_checkpoint import StepCheckpoint
from albert_keras.training.step_progress import progress_callbacks
from albert_keras.training.step_tensor_board import tensorboard_callbacks
from albert_keras.training.stop_at_step import StopAtStep
from pipelines import atomic_write, read_pretraining_records, record_format
from pipelines.record_files import check_token_ids, count_records, list_record_files
from pipelines.tokenization import spm_vocabulary_size

# The official run: 3,125 warmup steps of 125,000.
OFFICIAL_WARMUP_FRACTION = 3125 / 125_000
CHECKPOINT_DIR = "checkpoints"


def pretrain(
    records: str,
    output_dir: str,
    *,
    preset: str = "albert_base",
    config: dict | None = None,
    sentence_objective: str | None = "sop",
    batch_size: int = 32,
    max_steps: int = 10_000,
    learning_rate: float = 0.00176,
    warmup_steps: int | None = None,
    max_seq_length: int | None = None,
    max_predictions_per_seq: int | None = None,
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
    init_from: str | None = None,
    gradient_accumulation_steps: int = 1,
) -> dict:
    """Pretrains an `AlbertPretrainer` on TFRecords; returns (and writes) the run's summary.

    Args:
        records: str. Glob of training shards (`pipelines.record_format`, docs/design.md); `gs://` works.
        output_dir: str. A local directory; gets `model.keras`, `backbone.keras`,
            `summary.json`, `checkpoints/`, `logs/` (TensorBoard) and the SentencePiece model if
            `spm_model` is given. Running again with the same arguments resumes from
            `checkpoints/`.
        preset: str. An `AlbertBackbone` preset.
        config: dict. Backbone arguments overriding the preset's (e.g. `{"num_layers": 2}`).
        sentence_objective: `"sop"`, `"nsp"` or `None`.
        batch_size: int. The global batch size (split across replicas).
        max_steps: int. Optimizer steps in all.
        learning_rate: float. LAMB's peak rate (official 0.00176 at batch 4096).
        warmup_steps: int. Default: 2.5% of `max_steps`, the official 3,125 / 125,000.
        max_seq_length, max_predictions_per_seq: int. Default: read from the first record.
        dynamic_masking: bool. New masks for every batch of every pass.
        eval_records: str. Glob of held-out shards, evaluated once at the end.
        eval_steps: int. Evaluate at most this many full batches; 0 for every full batch.
        checkpoint_every: int. Steps between checkpoints (and TensorBoard points).
        strategy: str. See `get_strategy`.
        mixed_precision: str. `"auto"`, `"float32"`, `"mixed_bfloat16"`, `"mixed_float16"`.
        jit_compile: `"auto"` (XLA except on CPU with TF) or a bool.
        steps_per_execution: int. Steps per compiled call (large values help TPUs).
        spm_model: str. SentencePiece model copied beside the outputs; sets the vocabulary size
            unless `config` does.
        seed: int. Seeds the initial weights, the data order and dynamic masks.
        verbose: 0 is silent; otherwise one progress line in steps every ~10 s
            (`StepProgress`).
        init_from: str. Start from these weights instead of random ones (`load_init_source`):
            the architecture is theirs (`preset` is ignored; `config` may change `dropout`),
            and their MLM / sentence heads are used when they have them; a note says what is
            fresh. A resumed run continues from its checkpoint as usual.
        gradient_accumulation_steps: int. Each `batch_size` batch is computed as this many
            forward passes of `batch_size / k` examples whose mean gradient makes one update
            (Keras's optimizer accumulation; LAMB's trust ratio sees the accumulated gradient),
            so the paper's batch of 4096 fits on one device. `max_steps`, `checkpoint_every`
            and the learning-rate schedule stay in updates.

    Example:
    >>> tiny = {"vocabulary_size": 50, "num_layers": 2, "num_heads": 2, "embedding_dim": 8,
    ...         "hidden_dim": 16, "intermediate_dim": 32}
    >>> summary = pretrain("records/*.tfrecord", "run/", preset="albert_base", config=tiny,
    ...                    batch_size=8, max_steps=4, verbose=0)
    mixed precision: ...
    pretraining steps 1..4 on 2 file(s) (new run): ...
    >>> summary["train"]["mlm_loss"] < 10, sorted(os.listdir("run"))
    (True, ['backbone.keras', 'checkpoints', 'logs', 'model.keras', 'summary.json'])
    """
    started = time.perf_counter()
    files = _match(records, "--records")
    eval_files = _match(eval_records, "--eval_records") if eval_records else []
    _check_positive(
        batch_size=batch_size,
        max_steps=max_steps,
        checkpoint_every=checkpoint_every,
        steps_per_execution=steps_per_execution,
    )
    if eval_steps < 0:
        raise ValueError(f"--eval_steps={eval_steps} must be >= 0")
    if spm_model and not os.path.isfile(spm_model):
        raise FileNotFoundError(f"--spm_model {spm_model}: no such file")
    seq_length, num_predictions = _record_shapes(files[0], max_seq_length, max_predictions_per_seq)
    init = load_init_source(init_from) if init_from else None
    if init:
        pieces = count_pieces(spm_model)
        backbone_config = init_backbone_config(init[0], config or {}, pieces, seq_length)
    else:
        backbone_config = _backbone_config(preset, config or {}, spm_model, seq_length)

    distribution = strategies.get_strategy(strategy)
    replicas = strategies.num_replicas(distribution)
    if batch_size % replicas:
        raise ValueError(f"--batch_size={batch_size} is not divisible by {replicas} replicas")
    accumulate = gradient_accumulation_steps
    micro_batch = micro_batch_size(batch_size, accumulate, replicas)
    use_xla = strategies.resolve_jit_compile(jit_compile, distribution)
    precision, why = strategies.choose_precision(mixed_precision, distribution)
    print(f"mixed precision: {precision} ({why})")
    run_config = {  # what a resumed run must share with the one it continues
        "files": [path if "://" in path else os.path.abspath(path) for path in files],
        "num_examples": count_records(files, "--records"),
        "preset": preset,
        "backbone": backbone_config,
        "sentence_objective": sentence_objective,
        "batch_size": batch_size,
        "max_steps": max_steps,
        "learning_rate": learning_rate,
        "warmup_steps": (
            round(max_steps * OFFICIAL_WARMUP_FRACTION) if warmup_steps is None else warmup_steps
        ),
        "max_seq_length": seq_length,
        "max_predictions_per_seq": num_predictions,
        "dynamic_masking": dynamic_masking,
        "checkpoint_every": checkpoint_every,
        "mixed_precision": precision,
        "seed": seed,
        # Only when used, so checkpoints of runs without them still resume.
        **({"init_from": init_from} if init_from else {}),
        **({"gradient_accumulation_steps": accumulate} if accumulate > 1 else {}),
    }
    vocabulary = backbone_config["vocabulary_size"]
    source = "--config vocabulary_size" if "vocabulary_size" in (config or {}) else None
    source = source or (f"--spm_model {spm_model}" if spm_model else f"--preset {preset}")
    check_token_ids(files, vocabulary, "--records", source)
    # Before anything random is built: tf.data shuffles mix their seed with TF's global one.
    keras.utils.set_random_seed(seed)
    checkpoint = StepCheckpoint(
        os.path.join(output_dir, CHECKPOINT_DIR), run_config, checkpoint_every, max_steps
    )
    saved = checkpoint.saved_state()
    # Built before the model: the reader checks every file's first record, so bad input fails
    # in seconds, not after the model is built.
    train_data = read_pretraining_records(
        files,
        micro_batch,
        max_seq_length=seq_length,
        max_predictions_per_seq=num_predictions,
        seed=seed,
        start_step=(saved["step"] if saved else 0) * accumulate,
        num_examples=run_config["num_examples"],
        dynamic_masking=dynamic_masking,
        vocabulary_size=backbone_config["vocabulary_size"],
    )
    eval_data = None
    if eval_files:
        full_batches = _full_batches(eval_files, micro_batch)
        check_token_ids(eval_files, vocabulary, "--eval_records", source)
        eval_steps = min(eval_steps, full_batches) if eval_steps else full_batches
        # Repeated, so every batch is full and none is the empty end-of-data step Keras runs on
        # an exhausted dataset (which would count in per-batch means).
        eval_data = read_pretraining_records(
            eval_files,
            micro_batch,
            max_seq_length=seq_length,
            max_predictions_per_seq=num_predictions,
            shuffle=False,
            repeat=True,
        )

    timer = FitTimer()
    with strategies.scope(distribution):
        pretrainer = _build_pretrainer(run_config, use_xla, steps_per_execution)
        if init:
            print(initialize_from(pretrainer, *init, init_from))
        initial_step, _ = checkpoint.restore(pretrainer)
        if initial_step < max_steps:
            print(
                f"pretraining steps {initial_step + 1}..{max_steps} on {len(files)} file(s) "
                f"({'resumed' if initial_step else 'new run'}): "
                f"{strategies.describe(distribution)}, {run_config['mixed_precision']}, "
                f"jit_compile={use_xla}"
            )
            fit_verbose, progress = progress_callbacks(verbose, max_steps, accumulate)
            _fit(
                pretrainer,
                train_data,
                callbacks=[
                    StopAtStep(checkpoint_every * accumulate, max_steps * accumulate),
                    checkpoint,
                    timer,
                    *tensorboard_callbacks(
                        os.path.join(output_dir, "logs"), checkpoint_every, max_steps
                    ),
                    *progress,
                ],
                epochs=math.ceil(max_steps / checkpoint_every),
                initial_epoch=initial_step // checkpoint_every,
                steps_per_epoch=checkpoint_every * accumulate,
                verbose=fit_verbose,
            )
        eval_logs = {}
        if eval_data is not None:
            eval_logs = pretrainer.evaluate(
                eval_data, steps=eval_steps, return_dict=True, verbose=0
            )
            eval_logs = {k: float(v) for k, v in eval_logs.items()}

    os.makedirs(output_dir, exist_ok=True)
    _save_keras(pretrainer, os.path.join(output_dir, "model.keras"))
    _save_keras(pretrainer.backbone, os.path.join(output_dir, "backbone.keras"))
    if spm_model:
        atomic_write.copy_file(spm_model, os.path.join(output_dir, os.path.basename(spm_model)))
    steps_run = max_steps - initial_step
    summary = {
        "config": {
            **run_config,
            "records": records,
            "eval_records": eval_records,
            "eval_steps": eval_steps,
            "jit_compile": use_xla,
            "steps_per_execution": steps_per_execution,
            "spm_model": spm_model,
        },
        "distribution": strategies.describe(distribution),
        "parameters": int(pretrainer.backbone.count_params()),
        "steps": {"total": max_steps, "resumed_from": initial_step, "run": steps_run},
        # Each checkpoint period's means (Keras resets the metrics each period), and the last.
        "history": checkpoint.history,
        "train": {k: v for k, v in checkpoint.history[-1].items() if k != "step"},
        "eval": eval_logs,
        "eval_examples": eval_steps * micro_batch if eval_files else 0,
        "timings": timer.summary(
            steps_run * accumulate, micro_batch * seq_length, time.perf_counter() - started
        ),
    }
    atomic_write.write_json(os.path.join(output_dir, "summary.json"), summary)
    return summary


# === Training ===


def _build_pretrainer(run_config: dict, jit_compile: bool, steps_per_execution: int):
    backbone = AlbertBackbone(**run_config["backbone"], dtype=run_config["mixed_precision"])
    pretrainer = AlbertPretrainer(backbone, sentence_objective=run_config["sentence_objective"])
    if not pretrainer.built:
        pretrainer.build()
    schedule = WarmupLinearDecay(
        run_config["learning_rate"], run_config["warmup_steps"], run_config["max_steps"]
    )
    accumulate = run_config.get("gradient_accumulation_steps", 1)
    optimizer = Lamb(
        learning_rate=PerUpdateSchedule(schedule, accumulate) if accumulate > 1 else schedule,
        gradient_accumulation_steps=accumulate if accumulate > 1 else None,
    )
    optimizer = loss_scaled(optimizer, run_config["mixed_precision"])
    pretrainer.compile(
        optimizer=optimizer,
        jit_compile=jit_compile,
        steps_per_execution=steps_per_execution,
    )
    pretrainer.optimizer.build(pretrainer.trainable_variables)  # so a checkpoint can load
    return pretrainer


def _full_batches(files: list[str], batch_size: int) -> int:
    examples = count_records(files, "--eval_records")
    if examples < batch_size:
        raise ValueError(f"--eval_records: {examples} examples, fewer than a batch of {batch_size}")
    return examples // batch_size


def _fit(pretrainer, dataset, **kwargs):
    import tensorflow as tf

    try:
        # One epoch is one checkpoint period: Keras resets the metrics each epoch, so the logged
        # losses are the period's means, and a resumed run starts at an epoch boundary.
        return pretrainer.fit(dataset, shuffle=False, **kwargs)  # the stream is shuffled
    except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
        reason = error.message.strip().splitlines()[0]
        raise ValueError(f"--records: unreadable record ({reason})") from None


# === Inputs and outputs ===


def _match(pattern: str, flag: str) -> list[str]:
    # gs:// too (TPUs read their input from GCS); files beside the shards are left out, named.
    return list_record_files(pattern, flag)


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"--{name}={value} must be a positive integer")


def _record_shapes(path, max_seq_length=None, max_predictions_per_seq=None) -> tuple[int, int]:
    """Checks the first record of `path` has every feature; returns its two lengths."""
    import tensorflow as tf
    from google.protobuf.message import DecodeError

    try:
        first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
    except tf.errors.OpError as error:
        raise ValueError(f"{path}: not a readable TFRecord file ({error.message})") from None
    if first is None:
        raise ValueError(f"{path}: holds no record")
    try:
        features = tf.train.Example.FromString(first.numpy()).features.feature
    except DecodeError as error:
        raise ValueError(f"{path}: record 0 is not a tf.train.Example ({error})") from None
    missing = [name for name in record_format.TRAINING_FEATURES if name not in features]
    if missing:
        raise ValueError(f"{path}: record 0 lacks feature(s) {', '.join(missing)}")
    seq_length = len(features["input_ids"].int64_list.value)
    num_predictions = len(features["masked_lm_positions"].int64_list.value)
    for flag, want, got in (
        ("max_seq_length", max_seq_length, seq_length),
        ("max_predictions_per_seq", max_predictions_per_seq, num_predictions),
    ):
        if want is not None and want != got:
            raise ValueError(f"{path}: record 0 has {flag} {got}, expected {want}")
    return seq_length, num_predictions


def _backbone_config(preset: str, overrides: dict, spm_model: str | None, seq_length: int) -> dict:
    if preset not in AlbertBackbone.presets:
        raise ValueError(
            f"--preset {preset!r} is unknown; choose one of "
            f"{', '.join(sorted(AlbertBackbone.presets))}"
        )
    config = dict(AlbertBackbone.presets[preset])
    unknown = sorted(set(overrides) - set(config))
    if unknown:
        raise ValueError(
            f"--config {', '.join(unknown)}: not a backbone argument; choose from "
            f"{', '.join(sorted(config))}"
        )
    if spm_model:
        pieces = spm_vocabulary_size(spm_model, "--spm_model")
        if overrides.get("vocabulary_size", pieces) < pieces:
            raise ValueError(
                f"--config vocabulary_size={overrides['vocabulary_size']} is smaller than "
                f"--spm_model {spm_model}'s {pieces} pieces"
            )
        config["vocabulary_size"] = pieces
    config.update(overrides)
    if seq_length > config["max_sequence_length"]:
        raise ValueError(
            f"records of length {seq_length} exceed max_sequence_length="
            f"{config['max_sequence_length']}; pass --config max_sequence_length={seq_length}"
        )
    return config


def _save_keras(model, path):
    with atomic_write.atomic_path(path) as temporary:
        model.save(temporary)
