"""Writer worker processes end with their parent, even when it is killed with SIGKILL, and
reuse freed memory."""

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

import pipelines

REPO_ROOT = pathlib.Path(pipelines.__file__).resolve().parents[1]


def _children(pid):
    """Live (not zombie) processes whose parent is `pid`, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            found.append(int(entry))
    return found


def _alive(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_workers_die_when_the_parent_is_killed_with_sigkill(tmp_path, tiny_spm, start_method):
    words = ["the", "cat", "sat", "on", "the", "mat", "a", "dog", "ran", "in", "the", "park",
             "it", "was", "a", "fine", "day"]  # fmt: skip
    paragraph = " ".join(f"{w.capitalize()} {words[i % 16]} {words[(i * 7) % 16]}." for i, w in
                         enumerate(words * 6))  # fmt: skip
    (tmp_path / "big.txt").write_text((paragraph + "\n\n") * 3000)  # ~3 MB: seconds of work
    script = (
        "import sys; from pipelines import shard_worker as sw; "
        f"sw.safe_start_method = lambda: {start_method!r}; "
        "from pipelines.pretraining_data import main; sys.exit(main(sys.argv[1:]))"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, "--input", str(tmp_path / "big.txt"),
         "--spm_model", str(tiny_spm), "--output_dir", str(tmp_path / "out"),
         "--max_seq_length", "32", "--dupe_factor", "20", "--num_shards", "2",
         "--num_workers", "2", "--quiet"],
        cwd=REPO_ROOT, start_new_session=True,
    )  # fmt: skip
    workers = []
    try:
        deadline = time.monotonic() + 120
        while parent.poll() is None and time.monotonic() < deadline:
            workers = _children(parent.pid)
            if len(workers) >= 2:
                break
            time.sleep(0.05)
        assert len(workers) >= 2 and parent.poll() is None, "no two workers to orphan"
        time.sleep(1.0)  # let them get busy (spawned ones import and load the model first)
        os.kill(parent.pid, signal.SIGKILL)  # the parent only: no cleanup, no group kill
        parent.wait()
        deadline = time.monotonic() + 5
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(_alive, workers)), "workers outlived their killed parent"
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
        for pid in workers:
            if _alive(pid):  # only after a failure: the workers this test started
                os.kill(pid, signal.SIGKILL)


_REUSE_CHECK = """
import resource
import numpy as np
from pipelines.shard_worker import keep_freed_memory
print(keep_freed_memory())
faults = 0
for size in (3 << 17, 5 << 17, 3 << 17):  # float64 arrays of 3 and 5 MB
    np.ones(size)  # the first of a size may fault its pages in
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        np.ones(size)
    faults += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(faults)
"""


_GC_CHECK = """
import gc
from pipelines.shard_worker import keep_freed_memory
keep_freed_memory()
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info))
for _ in range(50):
    id_lists = [list(range(30)) for _ in range(2048)]  # as SentencePiece returns a batch
    del id_lists
print(len(collections))
"""


def test_workers_collect_no_garbage_for_their_short_lived_lists():
    """At Python's default threshold (700) these 50 batches of 2,048 lists cost ~150 cyclic
    collections; a worker's raised threshold frees them by reference count alone."""
    command = [sys.executable, "-c", _GC_CHECK]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert int(result.stdout) == 0


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc settings")
def test_workers_reuse_freed_memory_instead_of_faulting_pages_in_again():
    """With glibc's defaults each new array of a few MB is given fresh pages (~1,300 page faults
    over these 60 arrays here); after `keep_freed_memory` they reuse the freed heap."""
    command = [sys.executable, "-c", _REUSE_CHECK]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    took, faults = result.stdout.split()
    assert took == "True"
    assert int(faults) < 100
