"""`pretrain --init_from` (continued pretraining) and `--gradient_accumulation_steps`."""

import contextlib
import io

import keras
import numpy as np
import pytest
from synthetic_records import SEQ_LENGTH, VOCABULARY_SIZE

from albert_keras.convert import export_model
from albert_keras.jobs import pretrain
from albert_keras.models import AlbertBackbone, AlbertPretrainer
from albert_keras.optimizers import Lamb
from albert_keras_cli.main import main
from pipelines import read_pretraining_records

TINY = {
    "vocabulary_size": VOCABULARY_SIZE,
    "num_layers": 1,
    "num_heads": 2,
    "embedding_dim": 16,
    "hidden_dim": 16,
    "intermediate_dim": 32,
    "max_sequence_length": SEQ_LENGTH,
}


def held_out_loss(pretrainer, records, batch_size=64):
    dataset = read_pretraining_records(
        records,
        batch_size,
        max_seq_length=SEQ_LENGTH,
        max_predictions_per_seq=5,
        shuffle=False,
        repeat=False,
    )
    pretrainer.compile(optimizer=Lamb())
    # steps=1, one batch of all 64 examples: without it Keras also runs the empty end-of-data
    # step, and the sentence loss comes out halved (seen here; the job's evaluation repeats its
    # dataset for that reason).
    return pretrainer.evaluate(dataset, steps=1, return_dict=True, verbose=0)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """A model far from any random initialization, written in the official TF1 layout: its
    heads carry large weights, so its losses are several nats above a fresh model's."""
    keras.utils.set_random_seed(21)
    pretrainer = AlbertPretrainer(AlbertBackbone(**TINY))
    rng = np.random.default_rng(0)
    for variable in pretrainer.mlm_head.weights + pretrainer.sentence_head.weights:
        value = keras.ops.convert_to_numpy(variable)
        variable.assign(value + rng.normal(0.0, 2.0, value.shape).astype("float32"))
    folder = tmp_path_factory.mktemp("official") / "albert_tiny"
    export_model(pretrainer, "tf1", folder)
    return folder, pretrainer


# Three steps on batches holding exactly the 64 held-out examples, from the converted model
# (whose dropout is 0: the big-batch and the accumulated run see the same model). float32: the
# first logged loss is compared with the source's float32 loss to 1e-5, and the two runs'
# weights to 1e-5 (bfloat16 rounds the two sums apart).
RUN = {
    "batch_size": 64,
    "max_steps": 3,
    "warmup_steps": 1,
    "learning_rate": 0.02,
    "checkpoint_every": 1,
    "mixed_precision": "float32",
    "verbose": 0,
}


@pytest.fixture(scope="module")
def big_batch_run(converted, tiny_records, tmp_path_factory):
    """`pretrain --init_from` the converted model with `RUN`: (its summary, what it printed, its
    final weights). One run for two tests: where it starts, and what accumulation must end at."""
    folder, _ = converted
    output_dir = tmp_path_factory.mktemp("big_batch")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        summary = pretrain(
            records=tiny_records["eval"], output_dir=str(output_dir), init_from=str(folder), **RUN
        )
    weights = keras.saving.load_model(output_dir / "model.keras").get_weights()
    return summary, printed.getvalue(), weights


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_init_from_a_converted_model_starts_at_its_own_loss(converted, tiny_records, big_batch_run):
    folder, source = converted
    own = held_out_loss(source, tiny_records["eval"])
    keras.utils.set_random_seed(12345)
    fresh = held_out_loss(AlbertPretrainer(AlbertBackbone(**TINY)), tiny_records["eval"])
    assert own["mlm_loss"] - fresh["mlm_loss"] > 1.0  # the source is no random model

    # The first step's batch holds exactly the 64 held-out examples: its logged loss is the
    # model's before its first update.
    summary, out, _ = big_batch_run
    assert f"initialized from {folder}: backbone" in out and "MLM head, SOP head" in out
    assert "nothing fresh" in out
    first = summary["history"][0]
    np.testing.assert_allclose(first["mlm_loss"], own["mlm_loss"], rtol=1e-5)
    np.testing.assert_allclose(first["sentence_loss"], own["sentence_loss"], rtol=1e-5)
    assert summary["config"]["init_from"] == str(folder)
    assert summary["config"]["backbone"]["hidden_dim"] == TINY["hidden_dim"]  # not the preset's


def test_init_from_a_backbone_says_the_heads_are_fresh(converted, tiny_records, tmp_path, capsys):
    _, source = converted
    source.backbone.save(tmp_path / "backbone.keras")
    code = main(
        [
            "pretrain",
            "--records", tiny_records["eval"],
            "--output_dir", str(tmp_path / "run"),
            "--init_from", str(tmp_path / "backbone.keras"),
            "--batch_size", "32",
            "--max_steps", "1",
            "--checkpoint_every", "1",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "fresh: MLM head, SOP head" in out
    restored = keras.saving.load_model(tmp_path / "run" / "backbone.keras")
    assert restored.hidden_dim == TINY["hidden_dim"]


def test_init_from_refuses_shape_changes_and_unknown_names(converted, tiny_records, tmp_path):
    folder, _ = converted
    arguments = {"records": tiny_records["eval"], "output_dir": str(tmp_path), "verbose": 0}
    with pytest.raises(ValueError, match="--config hidden_dim: --init_from fixes the architecture"):
        pretrain(**arguments, init_from=str(folder), config={"hidden_dim": 8})
    with pytest.raises(ValueError, match="unknown preset 'no_such_model'"):
        pretrain(**arguments, init_from="no_such_model")


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_accumulated_run_ends_at_the_big_batch_weights(
    converted, tiny_records, big_batch_run, tmp_path
):
    """4 accumulation steps of 16 examples end where the steps of 64 ended (checkpoints
    between)."""
    folder, source = converted
    pretrain(
        records=tiny_records["eval"],
        output_dir=str(tmp_path / "accumulated"),
        init_from=str(folder),
        gradient_accumulation_steps=4,
        **RUN,
    )
    accumulated = keras.saving.load_model(tmp_path / "accumulated" / "model.keras").get_weights()
    big = big_batch_run[2]
    start = source.get_weights()  # what the converted folder holds, in the same order
    assert [w.shape for w in start] == [w.shape for w in big]
    assert max(np.abs(a - b).max() for a, b in zip(big, start)) > 1e-2  # the updates did something
    for a, b in zip(big, accumulated, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="does not split into 3 accumulation steps"):
        pretrain(records=tiny_records["eval"], output_dir=str(tmp_path / "bad"), batch_size=16,
                 gradient_accumulation_steps=3)  # fmt: skip
