"""A loss that becomes nan or inf stops training with one line naming the step, keeps the last
finite checkpoint and writes no model (issue 43: a `--learning_rate` of nan trained, saved NaN
weights and exited 0)."""

import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_keras.training.periodic_training import PeriodicTraining
from albert_keras.training.stop_on_non_finite_loss import NonFiniteLoss


def _model():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer=keras.optimizers.SGD(0.01))
    return model


def _data(bad_batch: int):
    """Batches of 2 rows; every row of batch `bad_batch` (0-based) is inf."""
    x = np.ones((16, 2), np.float32)
    x[2 * bad_batch : 2 * bad_batch + 2] = np.inf
    return tf.data.Dataset.from_tensor_slices((x, np.ones((16, 1), np.float32))).batch(2)


def test_periodic_training_stops_at_the_step_keeps_the_finite_checkpoint(tmp_path):
    out = tmp_path / "run"
    training = PeriodicTraining(str(out), {"seed": 1}, max_steps=8, checkpoint_every=2)
    model = _model()
    training.restore(model)
    with pytest.raises(NonFiniteLoss) as error:
        training.fit(model, _data(bad_batch=4), verbose=0)  # the 5th update: step 5
    message = str(error.value)
    assert "\n" not in message
    assert re.match(r"the training loss became (nan|inf) at step 5: training stopped; ", message)
    assert f"the checkpoint of step 4 is kept in {out / 'checkpoints'}; no model written" in (
        message
    )
    assert isinstance(error.value, ValueError)  # the CLI's one line and exit 2
    # The newest checkpoint is step 4's, finite; nothing else was written at the top.
    assert (
        PeriodicTraining(str(out), {"seed": 1}, max_steps=8, checkpoint_every=2).saved_step() == 4
    )
    saved = np.load(out / "checkpoints" / "ckpt-4.npz")
    assert all(np.isfinite(saved[name]).all() for name in saved.files)
    assert not (out / "model.keras").exists()
    assert sorted(os.listdir(out)) == ["checkpoints", "logs"]


def test_a_nan_in_the_first_period_keeps_no_checkpoint(tmp_path):
    training = PeriodicTraining(str(tmp_path / "run"), {}, max_steps=8, checkpoint_every=4)
    model = _model()
    training.restore(model)
    with pytest.raises(
        NonFiniteLoss, match="became (nan|inf) at step 1: .*no checkpoint was saved"
    ):
        training.fit(model, _data(bad_batch=0), verbose=0)
    assert not (tmp_path / "run" / "checkpoints" / "checkpoint.json").exists()


def test_accumulated_batches_count_in_updates():
    callback = __import__(
        "albert_keras.training.stop_on_non_finite_loss", fromlist=["StopOnNonFiniteLoss"]
    ).StopOnNonFiniteLoss(steps_per_epoch=8, accumulate=4)
    callback.on_epoch_begin(1)
    callback.on_train_batch_end(0, {"loss": 1.0, "accuracy": float("nan")})  # not a loss
    with pytest.raises(NonFiniteLoss, match="sentence_loss became nan at step 4:"):
        callback.on_train_batch_end(5, {"loss": 1.0, "sentence_loss": float("nan")})  # batch 14


@pytest.mark.slow  # builds and trains a pretrainer: ~10 s quiet, 30 s on a busy 2-core machine
def test_pretrain_exits_2_naming_the_step_and_keeps_the_finite_checkpoint(tmp_path, capsys):
    from synthetic_records import SEQ_LENGTH, write_synthetic_records

    from albert_keras_cli.main import main

    write_synthetic_records(tmp_path / "train-0.tfrecord", 64, seed=0)
    out = tmp_path / "run"
    tiny = {"vocabulary_size": 100, "num_layers": 1, "num_heads": 2, "embedding_dim": 16,
            "hidden_dim": 16, "intermediate_dim": 32, "max_sequence_length": SEQ_LENGTH}  # fmt: skip
    # A finite but huge learning rate: step 1 is finite, its update blows the weights up.
    argv = ["pretrain", "--records", str(tmp_path / "*.tfrecord"), "--output_dir", str(out),
            *[f"--config={k}={v}" for k, v in tiny.items()], "--batch_size=8", "--max_steps=4",
            "--checkpoint_every=1", "--seed=1", "--jit_compile=false", "--learning_rate=1e30",
            "--warmup_steps=0"]  # fmt: skip
    assert main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("albert")]
    assert lines == [
        (
            "albert-keras pretrain: error: the training loss became nan at step 2: training "
            f"stopped; the checkpoint of step 1 is kept in {out / 'checkpoints'}; no model written"
        )
    ]
    assert not (out / "model.keras").exists() and not (out / "backbone.keras").exists()
    saved = np.load(out / "checkpoints" / "ckpt-1.npz")
    assert all(np.isfinite(saved[name]).all() for name in saved.files)
    assert not (out / "checkpoints" / "ckpt-2.npz").exists()


@pytest.mark.slow  # a fine-tuning: ~10 s quiet, more on a busy machine
def test_finetune_glue_stops_in_one_line_and_writes_no_model(tmp_path, tiny_spm):
    import shutil

    from finetuned_classifier import write_tiny_sst2

    from albert_keras.jobs.finetune_glue_job import finetune_glue
    from albert_keras.models import AlbertBackbone

    AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
                   intermediate_dim=32, max_sequence_length=32).save(tmp_path / "backbone.keras")  # fmt: skip
    shutil.copy(tiny_spm, tmp_path / "spm.model")
    out = tmp_path / "sst2"
    with pytest.raises(NonFiniteLoss, match=r"^the training loss became (nan|inf) at step \d+: "):
        finetune_glue(
            task="SST-2", glue_dir=write_tiny_sst2(tmp_path / "glue"),
            init_from=tmp_path / "backbone.keras", output_dir=out, max_steps=6, batch_size=4,
            max_seq_length=16, learning_rate=1e30, warmup_steps=0, eval_every=2, patience=0,
            seed=0, jit_compile=False, mixed_precision="float32",
        )  # fmt: skip
    assert not (out / "model.keras").exists()
