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
from albert_keras.training.flag_checks import check_positive
from albert_keras.training.init_from import (
    count_pieces,
    init_backbone_config,
    initialize_from,
    load_init_source,
)
from albert_keras.training.model_files import check_outside
from albert_keras.training.periodic_training import PeriodicTraining, training_folder
from albert_keras.training.precision import loss_scaled
from albert_keras.training.record_inputs import RecordInputs
from pipelines.tokenization import spm_vocabulary_size

# The official run: 3,125 warmup steps of 125,000.
OFFICIAL_WARMUP_FRACTION = 3125 / 125_000


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
    overwrite: bool = False,
) -> dict:
    """Pretrains an `AlbertPretrainer` on TFRecords; returns (and writes) the run's summary.

    Args:
        records: str. Glob of training shards (`pipelines.record_format`, docs/design.md); `gs://` works.
        output_dir: str. A local directory; gets `model.keras`, `backbone.keras`,
            `summary.json`, `checkpoints/`, `logs/` (TensorBoard) and the SentencePiece model if
            `spm_model` is given. Running again with the same arguments resumes from
            `checkpoints/`. The folder must be new, empty or this command's own
            (`pipelines.output_folder`): another run's, with other arguments, is refused.
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
        overwrite: bool. Over an earlier run with other arguments in `output_dir`, remove what
            that run wrote (and nothing else) and start anew, instead of refusing.

    Example:
    >>> tiny = {"vocabulary_size": 50, "num_layers": 2, "num_heads": 2, "embedding_dim": 8,
    ...         "hidden_dim": 16, "intermediate_dim": 32}
    >>> summary = pretrain("records/*.tfrecord", "run/", preset="albert_base", config=tiny,
    ...                    batch_size=8, max_steps=4, verbose=0)
    mixed precision: ...
    pretraining steps 1..4 on 2 file(s) (new run): ...
    >>> summary["train"]["mlm_loss"] < 10, sorted(os.listdir("run"))
    (True, ['.albert-keras.json', 'backbone.keras', 'checkpoints', 'logs', 'model.keras',
            'summary.json'])
    """
    check_positive(
        batch_size=batch_size,
        max_steps=max_steps,
        checkpoint_every=checkpoint_every,
        steps_per_execution=steps_per_execution,
    )
    if spm_model and not os.path.isfile(spm_model):
        raise FileNotFoundError(f"--spm_model {spm_model}: no such file")
    check_outside("--init_from", init_from, output_dir)
    inputs = RecordInputs(
        records,
        eval_records,
        max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions_per_seq,
    )
    seq_length = inputs.max_seq_length
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
        "files": inputs.absolute_files(),
        "num_examples": inputs.num_examples,
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
        "max_predictions_per_seq": inputs.max_predictions_per_seq,
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
    # The model's vocabulary comes from --init_from's model when given, else from the preset.
    model_source = f"--init_from {init_from}" if init else f"--preset {preset}"
    source = source or (f"--spm_model {spm_model}" if spm_model else model_source)
    inputs.check_token_ids(vocabulary, source, spm_model)
    # Before anything random is built: tf.data shuffles mix their seed with TF's global one.
    keras.utils.set_random_seed(seed)
    # The folder is checked and locked before anything is written; equal run configs resume.
    inputs_used = {"records": records, "eval_records": eval_records, "spm_model": spm_model}
    with training_folder(
        output_dir, "albert-keras pretrain", run_config, inputs=inputs_used, overwrite=overwrite
    ) as folder:
        training = PeriodicTraining(
            folder,
            run_config,
            max_steps=max_steps,
            checkpoint_every=checkpoint_every,
            gradient_accumulation_steps=accumulate,
        )
        # Built before the model: the reader checks every file's first record, so bad input
        # fails in seconds, not after the model is built.
        train_data = inputs.train_data(
            micro_batch,
            seed=seed,
            start_step=training.saved_step() * accumulate,
            dynamic_masking=dynamic_masking,
            vocabulary_size=vocabulary,
        )
        eval_data, eval_steps = inputs.eval_data(micro_batch, eval_steps)

        with strategies.scope(distribution):
            pretrainer = _build_pretrainer(run_config, use_xla, steps_per_execution)
            if init:
                print(initialize_from(pretrainer, *init, init_from))
            initial_step = training.restore(pretrainer)
            if initial_step < max_steps:
                print(
                    f"pretraining steps {initial_step + 1}..{max_steps} on {len(inputs.files)} "
                    f"file(s) ({'resumed' if initial_step else 'new run'}): "
                    f"{strategies.describe(distribution)}, {run_config['mixed_precision']}, "
                    f"jit_compile={use_xla}"
                )
            training.fit(pretrainer, train_data, verbose)
            eval_logs = {}
            if eval_data is not None:
                eval_logs = pretrainer.evaluate(
                    eval_data, steps=eval_steps, return_dict=True, verbose=0
                )
                eval_logs = {k: float(v) for k, v in eval_logs.items()}

        training.save_pretrainer(pretrainer, spm_model)
        summary = {
            **training.summary(
                micro_batch * seq_length,
                **inputs.description(),
                jit_compile=use_xla,
                steps_per_execution=steps_per_execution,
                spm_model=spm_model,
            ),
            "distribution": strategies.describe(distribution),
            "parameters": int(pretrainer.backbone.count_params()),
            "eval": eval_logs,
            "eval_examples": eval_steps * micro_batch,
        }
        training.write_summary(summary)
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
