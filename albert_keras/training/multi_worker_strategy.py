"""`MultiWorkerStrategy`: `--strategy multi_worker` on TensorFlow, and what a run of several
processes needs besides: who writes (`is_chief`), the chief's step and weights on every worker
(`chief_value`, `broadcast_from_chief`), each worker's rows of a global batch
(`distribute_rows`) and a lost worker said in one line (`LOST_WORKER_ERRORS`, `lost_worker_line`).

The rules a multi-worker run follows here (docs/scaling.md):

- **The chief alone writes the output folder.** The chief is TF_CONFIG's `chief` task, or
  worker 0 when there is none (`strategy.extended.should_checkpoint`). Every other worker writes
  into a temporary folder of its own, removed at the end, and never opens `--output_dir`: so the
  folder's lock is taken once, by the chief, and a shared file system is not needed.
- **The chief's state is the run's state.** The step to resume from and every model and
  optimizer variable are sent from the chief to the others before training (an all-reduce
  where only the chief's replica 0 adds a non-zero value, so the copy is exact).
- **`--batch_size` is the global batch.** Every worker builds the same seeded global stream (a
  pure function of seed and step) and keeps its replicas' rows of each batch: the batches a run
  trains on do not depend on how many workers share them, so it equals a one-process run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile

import keras
import tensorflow as tf

from albert_keras_contracts.autotune_off import autotune_off

# Seconds a collective may wait for a peer before the run gives up on it. A dead peer is
# usually found sooner, by the coordination service's heartbeats.
COLLECTIVE_TIMEOUT_SECONDS = 60


class MultiWorkerStrategy(tf.distribute.MultiWorkerMirroredStrategy):
    """`tf.distribute.MultiWorkerMirroredStrategy` from `TF_CONFIG`, with collectives that time
    out, and a `reduce` that takes the nested batches Keras 3's `fit` gives it.

    Keras 3.15's `fit` reduces its first batch (a dict or tuple of `PerReplica` values) in one
    `strategy.reduce(..., axis=None)` call and the step's scalar logs with `axis=0`; the
    multi-worker strategy takes neither (keras-team/keras#20585: "Attempt to convert a value
    (PerReplica...)", then "Invalid reduction dimension 0 for input with 0 dimensions"). Here
    `reduce` goes leaf by leaf, and a scalar is reduced without an axis. Nothing else changes.

    Args:
        timeout_seconds: int. How long a collective waits for a peer (`CommunicationOptions`).

    Example (as each process of a two-worker run calls it; the environment is the process's
    own, so the example sets it only in a copy):
    >>> environment = {**os.environ, "TF_CONFIG": json.dumps({
    ...     "cluster": {"worker": ["host0:2222", "host1:2222"]},
    ...     "task": {"type": "worker", "index": 0}})}
    >>> "TF_CONFIG" in os.environ  # a test process must not become a worker
    False
    >>> strategy = MultiWorkerStrategy()  # doctest: +SKIP
    >>> strategy.num_replicas_in_sync  # doctest: +SKIP
    2
    """

    def __init__(self, timeout_seconds: int = COLLECTIVE_TIMEOUT_SECONDS):
        options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout_seconds)
        super().__init__(communication_options=options)

    def reduce(self, reduce_op, value, axis):
        def one(leaf):
            first = leaf.values[0] if isinstance(leaf, tf.distribute.DistributedValues) else leaf
            rank = tf.convert_to_tensor(first).shape.rank
            return super(MultiWorkerStrategy, self).reduce(reduce_op, leaf, axis if rank else None)

        return tf.nest.map_structure(one, value)


# === Who writes ===


def is_multi_worker(distribution) -> bool:
    """Whether `distribution` spans several processes (TF workers or JAX processes)."""
    if isinstance(distribution, tf.distribute.MultiWorkerMirroredStrategy):
        return _workers(distribution) > 1
    if distribution is not None and keras.backend.backend() == "jax":
        import jax

        return jax.process_count() > 1
    return False


def is_chief(distribution) -> bool:
    """Whether this process writes the run's outputs: the chief (worker 0 without a `chief`
    task) of a multi-worker strategy, JAX's process 0, and any single-process run."""
    if distribution is not None and keras.backend.backend() == "jax":
        import jax

        return jax.process_index() == 0
    extended = getattr(distribution, "extended", None)
    return bool(getattr(extended, "should_checkpoint", True))


def worker_folder_prefix() -> str:
    """The name prefix of a non-chief worker's own folder (in the system's temporary folder):
    it carries the process id, so a folder left by a killed worker can be told apart."""
    return f"{_WORKER_FOLDER}{os.getpid()}-"


