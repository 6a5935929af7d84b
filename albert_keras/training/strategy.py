"""Where training runs: a `tf.distribute` strategy (TF backend) or a Keras distribution (JAX).

Both kinds of object have `.scope()`; build, compile and fit the model inside it.
"""

import contextlib
import json
import os

import keras

# Re-exported: the device facts and the precision choice were made here before they had modules
# of their own.
from albert_keras.training.device_facts import gpu_compute_capability, platform  # noqa: F401
from albert_keras.training.precision import (  # noqa: F401
    PRECISIONS,
    choose_precision,
    resolve_precision,
)
from albert_keras_settings.choices import STRATEGIES


def get_strategy(name: str = "auto", devices: list[str] | None = None):
    """Returns the distribution strategy called `name` for the current Keras backend.

    On TensorFlow: `"tpu"` a `TPUStrategy` (Colab, TPU VMs, or `TPU_NAME`), `"gpu"` /
    `"mirrored"` a `MirroredStrategy` over `devices` (default: every GPU), `"multi_worker"` a
    `MultiWorkerMirroredStrategy` configured by `TF_CONFIG` (`MultiWorkerStrategy`),
    `"one_device"` a `OneDeviceStrategy` on the first GPU (or the CPU), `"cpu"` TensorFlow's
    default strategy (the CPU, as plain Keras runs). `"auto"` picks TPU, then several workers,
    then GPUs, then CPU.
    On JAX: a `keras.distribution.DataParallel` over the chosen devices (`"multi_worker"` first
    calls `keras.distribution.initialize()`, which reads the JAX coordinator's environment).

    Args:
        name: str. One of `STRATEGIES`.
        devices: list of str. Devices for `"mirrored"` / `"gpu"` (TF names like `"/cpu:1"`) or
            for JAX (`"cpu:0"`); `None` for every device of the chosen kind.

    Example:
    >>> strategy = get_strategy("cpu")
    >>> with strategy.scope():
    ...     model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    >>> describe(strategy)["strategy"], strategy.num_replicas_in_sync
    ('DefaultDistributionStrategy', 1)
    """
    if name not in STRATEGIES:
        raise ValueError(f"strategy={name!r} is not one of {', '.join(STRATEGIES)}")
    if keras.backend.backend() == "jax":
        return _jax_distribution(name, devices)
    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            f"get_strategy supports the tensorflow and jax backends, not {keras.backend.backend()}"
        )
    import tensorflow as tf

    if name == "auto":
        name = _auto_tf_strategy_name(tf)
    if name == "tpu":
        return _tpu_strategy(tf)
    if name == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise ValueError("strategy='multi_worker' needs the TF_CONFIG environment variable")
        from albert_keras.training.multi_worker_strategy import MultiWorkerStrategy

        return MultiWorkerStrategy()
    gpus = tf.config.list_logical_devices("GPU")
    if name in ("gpu", "mirrored"):
        if devices is None and not gpus and name == "gpu":
            raise ValueError("strategy='gpu' found no GPU; use --strategy cpu or auto")
        return tf.distribute.MirroredStrategy(devices=devices)
    if name == "one_device":
        return tf.distribute.OneDeviceStrategy(gpus[0].name if gpus else "/cpu:0")
    if tf.distribute.has_strategy():  # inside another strategy's scope: not the default
        return tf.distribute.OneDeviceStrategy("/cpu:0")
    # The CPU: TensorFlow's default strategy, not a OneDeviceStrategy, which builds a
    # multi-device iterator for every fit / evaluate / predict call: 0.1-0.5 s each on this
    # project's 2-core CPU (measured 29 November 2026), a fifth of a short fine-tuning run.
    return tf.distribute.get_strategy()


def num_replicas(strategy) -> int:
    """How many copies of the model one global batch is split across."""
    if hasattr(strategy, "num_replicas_in_sync"):
        return int(strategy.num_replicas_in_sync)
    return int(strategy.device_mesh.devices.size)


def resolve_jit_compile(jit_compile: str | bool, strategy) -> bool:
    """XLA on TPU / GPU (and always on JAX, which compiles everything); off on CPU with
    TensorFlow: there XLA's steps are faster but its compile costs seconds more, which short CPU
    runs (tests, demos) do not win back. `"true"` forces it."""
    if isinstance(jit_compile, bool):
        return jit_compile
    if jit_compile not in ("auto", "true", "false"):
        raise ValueError(f"jit_compile={jit_compile!r} is not one of auto, true, false")
    if jit_compile != "auto":
        return jit_compile == "true"
    return keras.backend.backend() == "jax" or platform(strategy) != "cpu"


def describe(strategy) -> dict:
    """A JSON-friendly description for summaries and logs."""
    return {
        "strategy": strategy_name(strategy),
        "replicas": num_replicas(strategy),
        "platform": platform(strategy),
        "backend": keras.backend.backend(),
    }


def strategy_name(strategy) -> str:
    """The strategy's class name; TensorFlow's default strategy (a private class) without its
    leading underscore: `DefaultDistributionStrategy`."""
    return type(strategy).__name__.lstrip("_")


def scope(strategy):
    """`strategy.scope()`, or a no-op context where there is no strategy."""
    return strategy.scope() if strategy is not None else contextlib.nullcontext()


# === Helpers ===


def _auto_tf_strategy_name(tf) -> str:
    if os.environ.get("TPU_NAME") or os.environ.get("COLAB_TPU_ADDR") or _has_local_tpu():
        return "tpu"
    workers = json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster", {}).get("worker", [])
    if len(workers) > 1:
        return "multi_worker"
    return "mirrored" if tf.config.list_physical_devices("GPU") else "cpu"


def _has_local_tpu() -> bool:
    # TPU VMs expose the chips as /dev/accel* (v2-v4) or /dev/vfio (v5e and later).
    return any(name.startswith("accel") for name in _listdir("/dev")) or bool(
        [name for name in _listdir("/dev/vfio") if name.isdigit()]
    )


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _tpu_strategy(tf):
    # No argument: Colab and `TPU_NAME`; "local": the chips of this TPU VM.
    tpu = "" if (os.environ.get("TPU_NAME") or os.environ.get("COLAB_TPU_ADDR")) else "local"
    if tpu == "local" and not _has_local_tpu():
        # Said at once: TensorFlow's TPU initialization first clears the eager caches and
        # collects garbage, which took 40 s in a process that had trained before.
        raise ValueError(
            "strategy='tpu' found no TPU (no TPU_NAME, no COLAB_TPU_ADDR, no /dev/accel* or "
            "/dev/vfio chips)"
        )
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
        if tpu != "local":
            tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, RuntimeError, tf.errors.OpError) as error:
        reason = str(error).strip().splitlines()[0]
        raise ValueError(f"strategy='tpu' found no TPU ({reason})") from None
    return tf.distribute.TPUStrategy(resolver)


def _jax_distribution(name: str, devices: list[str] | None):
    if name == "multi_worker":
        keras.distribution.initialize()
    if devices is None:
        kind = {"cpu": "cpu", "gpu": "gpu", "tpu": "tpu"}.get(name)
        devices = keras.distribution.list_devices(kind)
        if name == "one_device":
            devices = devices[:1]
    if not devices:
        raise ValueError(f"strategy={name!r} found no device on the JAX backend")
    return keras.distribution.DataParallel(devices=devices)
