"""albert_keras.training.accelerator_runtime on the TensorFlow backend (JAX over 8 devices:
tests/training/test_data_parallel.py)."""

import keras
import pytest
import tensorflow as tf

from albert_keras.training.accelerator_runtime import (
    AcceleratorRuntime,
    check_global_batch,
    choose_accelerator_runtime,
    distribution_state,
    steps_per_execution,
)


def test_cpu_runtime_and_its_line():
    runtime = choose_accelerator_runtime("cpu", 16, 10, backend_reason="asked for")
    assert runtime.distribution is tf.distribute.get_strategy()  # the default: plain Keras
    assert (runtime.backend, runtime.platform, runtime.replicas) == ("tensorflow", "cpu", 1)
    assert runtime.line == (
        "runtime: tensorflow backend, DefaultDistributionStrategy over 1 cpu device(s), "
        "global batch 16 = 1 x 16, steps_per_execution=1; why: asked for"
    )
    with runtime.scope():
        weight = keras.Variable(1.0)
    assert distribution_state(runtime, weight) == {
        "distribution": "DefaultDistributionStrategy",
        "mesh": {"replicas": 1},
        "variable_devices": 1,
    }


def test_line_without_batch_or_reason():
    line = choose_accelerator_runtime("cpu").line
    assert line == (
        "runtime: tensorflow backend, DefaultDistributionStrategy over 1 cpu device(s), steps_per_execution=1"
    )


@pytest.mark.parametrize(
    ("batch", "replicas", "message"),
    [
        (12, 8, "BATCH_SIZE=12 does not split over 8 tpu replicas: use a multiple of 8 (e.g. 16)"),
        (3, 8, "BATCH_SIZE=3 does not split over 8 tpu replicas: use a multiple of 8 (e.g. 8)"),
        (30, 4, "BATCH_SIZE=30 does not split over 4 tpu replicas: use a multiple of 4 (e.g. 32)"),
    ],
)
def test_batch_that_does_not_split_is_one_line(batch, replicas, message):
    with pytest.raises(ValueError) as error:
        check_global_batch(batch, replicas, "tpu")
    assert str(error.value) == message


def test_batches_that_split_pass():
    for batch, replicas in ((16, 8), (64, 8), (7, 1), (None, 8)):
        check_global_batch(batch, replicas, "tpu")


@pytest.mark.parametrize(
    ("platform", "period", "expected"),
    [("tpu", 200, 100), ("tpu", 1000, 100), ("tpu", 30, 30), ("tpu", 150, 75), ("tpu", 101, 1)]
    + [("tpu", None, 100), ("cpu", 200, 1), ("gpu", 200, 1)],
)
def test_steps_per_execution(platform, period, expected):
    assert steps_per_execution(platform, period) == expected


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="strategy='tpus' is not one of"):
        choose_accelerator_runtime("tpus")


def test_even_batches_pads_each_batch_to_the_replicas_on_jax():
    runtime = AcceleratorRuntime("jax", None, "tpu", 8, 1, "")
    rows = tf.data.Dataset.from_tensor_slices({"ids": tf.range(21), "pair": tf.range(21) * 10})
    batches = list(runtime.even_batches(rows.batch(16)))
    assert [len(batch["ids"]) for batch in batches] == [16, 8]
    # The padding repeats the last real row, after every real row.
    assert batches[1]["ids"].numpy().tolist() == [16, 17, 18, 19, 20, 20, 20, 20]
    assert batches[1]["pair"].numpy().tolist() == [160, 170, 180, 190, 200, 200, 200, 200]
    single = tf.data.Dataset.range(21).batch(16)
    assert [len(b) for b in runtime.even_batches(single)] == [16, 8]
    # One replica, or TensorFlow: unchanged.
    for unchanged in (
        AcceleratorRuntime("jax", None, "cpu", 1, 1, ""),
        choose_accelerator_runtime("cpu"),
    ):
        assert [len(b) for b in unchanged.even_batches(single)] == [16, 5]