def remove_dead_worker_folders(parent: str | None = None) -> list[str]:
    """Removes the non-chief workers' folders (`worker_folder_prefix`) in `parent` (default:
    the system's temporary folder) whose process is gone (a `kill -9` leaves its folder);
    returns their names. A live worker's folder is left alone.

    Example:
    >>> import tempfile
    >>> parent = tempfile.mkdtemp()
    >>> for pid in (os.getpid(), 2**22 + 1):  # this process, and one above Linux's PID limit
    ...     os.mkdir(os.path.join(parent, f"{_WORKER_FOLDER}{pid}-x"))
    >>> remove_dead_worker_folders(parent)
    ['albert-keras-worker-4194305-x']
    """
    parent = parent or tempfile.gettempdir()
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return []
    removed = []
    for name in names:
        match = re.fullmatch(rf"{_WORKER_FOLDER}(\d+)-.*", name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
            removed.append(name)
    return removed


_WORKER_FOLDER = "albert-keras-worker-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError) as error:  # another user's process; no such pid
        return isinstance(error, PermissionError)
    return True


def chief_value(distribution, value: int) -> int:
    """The chief's `value` (an int), on every worker; `value` itself in a one-process run."""
    if not is_multi_worker(distribution) or keras.backend.backend() != "tensorflow":
        return value
    return int(_from_chief(distribution, tf.constant(value, tf.int64)))


def broadcast_from_chief(distribution, variables) -> None:
    """Assigns the chief's value of each of `variables` on every worker (no-op in one process).

    Every worker must call it with the same variables in the same order (the same model).
    """
    if not is_multi_worker(distribution) or keras.backend.backend() != "tensorflow":
        return
    for variable in variables:
        tensor = tf.convert_to_tensor(variable.value)
        # Integers (seed states, the step count) travel as int64, floats as themselves: adding
        # zeros is exact either way.
        wire = tf.int64 if tensor.dtype.is_integer else tensor.dtype
        value = _from_chief(distribution, tf.cast(tensor, wire))
        variable.assign(tf.cast(value, tensor.dtype))


def _from_chief(distribution, tensor):
    def chief_only(context):
        return tensor if context.replica_id_in_sync_group == 0 else tf.zeros_like(tensor)

    with distribution.scope():
        per_replica = distribution.experimental_distribute_values_from_function(chief_only)
        return distribution.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


def _workers(distribution) -> int:
    resolver = distribution.cluster_resolver
    spec = resolver.cluster_spec().as_dict() if resolver is not None else {}
    return sum(len(spec.get(job, [])) for job in ("chief", "worker")) or 1


# === Each worker's rows ===


def distribute_rows(distribution, dataset: tf.data.Dataset | None):
    """`dataset` (global batches) as each replica's rows, for `fit` and `evaluate` under a
    multi-worker strategy; `dataset` unchanged otherwise (and None stays None).

    Global batch k is split into `num_replicas_in_sync` equal row blocks; replica r (worker
    r // replicas-per-worker) trains on block r, as `MirroredStrategy` splits a batch in one
    process. Every worker reads the whole stream (it is a pure function of the seed and step,
    so the workers need not talk about data) and keeps its own rows.
    """
    if dataset is None or not isinstance(distribution, tf.distribute.MultiWorkerMirroredStrategy):
        return dataset
    return distribution.distribute_datasets_from_function(
        lambda context: replica_rows(dataset, context)
    )


def replica_rows(dataset: tf.data.Dataset, context: tf.distribute.InputContext):
    """The per-replica batches input pipeline `context.input_pipeline_id` feeds its replicas:
    block r of each global batch, for its replicas r in order (see `distribute_rows`).

    Example:
    >>> rows = tf.data.Dataset.range(8).batch(4)  # global batches [0..3], [4..7]
    >>> context = tf.distribute.InputContext(2, 1, num_replicas_in_sync=2)
    >>> [b.numpy().tolist() for b in replica_rows(rows, context)]
    [[2, 3], [6, 7]]
    """
    replicas = context.num_replicas_in_sync
    local = replicas // context.num_input_pipelines
    first = context.input_pipeline_id * local

    def blocks(*batch):  # a dict of features, or a tuple such as `(inputs, labels)`
        split = tf.nest.map_structure(
            lambda x: tf.reshape(x, tf.concat([[replicas, -1], tf.shape(x)[1:]], 0)), batch
        )
        return split if len(split) > 1 else split[0]

    def mine(index, _):
        return (index % replicas >= first) & (index % replicas < first + local)

    per_replica = dataset.map(blocks).unbatch().enumerate().filter(mine)
    return autotune_off(per_replica.map(lambda _, batch: batch).prefetch(tf.data.AUTOTUNE))


# === A lost worker ===

_TASK = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+)")


def lost_worker_line(error: tf.errors.OpError) -> str:
    """One line naming the lost worker (and its address, from `TF_CONFIG`) from the error a
    collective or the coordination service raised."""
    message = error.message or str(error)
    found = [
        (job, int(task)) for job, task in _TASK.findall(message) if (job, int(task)) != _this_task()
    ]
    if found:
        job, task = found[0]
        address = _address(job, task)
        who = f"{job} {task}" + (f" ({address})" if address else "")
    else:
        who = "another worker"
    reason = message.strip().splitlines()[0][:160]
    return (
        f"lost {who}: the multi-worker run stopped ({type(error).__name__}: {reason}); "
        "rerun every worker with the same command to resume from the last checkpoint"
    )


def _tf_config() -> dict:
    try:
        return json.loads(os.environ.get("TF_CONFIG", "{}"))
    except ValueError:
        return {}


def _this_task() -> tuple[str, int]:
    task = _tf_config().get("task", {})
    return task.get("type", ""), int(task.get("index", -1))


def _address(job: str, task: int) -> str | None:
    addresses = _tf_config().get("cluster", {}).get(job, [])
    return addresses[task] if 0 <= task < len(addresses) else None


# What a collective or the coordination service raises when a peer is gone.
LOST_WORKER_ERRORS = (
    tf.errors.UnavailableError,
    tf.errors.DeadlineExceededError,
    tf.errors.AbortedError,
    tf.errors.CancelledError,
    tf.errors.InternalError,
)
