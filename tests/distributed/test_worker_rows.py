"""Each worker's rows of the seeded global batches: every example once per epoch, none skipped,
and the two workers' rows put together are the one-process batches (in-process, no cluster)."""

import collections
import json

import numpy as np
import tensorflow as tf

from albert_keras.training import multi_worker_strategy as workers
from albert_keras.training.record_inputs import RecordInputs
from pipelines import read_pretraining_records

BATCH = 8


def _key(batch, row):
    return tuple(np.asarray(batch[name][row]).tobytes() for name in sorted(batch))


def _record_keys(files):
    """Every record of `files`, as the reader parses it, counted."""
    inputs = RecordInputs(files)
    ordered = read_pretraining_records(
        inputs.files, 1, max_seq_length=inputs.max_seq_length,
        max_predictions_per_seq=inputs.max_predictions_per_seq, shuffle=False, repeat=False,
    )  # fmt: skip
    return collections.Counter(_key(batch, 0) for batch in ordered.as_numpy_iterator())


def test_two_workers_read_each_example_once_per_epoch(tiny_records):
    inputs = RecordInputs(tiny_records["train"])
    steps = inputs.num_examples // BATCH  # one pass: 1024 examples, 128 batches of 8
    stream = inputs.train_data(BATCH, seed=1, start_step=0)
    global_batches = list(stream.take(steps).as_numpy_iterator())
    rows = []
    for worker in range(2):
        context = tf.distribute.InputContext(2, worker, num_replicas_in_sync=2)
        rows.append(list(workers.replica_rows(stream, context).take(steps).as_numpy_iterator()))
    seen = collections.Counter()
    for k, whole in enumerate(global_batches):
        for name in whole:  # worker 0 the first half of batch k, worker 1 the second
            joined = np.concatenate([rows[0][k][name], rows[1][k][name]])
            np.testing.assert_array_equal(joined, whole[name], err_msg=f"batch {k} {name}")
        for worker in range(2):
            assert len(rows[worker][k]["input_ids"]) == BATCH // 2
            seen.update(_key(rows[worker][k], r) for r in range(BATCH // 2))
    assert sum(seen.values()) == inputs.num_examples == 1024
    assert seen == _record_keys(tiny_records["train"])  # none twice, none skipped


def test_two_replicas_per_worker_take_consecutive_blocks():
    rows = tf.data.Dataset.range(16).batch(8)  # 4 replicas over 2 workers: 2 rows each
    context = tf.distribute.InputContext(2, 1, num_replicas_in_sync=4)
    got = [b.tolist() for b in workers.replica_rows(rows, context).as_numpy_iterator()]
    assert got == [[4, 5], [6, 7], [12, 13], [14, 15]]


def test_labelled_batches_keep_inputs_and_labels_together():
    # finetune-glue's batches are `(inputs, labels)` tuples.
    rows = tf.data.Dataset.range(8).batch(4).map(lambda x: ({"ids": x, "twice": 2 * x}, -x))
    context = tf.distribute.InputContext(2, 0, num_replicas_in_sync=2)
    got = [(i["ids"].tolist(), i["twice"].tolist(), y.tolist())
           for i, y in workers.replica_rows(rows, context).as_numpy_iterator()]  # fmt: skip
    assert got == [([0, 1], [0, 2], [0, -1]), ([4, 5], [8, 10], [-4, -5])]


def test_a_lost_worker_is_named_with_its_address(monkeypatch):
    cluster = {"worker": ["localhost:1111", "localhost:2222"]}
    config = {"cluster": cluster, "task": {"type": "worker", "index": 0}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    error = tf.errors.UnavailableError(
        None, None, "Task /job:worker/replica:0/task:1 heartbeat timeout\nmore detail"
    )
    line = workers.lost_worker_line(error)
    assert line.startswith("lost worker 1 (localhost:2222): the multi-worker run stopped")
    assert "\n" not in line and "rerun every worker" in line


def test_one_process_is_its_own_chief():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert workers.is_chief(strategy) and not workers.is_multi_worker(strategy)
    assert workers.chief_value(strategy, 7) == 7
    assert workers.distribute_rows(strategy, None) is None
