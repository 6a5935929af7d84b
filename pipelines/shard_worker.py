"""`ShardWorker`: writes the groups of documents it is sent into the shards it owns.

Group `g` belongs to shard `g % num_shards`. A worker owns some shards; it appends each group's
records to its shard (in group order, so a shard's bytes do not depend on which process made
them), checkpoints now and then, and finishes (renames) its shards at the end. `start_workers`
runs them, in this process or in child processes fed through bounded queues.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import gc
import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time

from pipelines.pretraining_examples import ExampleConfig, make_records
from pipelines.pretraining_stats import PretrainingStats
from pipelines.record_writer import ShardWriter
from pipelines.tokenization import SentencePieceEncoder

# Groups are held until they hold this many characters times dupe rounds (16 groups of the
# default size at dupe 1), then made together: at low dupe factors a group alone is too small a
# batch for NumPy (masking's per-step calls, not its per-token work, would dominate). Records and
# their bytes are the same either way.
_COMBINE_CHARS = 1 << 21


@dataclasses.dataclass(frozen=True)
class ShardPlan:
    """Where one shard starts: afresh (`next_group` 0) or from its last checkpoint.

    Args:
        path: str. The shard's final path.
        next_group: int. Groups before this one are already in the partial file.
        resume_bytes: int. Length of the partial file at that checkpoint.
        stats: dict or None. `PretrainingStats.to_dict()` at that checkpoint.
    """

    path: str
    next_group: int = 0
    resume_bytes: int = 0
    stats: dict | None = None


class ShardWorker:
    """Makes and writes the records of the groups it is given, for the shards it owns.

    Args:
        config: `ExampleConfig`.
        encoder: `SentencePieceEncoder`.
        num_shards: int. Total shards (group g goes to shard g % num_shards).
        plans: dict shard index -> `ShardPlan`, the shards this worker owns.
        fingerprint: str. Recorded with every checkpoint, to refuse resuming other settings.
        checkpoint_seconds: float. Least time between two checkpoints of a shard.
        examples_written: a `multiprocessing.Value` or None; examples are added to it.

    Example:
    >>> os.makedirs("out")
    >>> config = ExampleConfig.of(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2)
    >>> encoder = SentencePieceEncoder("spm.model")
    >>> worker = ShardWorker(config, encoder, 1, {0: ShardPlan("out/s0.tfrecord")}, "x", 30)
    >>> documents = [["The cat sat on the mat.", "It was a fine day.", "We saw a bird."]]
    >>> worker.process(0, documents)  # made now or with later groups
    >>> worker.finish()
    >>> sum(1 for _ in tf.data.TFRecordDataset("out/s0.tfrecord"))
    4
    """

    def __init__(
        self,
        config: ExampleConfig,
        encoder: SentencePieceEncoder,
        num_shards: int,
        plans: dict[int, ShardPlan],
        fingerprint: str,
        checkpoint_seconds: float,
        examples_written=None,
    ):
        self.config = config
        self.encoder = encoder
        self.num_shards = num_shards
        self.fingerprint = fingerprint
        self.checkpoint_seconds = checkpoint_seconds
        self.examples_written = examples_written
        self.next_group = {s: plan.next_group for s, plan in plans.items()}
        self.stats = {s: PretrainingStats.from_dict(p.stats or {}) for s, p in plans.items()}
        self.writers = {s: ShardWriter(p.path, p.resume_bytes) for s, p in plans.items()}
        self.last_checkpoint = {s: time.monotonic() for s in plans}
        # Groups received but not yet made (see `_COMBINE_CHARS`), and the next group each
        # shard accepts.
        self.pending, self.pending_chars = [], 0
        self.next_accepted = dict(self.next_group)

    def process(self, group_index: int, documents: list[list[str]]) -> None:
        """Appends the records of group `group_index` to its shard (now or with later groups)."""
        shard = group_index % self.num_shards
        if group_index < self.next_accepted[shard]:
            raise ValueError(
                f"group {group_index} is already in shard {shard} (groups go in order)"
            )
        self.next_accepted[shard] = group_index + 1
        self.pending.append((group_index, documents))
        self.pending_chars += sum(map(len, itertools.chain.from_iterable(documents)))
        # A due checkpoint is not put off either (`checkpoint_seconds` 0: one after each group).
        due = time.monotonic() - self.last_checkpoint[shard] >= self.checkpoint_seconds
        if due or self.pending_chars * self.config.dupe_factor >= _COMBINE_CHARS:
            self.flush()

    def flush(self) -> None:
        """Makes and writes the pending groups; checkpoints their shards when due."""
        groups, self.pending, self.pending_chars = self.pending, [], 0
        if not groups:
            return
        shards = [group_index % self.num_shards for group_index, _ in groups]
        stats = [self.stats[shard] for shard in shards]
        before = sum(s.examples for s in self.stats.values())
        for k, chunk in make_records(self.config, self.encoder, groups, stats):
            self.writers[shards[k]].write(chunk)
        for (group_index, _), shard in zip(groups, shards):
            self.next_group[shard] = group_index + 1
        if self.examples_written is not None:
            with self.examples_written.get_lock():
                self.examples_written.value += sum(s.examples for s in self.stats.values()) - before
        for shard in sorted(set(shards)):
            if time.monotonic() - self.last_checkpoint[shard] >= self.checkpoint_seconds:
                self.writers[shard].checkpoint(self._state(shard))
                self.last_checkpoint[shard] = time.monotonic()

    def finish(self) -> None:
        """Finishes every owned shard: durable, complete progress, final name."""
        self.flush()
        for shard, writer in self.writers.items():
            writer.finish(self._state(shard))

    def close(self) -> None:
        """Stops without finishing (pending groups are dropped); partial shards stay for a
        resume from their last checkpoint."""
        for writer in self.writers.values():
            writer.close()

    def _state(self, shard: int) -> dict:
        return {
            "fingerprint": self.fingerprint,
            "next_group": self.next_group[shard],
            "stats": self.stats[shard].to_dict(),
        }


def start_workers(worker_args: list[dict], start_method: str | None = None):
    """Starts one `ShardWorker` per item of `worker_args`: in this process when there is one,
    else each in a child process. Returns a pool with `send(worker, (group_index, documents))`,
    `finish()`, `abort()` and `examples_written` (a shared counter).

    `start_method` None picks "fork" where it is safe (see `safe_start_method`), else "spawn".
    """
    context = multiprocessing.get_context(start_method or safe_start_method())
    examples_written = context.Value("q", 0)
    if len(worker_args) == 1:
        return _InProcess(worker_args[0], examples_written)
    return _Processes(context, worker_args, examples_written)


def safe_start_method() -> str:
    """`"fork"` on Linux while this process runs one thread and no TensorFlow, else `"spawn"`.

    A forked child starts at once with the modules and the loaded SentencePiece model it
    inherits (a spawned one imports and loads them again), but a
    fork copies other threads' locks mid-use: TensorFlow's (in a test or a notebook) among them.
    """
    if (
        sys.platform == "linux"
        and threading.active_count() == 1
        and "tensorflow" not in sys.modules
    ):
        return "fork"
    return "spawn"


class _InProcess:
    """`num_workers=1`: the one worker runs in this process."""

    def __init__(self, worker_args, examples_written):
        self.examples_written = examples_written
        self.worker = ShardWorker(**worker_args, examples_written=examples_written)

    def send(self, _, item):
        self.worker.process(*item)

    def finish(self):
        self.worker.finish()

    def abort(self):
        self.worker.close()


class _Processes:
    """Child processes, each fed by its own bounded queue (so reading never runs far ahead)."""

    def __init__(self, context, worker_args, examples_written):
        self.examples_written = examples_written
        self.errors = context.Queue()
        self.inboxes = [context.Queue(maxsize=4) for _ in worker_args]
        self.processes = [
            context.Process(
                target=worker_main,
                args=({**args, "examples_written": examples_written}, inbox, self.errors),
                daemon=True,
            )
            for args, inbox in zip(worker_args, self.inboxes)
        ]
        for process in self.processes:
            process.start()

    def send(self, worker, item):
        while True:
            try:
                self.inboxes[worker].put(item, timeout=1.0)
                return
            except queue.Full:
                self._check()

    def finish(self):
        for worker in range(len(self.processes)):
            self.send(worker, None)
        for process in self.processes:
            while process.exitcode is None:
                process.join(timeout=1.0)
                self._check()
        self._check()

    def abort(self):
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join()
        # Items no dead worker will read must not keep this process from exiting.
        for inbox in self.inboxes:
            inbox.cancel_join_thread()
            inbox.close()

    def _check(self):
        failed = [p for p in self.processes if p.exitcode not in (None, 0)]
        if failed:
            try:
                reason = self.errors.get(timeout=1.0)
            except queue.Empty:
                reason = f"exit code {failed[0].exitcode}"
            if isinstance(reason, tuple):  # a full disk or no permission: the OSError itself
                raise OSError(*reason)
            raise RuntimeError(f"a pretraining-data worker failed: {reason}")


def worker_main(worker_args: dict, inbox, errors) -> None:
    """A child process: builds a `ShardWorker`, feeds it `(group_index, documents)` from `inbox`
    until `None`, then finishes. A failure goes to `errors` as one line, and the exit code is 1.
    It dies with its parent (see `die_with_parent`), even while it waits on `inbox`.
    """
    die_with_parent()
    keep_freed_memory()
    worker = None
    try:
        worker = ShardWorker(**worker_args)
        while (item := inbox.get()) is not None:
            worker.process(*item)
        worker.finish()
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which decides
        if worker is not None:
            worker.close()
        if isinstance(error, OSError) and error.errno in DISK_ERRNOS:
            errors.put((error.errno, error.strerror, error.filename))
        else:
            errors.put(f"{type(error).__name__}: {error}")
        sys.exit(1)


# Errors the parent re-raises as the worker's OSError (`output_folder.os_error_line` says them).
DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS)

# From <malloc.h>.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # the most glibc takes on 64-bit
_TRIM_THRESHOLD = 256 << 20
# Net new container objects between two young-generation collections (Python's default: 700).
_GC_THRESHOLD = 20_000


def keep_freed_memory() -> bool:
    """Lets glibc's malloc reuse freed memory for NumPy's large temporary arrays.

    By default glibc gives an array of over 128 KB (later: of over the largest freed so far)
    pages of its own and returns them to the kernel when it is freed, so the next array of that
    size faults its pages in again, and the writer spends that time in the kernel. With these
    settings arrays below 32 MB come from the heap and up to 256 MB of freed heap is kept, so
    most of those faults go, for a little more peak memory. No library sets glibc's documented
    tunables for us, and the standard library has no `mallopt`: hence ctypes. Called in each
    worker process, by the writer's command line and in the Beam workers that command line
    starts, not by the library: a notebook's process keeps glibc's defaults.

    It also raises the cyclic garbage collector's first threshold to `_GC_THRESHOLD`: the
    writer makes tens of thousands of short-lived lists (SentencePiece's id lists, sentences),
    none in a cycle, and at Python's default of 700 every ~700 of them cost a collection that
    walks them (~0.05 CPU-s on the six books, ~5% of a worker's time).

    Returns:
        Whether both malloc settings took (False off Linux or with another libc).
    """
    gc.set_threshold(_GC_THRESHOLD, *gc.get_threshold()[1:])
    if sys.platform != "linux":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    )


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_WATCH_SECONDS = 1.0


def die_with_parent() -> None:
    """Makes this (child) process end when its parent does, however the parent ends.

    A parent killed with SIGKILL runs no cleanup: `daemon=True` children would live on,
    orphaned and blocked on their queue's pipe. On Linux the kernel sends SIGKILL to this
    process when the parent dies (`prctl(PR_SET_PDEATHSIG)`, through ctypes: the standard
    library has no wrapper); everywhere, a daemon thread checks the parent's pid every second
    and exits when it changes (the parent died and this process was re-parented).
    """
    parent = multiprocessing.parent_process()
    parent_pid = parent.pid if parent is not None else os.getppid()
    if sys.platform == "linux":
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl (an unusual libc): the watchdog below still works
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(_WATCH_SECONDS)
        os._exit(1)  # no cleanup: the parent is gone, partial shards stay for a resume

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
