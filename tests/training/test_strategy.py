import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_keras.training import get_strategy
from albert_keras.training import strategy as strategies

CHECK = pathlib.Path(__file__).with_name("distributed_check.py")


def run_check(backend: str, env: dict | None = None) -> dict:
    """Runs distributed_check.py in a fresh interpreter (device layout is fixed at start-up)."""
    result = subprocess.run(
        [sys.executable, str(CHECK), backend],
        check=False,  # the assertion below shows stderr
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("REPORT ")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    return json.loads(lines[-1][len("REPORT ") :])


def assert_same_run(one: dict, several: dict, tolerance: float) -> None:
    assert (one["devices"], several["devices"]) == (1, 2)
    assert one["finite"] and several["finite"]
    assert several["predict_shapes"] == one["predict_shapes"]
    for name, values in one["history"].items():
        np.testing.assert_allclose(several["history"][name], values, rtol=tolerance, err_msg=name)
    for name, value in one["evaluate"].items():
        np.testing.assert_allclose(several["evaluate"][name], value, rtol=tolerance, err_msg=name)
    for name, values in one["predictions"].items():
        np.testing.assert_allclose(several["predictions"][name], values, atol=tolerance)


def test_cpu_choices():
    strategy = get_strategy("cpu")
    # TensorFlow's default strategy, as plain Keras: no multi-device iterator per fit call.
    assert strategy is tf.distribute.get_strategy() and not tf.distribute.has_strategy()
    assert strategies.describe(strategy) == {
        "strategy": "DefaultDistributionStrategy",
        "replicas": 1,
        "platform": "cpu",
        "backend": "tensorflow",
    }
    # XLA only where it pays: not on a CPU (auto precision: tests/training/test_precision.py).
    assert strategies.resolve_precision("mixed_bfloat16", strategy) == "mixed_bfloat16"
    assert strategies.resolve_jit_compile("auto", strategy) is False
    assert strategies.resolve_jit_compile("true", strategy) is True
    if not tf.config.list_physical_devices("GPU"):
        assert get_strategy("auto") is strategy
        one_device = get_strategy("one_device")  # asked for by name: a OneDeviceStrategy
        assert strategies.describe(one_device)["strategy"] == "OneDeviceStrategy"
        assert strategies.platform(one_device) == "cpu"
        with one_device.scope():  # inside another strategy's scope "cpu" is not the default
            assert strategies.strategy_name(get_strategy("cpu")) == "OneDeviceStrategy"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: get_strategy("gpus"), "strategy='gpus' is not one of"),
        (lambda: strategies.resolve_precision("fp8", None), "mixed_precision='fp8'"),
        (lambda: strategies.resolve_jit_compile("yes", None), "jit_compile='yes'"),
    ],
)
def test_bad_choices(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.skipif(bool(tf.config.list_physical_devices("GPU")), reason="a GPU is present")
def test_missing_accelerators_are_named():
    with pytest.raises(ValueError, match="strategy='gpu' found no GPU"):
        get_strategy("gpu")
    if not strategies._has_local_tpu():  # said before TensorFlow's TPU initialization
        with pytest.raises(ValueError) as error:
            get_strategy("tpu")
        assert str(error.value) == (
            "strategy='tpu' found no TPU (no TPU_NAME, no COLAB_TPU_ADDR, no /dev/accel* or "
            "/dev/vfio chips)"
        )


def test_multi_worker_needs_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="TF_CONFIG"):
        get_strategy("multi_worker")


@pytest.fixture(scope="module")
def mirrored_report():
    return run_check("tensorflow")


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_mirrored_predict_shapes_accuracies_and_finiteness(mirrored_report):
    one, several = mirrored_report["one_device"], mirrored_report["distributed"]
    assert (one["devices"], several["devices"]) == (1, 2)
    assert one["finite"] and several["finite"]
    # 5 examples: the last batch splits unevenly over the two replicas.
    assert (
        several["predict_shapes"]
        == one["predict_shapes"]
        == {
            "mlm_logits": [5, 4, 50],
            "sentence_logits": [5, 2],
        }
    )
    for name in ("mlm_accuracy", "sentence_accuracy"):
        assert several["evaluate"][name] == pytest.approx(one["evaluate"][name], rel=1e-5)


def test_mirrored_evaluate_in_uneven_batches_equals_one_batch(mirrored_report):
    # Batches of 8, 8, 5 (the 5 split 3 / 2 over the replicas) holding different numbers of
    # masked positions: the metrics are means over all the positions / examples seen.
    one, several = mirrored_report["one_device"], mirrored_report["distributed"]
    whole = one["evaluate_uneven"]["21"]
    assert set(whole) == {"loss", "mlm_loss", "mlm_accuracy", "sentence_loss", "sentence_accuracy"}
    for uneven in (one["evaluate_uneven"]["8"], several["evaluate_uneven"]["8"]):
        for name, value in whole.items():
            assert uneven[name] == pytest.approx(value, rel=1e-5), name


def test_mirrored_over_two_cpus_equals_one_device(mirrored_report):
    assert_same_run(mirrored_report["one_device"], mirrored_report["distributed"], 1e-4)


@pytest.mark.slow
def test_jax_data_parallel_over_two_host_devices_equals_one_device():
    report = run_check(
        "jax",
        {"KERAS_BACKEND": "jax", "XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
    )
    assert_same_run(report["one_device"], report["distributed"], 1e-4)
    assert report["distributed"]["predict_shapes"] == {
        "mlm_logits": [6, 4, 50],
        "sentence_logits": [6, 2],
    }
    assert report["lamb_max_error"] < 1e-5  # the NumPy reference, on the JAX backend
