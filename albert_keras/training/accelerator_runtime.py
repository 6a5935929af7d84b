"""Where a notebook trains: the backend Keras runs on, the distribution over every device, and why.

`choose_accelerator_runtime` is called after `albert_keras_cli.keras_backend.choose_keras_backend`
(which sets `KERAS_BACKEND` before Keras is imported). On the JAX backend it builds a
`keras.distribution.DataParallel` over every device (the 8 cores of a v2-8, the 8 chips of a
v5e-8) and keeps TensorFlow, which still runs the `tf.data` pipelines, off every accelerator; on
TensorFlow it takes `get_strategy`'s strategy (`TPUStrategy` where `tensorflow-tpu` sees a TPU).
It checks that the global batch splits evenly over the replicas and picks `steps_per_execution`.
"""

from __future__ import annotations

import dataclasses

import keras

from albert_keras.training import strategy as strategies

# Steps per host call on a TPU: each call is a round trip from the host, which can cost more
# than a small model's step. 100 is a guess, not a measurement: no TPU was available to tune it.
TPU_STEPS_PER_EXECUTION = 100


@dataclasses.dataclass(frozen=True)
class AcceleratorRuntime:
    """The chosen runtime: build, compile and fit inside `scope()`.

    Args:
        backend: str. `"tensorflow"` or `"jax"`.
        distribution: a `tf.distribute` strategy or a `keras.distribution.DataParallel`.
        platform: str. `"tpu"`, `"gpu"` or `"cpu"`.
        replicas: int. How many devices one global batch is split across.
        steps_per_execution: int. For `compile`: steps run per call from the host.
        line: str. One line saying what was chosen and why.

    Example:
    >>> runtime = choose_accelerator_runtime("cpu", global_batch_size=8)
    >>> runtime.replicas, runtime.steps_per_execution
    (1, 1)
    """

    backend: str
    distribution: object
    platform: str
    replicas: int
    steps_per_execution: int
    line: str

    def scope(self):
        """The distribution's scope: variables made inside it are placed on every replica."""
        return strategies.scope(self.distribution)

    def even_batches(self, dataset):
        """`dataset` with each batch padded, by repeating its last row, to a multiple of the
        replicas on the JAX backend (unchanged elsewhere): `DataParallel` splits every batch
        evenly, so a last partial batch (a dev set's) cannot be predicted inside `scope()`
        otherwise. The padded rows' predictions come last; drop them (`[:len(examples)]`).

        Args:
            dataset: tf.data.Dataset of batches (tensors or nested dicts / tuples of them).

        Example:
        >>> import tensorflow as tf
        >>> runtime = choose_accelerator_runtime("cpu")
        >>> batches = runtime.even_batches(tf.data.Dataset.range(10).batch(4))
        >>> [len(batch) for batch in batches]  # one replica: unchanged
        [4, 4, 2]
        """
        if self.backend != "jax" or self.replicas == 1:
            return dataset
        return dataset.map(lambda *batch: _pad_rows(batch, self.replicas))


def choose_accelerator_runtime(
    strategy: str = "auto",
    global_batch_size: int | None = None,
    steps_per_period: int | None = None,
    backend_reason: str = "",
) -> AcceleratorRuntime:
    """The runtime for this machine, on the backend Keras was imported with.

    Args:
        strategy: str. `get_strategy`'s name; `"auto"` takes every device of the best kind.
        global_batch_size: int. The batch `fit` sees, split over the replicas; must divide evenly.
            `None` skips the check.
        steps_per_period: int. Steps of one `fit` epoch; `steps_per_execution` divides it (so
            callbacks still see each epoch end). `None`: any number of steps.
        backend_reason: str. Why this backend (`choose_keras_backend`'s reason), for the line.

    Returns:
        An `AcceleratorRuntime`; raises `ValueError` (one line) for a batch that does not split.

    Example:
    >>> runtime = choose_accelerator_runtime("cpu", 16, 10, backend_reason="asked for")
    >>> runtime.line.startswith("runtime: tensorflow backend, DefaultDistributionStrategy over 1 cpu")
    True
    """
    backend = keras.backend.backend()
    if backend == "jax":
        _keep_tensorflow_on_the_cpu()
    distribution = strategies.get_strategy(strategy)
    platform = strategies.platform(distribution)
    replicas = strategies.num_replicas(distribution)
    check_global_batch(global_batch_size, replicas, platform)
    per_call = steps_per_execution(platform, steps_per_period)
    batch = (
        f", global batch {global_batch_size} = {replicas} x {global_batch_size // replicas}"
        if global_batch_size
        else ""
    )
    why = f"; why: {backend_reason}" if backend_reason else ""
    line = (
        f"runtime: {backend} backend, {strategies.strategy_name(distribution)} over {replicas} "
        f"{platform} device(s){batch}, steps_per_execution={per_call}{why}"
    )
    return AcceleratorRuntime(backend, distribution, platform, replicas, per_call, line)


