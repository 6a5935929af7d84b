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

import os

import keras

from albert_keras.models import AlbertBackbone, AlbertPretrainer
from albert_keras.optimizers import Lamb, PerUpdateSchedule, WarmupLinearDecay, micro_batch_size
from albert_keras.training import strategy as strategies
from albert_keras.training.init_from import (
    count_pieces,
    init_backbone_config,
    initialize_from,
    load_init_source,
)
from albert_keras.training.model_files import check_outside
from albert_keras.training.periodic_training import (
    PeriodicTraining,
    held_out_means,
    training_folder,
)
from albert_keras.training.precision import loss_scaled
from albert_keras.training.record_inputs import RecordInputs
from albert_keras_settings import PretrainSettings, resolve_settings
from pipelines.tokenization import spm_vocabulary_size


def pretrain(
    settings: PretrainSettings | None = None, /, *, verbose: str | int = "auto", **overrides
) -> dict:
    """Pretrains an `AlbertPretrainer` on TFRecords; returns (and writes) the run's summary.

    Args:
        settings: `PretrainSettings` (every setting, its default and what it does, written
            once there; `albert-keras pretrain`'s flags are generated from it).
        verbose: 0 is silent; otherwise one progress line in steps every ~10 s
            (`StepProgress`).
        **overrides: settings as keyword arguments, alone or over `settings`
            (`pretrain(records=..., output_dir=..., max_steps=100)`).

    What the main settings mean for the run:
        output_dir: gets `model.keras`, `backbone.keras`, `summary.json`, `checkpoints/`,
            `logs/` (TensorBoard) and the SentencePiece model if `spm_model` is given. Running
            again with the same settings resumes from `checkpoints/`. The folder must be new,
            empty or this command's own (`pipelines.output_folder`).
        init_from: the architecture is that of these weights (`preset` is ignored; `config`
            may change `dropout`); their MLM / sentence heads are used when they have them; a
            note says what is fresh.
        gradient_accumulation_steps: each `batch_size` batch is computed as this many forward
            passes whose mean gradient makes one update (Keras's optimizer accumulation; LAMB's
            trust ratio sees the accumulated gradient), so the paper's batch of 4096 fits on one
            device. `max_steps`, `checkpoint_every` and the schedule stay in updates.

    Example:
    >>> tiny = {"vocabulary_size": 50, "num_layers": 2, "num_heads": 2, "embedding_dim": 8,
    ...         "hidden_dim": 16, "intermediate_dim": 32}
    >>> summary = pretrain(records="records/*.tfrecord", output_dir="run/", config=tiny,
    ...                    batch_size=8, max_steps=4, verbose=0)
    mixed precision: ...
    pretraining steps 1..4 on 2 file(s) (new run): ...
    >>> summary["train"]["mlm_loss"] < 10, sorted(os.listdir("run"))
    (True, ['.albert-keras.json', 'backbone.keras', 'checkpoints', 'logs', 'model.keras',
            'summary.json'])
    """
    s = resolve_settings(PretrainSettings, settings, overrides)
    if s.spm_model and not os.path.isfile(s.spm_model):
        raise FileNotFoundError(f"--spm_model {s.spm_model}: no such file")
    check_outside("--init_from", s.init_from, s.output_dir)
    inputs = RecordInputs(
        s.records,
        s.eval_records,
        max_seq_length=s.max_seq_length,
        max_predictions_per_seq=s.max_predictions_per_seq,
    )
    seq_length = inputs.max_seq_length
    config = s.config
    objective = None if s.sentence_objective == "none" else s.sentence_objective
    init = load_init_source(s.init_from) if s.init_from else None
    if init:
        pieces = count_pieces(s.spm_model)
        backbone_config = init_backbone_config(init[0], config, pieces, seq_length)
    else:
        backbone_config = _backbone_config(s.preset, config, s.spm_model, seq_length)

    distribution = strategies.get_strategy(s.strategy)
    replicas = strategies.num_replicas(distribution)
    if s.batch_size % replicas:
        raise ValueError(f"--batch_size={s.batch_size} is not divisible by {replicas} replicas")
    accumulate = s.gradient_accumulation_steps
    micro_batch = micro_batch_size(s.batch_size, accumulate, replicas)
    use_xla = strategies.resolve_jit_compile(s.jit_compile, distribution)
    precision, why = strategies.choose_precision(s.mixed_precision, distribution)
    print(f"mixed precision: {precision} ({why})")
    run_config = {  # what a resumed run must share with the one it continues
        "files": inputs.absolute_files(),
        "num_examples": inputs.num_examples,
        "preset": s.preset,
        "backbone": backbone_config,
        "sentence_objective": objective,
        "batch_size": s.batch_size,
        "max_steps": s.max_steps,
        "learning_rate": s.learning_rate,
        "warmup_steps": s.warmup_steps_or_default(),
        "max_seq_length": seq_length,
        "max_predictions_per_seq": inputs.max_predictions_per_seq,
        "dynamic_masking": s.dynamic_masking,
        "checkpoint_every": s.checkpoint_every,
        "mixed_precision": precision,
        "seed": s.seed,
        # Only when used, so checkpoints of runs without them still resume.
        **({"init_from": s.init_from} if s.init_from else {}),
        **({"gradient_accumulation_steps": accumulate} if accumulate > 1 else {}),
    }
    vocabulary = backbone_config["vocabulary_size"]
    source = "--config vocabulary_size" if "vocabulary_size" in config else None
    # The model's vocabulary comes from --init_from's model when given, else from the preset.
    model_source = f"--init_from {s.init_from}" if init else f"--preset {s.preset}"
    source = source or (f"--spm_model {s.spm_model}" if s.spm_model else model_source)
    inputs.check_token_ids(vocabulary, source, s.spm_model)
    # Before anything random is built: tf.data shuffles mix their seed with TF's global one.
    keras.utils.set_random_seed(s.seed)
    # The folder is checked and locked before anything is written; equal run configs resume.
    inputs_used = {"records": s.records, "eval_records": s.eval_records, "spm_model": s.spm_model}
    with training_folder(
        s.output_dir, "albert-keras pretrain", run_config, inputs=inputs_used, overwrite=s.overwrite
    ) as folder:
        training = PeriodicTraining(
            folder,
            run_config,
            max_steps=s.max_steps,
            checkpoint_every=s.checkpoint_every,
            gradient_accumulation_steps=accumulate,
        )
        # Built before the model: the reader checks every file's first record, so bad input
        # fails in seconds, not after the model is built.
        train_data = inputs.train_data(
            micro_batch,
            seed=s.seed,
            start_step=training.saved_step() * accumulate,
            dynamic_masking=s.dynamic_masking,
            vocabulary_size=vocabulary,
        )
        eval_data, eval_steps = inputs.eval_data(micro_batch, s.eval_steps)

        with strategies.scope(distribution):
            pretrainer = _build_pretrainer(run_config, use_xla, s.steps_per_execution)
            if init:
                print(initialize_from(pretrainer, *init, s.init_from))
            initial_step = training.restore(pretrainer)
            if initial_step < s.max_steps:
                print(
                    f"pretraining steps {initial_step + 1}..{s.max_steps} on {len(inputs.files)} "
                    f"file(s) ({'resumed' if initial_step else 'new run'}): "
                    f"{strategies.describe(distribution)}, {run_config['mixed_precision']}, "
                    f"jit_compile={use_xla}"
                )
            training.fit(pretrainer, train_data, verbose)
            eval_logs = held_out_means(pretrainer, eval_data, eval_steps)

        return training.finish(
            pretrainer,
            inputs,
            micro_batch,
            distribution=distribution,
            jit_compile=use_xla,
            steps_per_execution=s.steps_per_execution,
            spm_model=s.spm_model,
            held_out=(eval_logs, eval_steps),
            parameters=int(pretrainer.backbone.count_params()),
        )


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
