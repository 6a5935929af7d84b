"""The demo scores the held-out batches `pretrain` evaluates: all of them when there are fewer
than its 20 (a small `--heldout` failed the demo's own reload check with a traceback)."""

import pytest
from synthetic_records import MAX_PREDICTIONS, SEQ_LENGTH, write_synthetic_records

from albert_keras.demo.demo_pretraining import EVAL_BATCHES, heldout_batches

SHAPES = {"max_seq_length": SEQ_LENGTH, "max_predictions_per_seq": MAX_PREDICTIONS}


def test_fewer_full_batches_than_the_demo_asks_for_are_all_used(tmp_path):
    write_synthetic_records(tmp_path / "heldout.tfrecord", 70, seed=1)  # 8 full batches of 8
    dataset, count = heldout_batches(str(tmp_path / "heldout.tfrecord"), 8, SHAPES, EVAL_BATCHES)
    batches = list(dataset)
    assert count == 8 == len(batches)
    assert all(batch["input_ids"].shape[0] == 8 for batch in batches)
    again, _ = heldout_batches(str(tmp_path / "heldout.tfrecord"), 8, SHAPES, EVAL_BATCHES)
    assert [b["input_ids"].numpy().tolist() for b in again] == [
        b["input_ids"].numpy().tolist() for b in batches
    ]


def test_enough_records_give_the_demo_its_batches(tmp_path):
    write_synthetic_records(tmp_path / "heldout.tfrecord", 200, seed=1)
    dataset, count = heldout_batches(str(tmp_path / "heldout.tfrecord"), 8, SHAPES, EVAL_BATCHES)
    assert count == EVAL_BATCHES == len(list(dataset))


def test_too_little_text_for_one_batch_is_one_line(tmp_path):
    write_synthetic_records(tmp_path / "heldout.tfrecord", 5, seed=1)
    with pytest.raises(ValueError, match=r"--heldout .*: too little text for one batch of 8"):
        heldout_batches(str(tmp_path / "heldout.tfrecord"), 8, SHAPES, EVAL_BATCHES)