def check_global_batch(global_batch_size: int | None, replicas: int, platform: str) -> None:
    """Raises a one-line `ValueError` unless `global_batch_size` splits evenly over `replicas`.

    Args:
        global_batch_size: int or None (no check).
        replicas: int. The devices the batch is split across.
        platform: str. Named in the message.

    Example:
    >>> check_global_batch(12, 8, "tpu")
    Traceback (most recent call last):
    ...
    ValueError: BATCH_SIZE=12 does not split over 8 tpu replicas: use a multiple of 8 (e.g. 16)
    """
    if global_batch_size is None or global_batch_size % replicas == 0:
        return
    fits = replicas * max(1, round(global_batch_size / replicas))
    raise ValueError(
        f"BATCH_SIZE={global_batch_size} does not split over {replicas} {platform} replicas: "
        f"use a multiple of {replicas} (e.g. {fits})"
    )


def steps_per_execution(platform: str, steps_per_period: int | None) -> int:
    """1 off TPUs; on a TPU the largest divisor of `steps_per_period` up to
    `TPU_STEPS_PER_EXECUTION` (that number itself where the period is not given).

    Args:
        platform: str. `"tpu"`, `"gpu"` or `"cpu"`.
        steps_per_period: int or None. Steps of one `fit` epoch.

    Example:
    >>> steps_per_execution("tpu", 200), steps_per_execution("tpu", 30), steps_per_execution("cpu", 200)
    (100, 30, 1)
    """
    if platform != "tpu":
        return 1
    if not steps_per_period:
        return TPU_STEPS_PER_EXECUTION
    limit = min(steps_per_period, TPU_STEPS_PER_EXECUTION)
    return next(n for n in range(limit, 0, -1) if steps_per_period % n == 0)


def distribution_state(runtime: AcceleratorRuntime, variable) -> dict:
    """What `fit` will run over: the distribution set now, its devices, and the devices
    `variable` lives on (JAX: its sharding's device set; TensorFlow: the strategy's replicas).

    Args:
        runtime: AcceleratorRuntime.
        variable: a `keras.Variable` of the model.

    Example:
    >>> runtime = choose_accelerator_runtime("cpu")
    >>> with runtime.scope():
    ...     weight = keras.Variable(1.0)
    >>> distribution_state(runtime, weight)["variable_devices"]
    1
    """
    if runtime.backend == "jax":
        current = keras.distribution.distribution()
        return {
            "distribution": type(current).__name__ if current else None,
            "mesh": dict(zip(current.device_mesh.axis_names, current.device_mesh.shape))
            if current
            else {},
            "variable_devices": len(variable.value.sharding.device_set),
        }
    return {
        "distribution": strategies.strategy_name(runtime.distribution),
        "mesh": {"replicas": runtime.replicas},
        "variable_devices": len(getattr(variable.value, "values", [variable])),
    }


# === Helpers ===


def _keep_tensorflow_on_the_cpu() -> None:
    # On the JAX backend TensorFlow only runs tf.data: left alone it would take every GPU's memory
    # (JAX takes 75% first). A TPU is invisible to the plain tensorflow wheel anyway.
    try:
        import tensorflow as tf
    except ImportError:
        return
    try:
        tf.config.set_visible_devices([], "GPU")
    except RuntimeError:  # TensorFlow already placed ops: too late, and harmless on CPU hosts
        pass


def _pad_rows(batch: tuple, multiple: int):
    import tensorflow as tf

    def pad(rows):
        missing = -tf.shape(rows)[0] % multiple
        return tf.concat([rows, tf.repeat(rows[-1:], missing, axis=0)], axis=0)

    padded = tf.nest.map_structure(pad, batch)
    return padded[0] if len(padded) == 1 else padded
