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
    schedule_config,
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
        settings: `PretrainSettings`: every setting, its default and its meaning.
        verbose: 0 is silent; otherwise a progress line every ~10 s (`StepProgress`).
        **overrides: settings as keywords, alone or over `settings`.

    `output_dir` gets `model.keras`, `backbone.keras`, `summary.json`, `checkpoints/`, `logs/`
    (TensorBoard) and the SentencePiece model if `spm_model` is given; the same settings resume.

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
    inputs, init, backbone_config = _read_inputs(s)
    distribution, micro_batch, use_xla, precision = _place(s)
    run_config = _run_config(s, inputs, backbone_config, precision)
    _check_vocabulary(s, inputs, backbone_config, init)
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
            gradient_accumulation_steps=s.gradient_accumulation_steps,
        )
        # Built before the model: the reader checks every file's first record, so bad input
        # fails in seconds, not after the model is built.
        train_data = inputs.train_data(
            micro_batch,
            seed=s.seed,
            start_step=training.saved_step() * s.gradient_accumulation_steps,
            dynamic_masking=s.dynamic_masking,
            vocabulary_size=backbone_config["vocabulary_size"],
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
                    f"{strategies.describe(distribution)}, {precision}, jit_compile={use_xla}"
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


# === Setting up ===


def _read_inputs(s: PretrainSettings):
    """The records (first record of every file checked), `--init_from`'s weights, and the
    backbone's arguments: `--init_from`'s model's, else the preset's, with `--config`."""
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
    if s.init_from:
        init = load_init_source(s.init_from)
        pieces = count_pieces(s.spm_model)
        return inputs, init, init_backbone_config(init[0], s.config, pieces, seq_length)
    return inputs, None, _backbone_config(s.preset, s.config, s.spm_model, seq_length)


def _place(s: PretrainSettings):
    """The strategy, the batch each replica computes per forward pass, XLA and the precision."""
    distribution = strategies.get_strategy(s.strategy)
    replicas = strategies.num_replicas(distribution)
    if s.batch_size % replicas:
        raise ValueError(f"--batch_size={s.batch_size} is not divisible by {replicas} replicas")
    micro_batch = micro_batch_size(s.batch_size, s.gradient_accumulation_steps, replicas)
    use_xla = strategies.resolve_jit_compile(s.jit_compile, distribution)
    precision, why = strategies.choose_precision(s.mixed_precision, distribution)
    print(f"mixed precision: {precision} ({why})")
    return distribution, micro_batch, use_xla, precision


def _run_config(s: PretrainSettings, inputs, backbone_config: dict, precision: str) -> dict:
    """What a resumed run must share with the one it continues (recorded in the manifest)."""
    accumulate = s.gradient_accumulation_steps
    return {
        "files": inputs.absolute_files(),
        "num_examples": inputs.num_examples,
        "preset": s.preset,
        "backbone": backbone_config,
        "sentence_objective": None if s.sentence_objective == "none" else s.sentence_objective,
        **schedule_config(s, inputs, precision),
        # Only when used, so checkpoints of runs without them still resume.
        **({"init_from": s.init_from} if s.init_from else {}),
        **({"gradient_accumulation_steps": accumulate} if accumulate > 1 else {}),
    }


def _check_vocabulary(s: PretrainSettings, inputs, backbone_config: dict, init) -> None:
    """Refuses records holding ids the model's vocabulary lacks, naming where it came from:
    `--config vocabulary_size`, else `--spm_model`, else `--init_from`'s model or the preset."""
    source = "--config vocabulary_size" if "vocabulary_size" in s.config else None
    model_source = f"--init_from {s.init_from}" if init else f"--preset {s.preset}"
    source = source or (f"--spm_model {s.spm_model}" if s.spm_model else model_source)
    inputs.check_token_ids(backbone_config["vocabulary_size"], source, s.spm_model)


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
