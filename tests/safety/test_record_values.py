"""A masked position or id out of range in pretraining records is refused naming the file, the
record and the value (issue 43: a position beyond the record length failed mid-training as
"unreadable record (Graph execution error:)", naming nothing)."""

import keras
import pytest
import tensorflow as tf
from synthetic_records import MAX_PREDICTIONS, SEQ_LENGTH, write_synthetic_records

from albert_keras.training.periodic_training import PeriodicTraining
from pipelines import read_pretraining_records
from pipelines.record_reader import bad_record_line

SHAPES = {"max_seq_length": SEQ_LENGTH, "max_predictions_per_seq": MAX_PREDICTIONS}


def _spoil(path, record: int, feature: str, value: int):
    """Rewrites `path` with `feature`'s first value of record `record` set to `value`."""
    records = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(str(path))]
    records[record].features.feature[feature].int64_list.value[0] = value
    with tf.io.TFRecordWriter(str(path)) as writer:
        for example in records:
            writer.write(example.SerializeToString())


@pytest.fixture
def files(tmp_path):
    good, bad = tmp_path / "good.tfrecord", tmp_path / "bad.tfrecord"
    write_synthetic_records(good, 8, seed=1)
    write_synthetic_records(bad, 8, seed=2)
    return good, bad


@pytest.mark.parametrize(
    "feature, value, says, start_step",
    [
        ("masked_lm_positions", SEQ_LENGTH + 8, f"outside [0, {SEQ_LENGTH}): max_seq_length", None),
        # A resumable run's stream (`start_step`) is read another way: checked there too.
        ("masked_lm_positions", -1, f"outside [0, {SEQ_LENGTH}): max_seq_length", 0),
        ("masked_lm_ids", -3, "a negative id", None),
        ("input_ids", -7, "a negative id", None),
    ],
)
def test_the_reader_names_the_file_record_and_value(files, feature, value, says, start_step):
    good, bad = files
    _spoil(bad, 5, feature, value)
    data = read_pretraining_records([str(good), str(bad)], 4, **SHAPES, seed=1, shuffle=False,
                                    repeat=False, start_step=start_step)  # fmt: skip
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        for _ in data.take(8):
            pass
    assert (
        bad_record_line(error.value.message) == f"{bad}: record 5: {feature} holds {value}, {says}"
    )


def test_good_records_read_as_before(files):
    good, _ = files
    data = read_pretraining_records(str(good), 4, **SHAPES, shuffle=False, repeat=False)
    assert [int(b["input_ids"].shape[0]) for b in data] == [4, 4]


class _Reads(keras.Model):
    """Takes the batches and trains nothing: what fails is the reading."""

    def train_step(self, data):
        return {"loss": tf.reduce_mean(tf.cast(data["masked_lm_positions"], tf.float32))}


def test_training_ends_in_one_line_naming_it(files, tmp_path):
    good, bad = files
    _spoil(bad, 2, "masked_lm_positions", 99)
    model = _Reads()
    model.compile()
    training = PeriodicTraining(str(tmp_path / "run"), {}, max_steps=8, checkpoint_every=8)
    data = read_pretraining_records([str(good), str(bad)], 4, **SHAPES, seed=1, start_step=0)
    with pytest.raises(ValueError) as error:
        training.fit(model, data, verbose=0)
    assert str(error.value) == (
        f"--records: {bad}: record 2: masked_lm_positions holds 99, outside [0, {SEQ_LENGTH}): "
        "max_seq_length"
    )
