"""`albert-keras pretrain`: ALBERT pretraining on TFRecord shards, resumable after `kill -9`.

The flow is `JobRun`'s: pick the strategy and precision -> infer the record shapes -> build the
pretrainer (a preset plus `--config` overrides) -> compile with the paper's LAMB and
warmup/linear decay -> restore the last checkpoint if there is one -> `fit` -> evaluate on
held-out records -> write `model.keras` (the pretrainer), `backbone.keras` and `summary.json`
into `--output_dir`.

Resume is exact: fit's epochs are checkpoint periods of `checkpoint_every` steps, each ending
with a `StepCheckpoint` of the whole training state, and the batches come from
`read_pretraining_records(start_step=...)`, a pure function of (seed, step). A run killed and
started again with the same command ends with the same weights as a run never stopped.
"""

import os

from albert_keras.jobs.job_run import JobRun, text_preprocessor
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
from albert_keras_settings import PretrainSettings
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
    return _Pretrain(settings, overrides, verbose).run()


class _Pretrain(JobRun):
    """`pretrain`'s data (records), model (the compiled pretrainer, restored) and metrics."""

    command = "albert-keras pretrain"
    settings_class = PretrainSettings

    def read_inputs(self) -> dict:
        s = self.settings
        self.inputs, self.init, backbone_config = _read_inputs(s)
        self.check_replicas(s.batch_size)
        replicas = strategies.num_replicas(self.distribution)
        self.micro_batch = micro_batch_size(s.batch_size, s.gradient_accumulation_steps, replicas)
        self.use_xla = strategies.resolve_jit_compile(s.jit_compile, self.distribution)
        self.run_config = _run_config(s, self.inputs, backbone_config, self.precision)
        _check_vocabulary(s, self.inputs, backbone_config, self.init)
        return self.run_config

    def output_folder(self, arguments: dict):
        # Equal run configs resume; a folder of a run from before manifests is adopted.
        s = self.settings
        inputs = {"records": s.records, "eval_records": s.eval_records, "spm_model": s.spm_model}
        return training_folder(
            s.output_dir, self.command, arguments, inputs=inputs, overwrite=s.overwrite
        )

    def prepare(self, folder) -> None:
        s = self.settings
        self.training = PeriodicTraining(
            folder,
            self.run_config,
            max_steps=s.max_steps,
            checkpoint_every=s.checkpoint_every,
            gradient_accumulation_steps=s.gradient_accumulation_steps,
        )
        # Built before the model: the reader checks every file's first record, so bad input
        # fails in seconds, not after the model is built.
        self.train_data = self.inputs.train_data(
            self.micro_batch,
            seed=s.seed,
            start_step=self.chief_step(self.training) * s.gradient_accumulation_steps,
            dynamic_masking=s.dynamic_masking,
            vocabulary_size=self.run_config["backbone"]["vocabulary_size"],
        )
        self.eval_data, self.eval_steps = self.inputs.eval_data(self.micro_batch, s.eval_steps)
        # Made after seeding (which drops the SentencePiece op of a tokenizer made before).
        self.preprocessor = text_preprocessor(
            s.spm_model, self.inputs.max_seq_length, self.inputs.text_path
        )

    def build(self, folder):
        s = self.settings
        pretrainer = _build_pretrainer(
            self.run_config, self.use_xla, s.steps_per_execution, self.preprocessor
        )
        if self.init:
            print(initialize_from(pretrainer, *self.init, s.init_from))
        initial_step = self.restore_from_chief(self.training, pretrainer)
        if initial_step < s.max_steps:
            print(
                f"pretraining steps {initial_step + 1}..{s.max_steps} on "
                f"{len(self.inputs.files)} file(s) ({'resumed' if initial_step else 'new run'}): "
                f"{strategies.describe(self.distribution)}, {self.precision}, "
                f"jit_compile={self.use_xla}"
            )
        return pretrainer

    def fit(self, model) -> None:
        self.training.fit(model, self.worker_rows(self.train_data), self.verbose)

    def evaluate(self, folder, model) -> dict:
        return held_out_means(model, self.worker_rows(self.eval_data), self.eval_steps)

    def save(self, folder, model) -> None:
        self.training.save_pretrainer(model, self.settings.spm_model)

    def summary(self, model, figures: dict) -> dict:
        return self.training.run_summary(
            self.inputs,
            self.micro_batch,
            distribution=self.distribution,
            jit_compile=self.use_xla,
            steps_per_execution=self.settings.steps_per_execution,
            spm_model=self.settings.spm_model,
            held_out=(figures, self.eval_steps),
            parameters=int(model.backbone.count_params()),
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
    inputs.check_token_ids(
        backbone_config["vocabulary_size"], source, s.spm_model, s.accept_old_text_path
    )


# === Training ===


def _build_pretrainer(
    run_config: dict, jit_compile: bool, steps_per_execution: int, preprocessor=None
):
    backbone = AlbertBackbone(**run_config["backbone"], dtype=run_config["mixed_precision"])
    # The preprocessor (no weights) travels in model.keras: the saved model takes strings.
    pretrainer = AlbertPretrainer(
        backbone, sentence_objective=run_config["sentence_objective"], preprocessor=preprocessor
    )
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
    )  # compile builds the optimizer (AlbertTask.compile): a checkpoint can load
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
