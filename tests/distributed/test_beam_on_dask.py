"""The Beam data writer on `--runner DaskRunner` over a dask.distributed LocalCluster of two worker
processes (TCP, `--dask_client_address`) writes the local writer's shards byte for byte."""

import hashlib
import json
import os

# dask.distributed comes with the `beam` extra (apache-beam[dask]), which `make install`
# installs: a broken install fails this module at import instead of skipping its test.
import distributed
import pytest

from pipelines.pretraining_data import main, write_pretraining_data

SPM = "vocab/30k-clean.reconstructed.model"
BOOKS = ["corpus/gutenberg/1342-0.txt", "corpus/gutenberg/1661.txt"]
SETTINGS = {"max_seq_length": 128, "num_shards": 3, "group_chars": 1 << 13, "dupe_factor": 1}


def _hashes(folder):
    names = sorted(n for n in os.listdir(folder) if n.endswith(".tfrecord"))
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names}


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_dask_runner_on_two_worker_processes_writes_the_local_bytes(shared_data, tmp_path):
    books = [str(shared_data / book) for book in BOOKS]
    local = write_pretraining_data(
        input=books, spm_model=str(shared_data / SPM), output_dir=str(tmp_path / "local"),
        progress=False, **SETTINGS,
    )  # fmt: skip
    arguments = ["--input", ",".join(books), "--spm_model", str(shared_data / SPM)]
    arguments += ["--output_dir", str(tmp_path / "dask"), "--quiet"]
    for name, value in SETTINGS.items():
        arguments += [f"--{name}", str(value)]
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        with distributed.Client(cluster) as client:
            workers = set(client.scheduler_info()["workers"])
            assert len(workers) == 2  # two processes, each with its own pid
            pids = client.run(os.getpid)
            assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
            with distributed.get_task_stream(client) as tasks:
                code = main([*arguments, "--runner", "DaskRunner",
                             "--dask_client_address", cluster.scheduler_address])  # fmt: skip
            ran_on = {task["worker"] for task in tasks.data}
    finally:
        cluster.close()
    assert code == 0
    hashes = _hashes(tmp_path / "local")
    assert len(hashes) == 3 and local["examples"] > 400
    assert _hashes(tmp_path / "dask") == hashes
    dask = json.loads((tmp_path / "dask" / "stats.json").read_text())
    timing = ("seconds", "cpu_seconds")
    assert {k: v for k, v in dask.items() if k not in timing} == {
        k: v for k, v in local.items() if k not in timing
    }
    assert ran_on == workers  # the work was spread over both worker processes
