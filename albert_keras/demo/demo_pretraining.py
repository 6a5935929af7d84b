"""The demo's pretraining stage: the untrained model's scores, `pretrain`, the reload check."""

import pathlib

import keras
import numpy as np

from albert_keras.jobs.job_run import text_preprocessor
from albert_keras.jobs.pretrain_job import pretrain
from albert_keras.models import AlbertBackbone, AlbertPretrainer
from albert_keras.models.albert_pretrainer import backbone_inputs
from pipelines import read_pretraining_records
from pipelines.record_files import count_records, list_record_files

EVAL_BATCHES = 20  # held-out batches scored before and after pretraining


def heldout_batches(files: str, batch_size: int, shapes: dict, batches: int):
    """The first full held-out batches, the same ones at every call: `batches` of them, or all
    there are when the held-out text makes fewer (as `pretrain`'s own evaluation counts them).

    Returns:
        (dataset, count): the batches and how many there are.

    Raises:
        ValueError: when the held-out records do not fill one batch.
    """
    full = count_records(list_record_files(files, "--heldout", verbose=False)) // batch_size
    if full == 0:
        raise ValueError(f"--heldout {files}: too little text for one batch of {batch_size}")
    count = min(batches, full)
    # Read as `pretrain` reads its held-out records (repeating: every batch full, the same order).
    dataset = read_pretraining_records(files, batch_size, **shapes, shuffle=False, repeat=True)
    return dataset.take(count), count


def save_untrained(
    path: pathlib.Path,
    vocabulary_size: int,
    config: dict,
    max_seq_length: int,
    seed: int,
    spm_model: str | None = None,
) -> AlbertPretrainer:
    """Saves a pretrainer of the same architecture, seeded as `pretrain` seeds its own, never
    trained, to `path`: the baseline that fine-tuning without pretraining starts from.

    Args:
        path: pathlib.Path. A `.keras` file.
        vocabulary_size: int. The SentencePiece model's size.
        config: dict. Backbone arguments.
        max_seq_length: int. The records' length (the model's positions).
        seed: int. As given to `pretrain`.
        spm_model: str or None. Its vocabulary, carried in the file as `pretrain`'s model
            carries it (its SHA-256 checked by fine-tuning, which has nothing to warn about).

    Example:
    >>> model = save_untrained(pathlib.Path("untrained/model.keras"), 4000,
    ...                        {"num_layers": 2, "num_heads": 2, "embedding_dim": 32,
    ...                         "hidden_dim": 64, "intermediate_dim": 128}, 64, 1)
    >>> loaded = keras.saving.load_model("untrained/model.keras", compile=False)
    >>> loaded.count_params() == model.count_params()
    True
    """
    keras.utils.set_random_seed(seed)  # as pretrain() does before it builds its model
    model = AlbertPretrainer(
        AlbertBackbone(
            vocabulary_size=vocabulary_size, **{**config, "max_sequence_length": max_seq_length}
        ),
        preprocessor=text_preprocessor(spm_model, max_seq_length),
    )
    model.compile()
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    return model


def run_pretraining(
    out: pathlib.Path, data: dict, run: dict, config: dict, *, verbose: str | int = 2
) -> dict:
    """Scores the untrained model, pretrains, and checks the saved files reload identically.

    Args:
        out: pathlib.Path. Gets `untrained/model.keras` and `pretrain/`.
        data: dict. `prepare_records`'s result.
        run: dict. `batch_size`, `max_seq_length`, `max_predictions_per_seq`, `steps`,
            `learning_rate`, `warmup_steps`, `seed`.
        config: dict. Backbone arguments.
        verbose: passed to `fit`.

    Returns:
        dict: the summary's `pretrain` and `reload` entries.
    """
    shapes = {k: run[k] for k in ("max_seq_length", "max_predictions_per_seq")}
    heldout, heldout_count = heldout_batches(
        data["heldout"], run["batch_size"], shapes, EVAL_BATCHES
    )
    untrained = save_untrained(
        out / "untrained" / "model.keras",
        data["vocab"]["vocab_size"],
        config,
        run["max_seq_length"],
        run["seed"],
        data["spm_model"],
    )
    before = untrained.evaluate(heldout, return_dict=True, verbose=0)
    pretrain_dir = out / "pretrain"
    result = pretrain(
        records=data["train"],
        output_dir=str(pretrain_dir),
        config={**config, "max_sequence_length": run["max_seq_length"]},
        batch_size=run["batch_size"],
        max_steps=run["steps"],
        learning_rate=run["learning_rate"],
        warmup_steps=run["warmup_steps"],
        eval_records=data["heldout"],
        eval_steps=heldout_count,
        checkpoint_every=max(1, run["steps"] // 20),
        spm_model=data["spm_model"],
        seed=run["seed"],
        verbose=verbose,
    )
    summary = {
        "config": result["config"]["backbone"],
        "parameters": result["parameters"],
        "steps": run["steps"],
        "learning_rate": run["learning_rate"],
        "warmup_steps": run["warmup_steps"],
        "batch_size": run["batch_size"],
        "timings": result["timings"],
        "before": {k: float(v) for k, v in before.items()},
        "after": result["eval"],
        "history": result["history"],
    }
    return {"pretrain": summary, "reload": check_reload(pretrain_dir, heldout, summary["after"])}


def check_reload(pretrain_dir: pathlib.Path, heldout, after: dict) -> dict:
    """Reloads `model.keras` and `backbone.keras`: the two backbones must agree exactly and the
    pretrainer must score the held-out batches as the job did.

    Raises:
        RuntimeError: naming what disagrees.
    """
    reloaded = keras.saving.load_model(pretrain_dir / "model.keras")
    backbone = keras.saving.load_model(pretrain_dir / "backbone.keras")
    again = {
        k: float(v) for k, v in reloaded.evaluate(heldout, return_dict=True, verbose=0).items()
    }
    batch = next(iter(heldout))
    inputs = backbone_inputs(batch)
    difference = float(
        np.max(
            np.abs(
                keras.ops.convert_to_numpy(reloaded.backbone(inputs)["sequence_output"])
                - keras.ops.convert_to_numpy(backbone(inputs)["sequence_output"])
            )
        )
    )
    print(f"model.keras and backbone.keras reloaded: max |difference| {difference:.2e}")
    if difference > 1e-5:
        raise RuntimeError(f"the reloaded model.keras and backbone.keras differ by {difference}")
    for name, value in after.items():
        if abs(again[name] - value) > 1e-3 * max(1.0, abs(value)):
            raise RuntimeError(f"reloaded model.keras scores {name} {again[name]}, not {value}")
    return {"max_abs_difference": difference, "eval": again}
