"""`model.fit` over 8 simulated devices (a v2-8's or v5e-8's shape) equals a 1-device run.

Two subprocesses of data_parallel_run.py on the JAX backend, with
`XLA_FLAGS=--xla_force_host_platform_device_count=8` and `=1`: the same seed, records and global
batch of 16, split 8 x 2 in the first.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

RUN = pathlib.Path(__file__).with_name("data_parallel_run.py")
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def start_on_devices(count: int, records: str) -> subprocess.Popen:
    """Starts data_parallel_run.py on `count` simulated host devices (both runs at once: each
    spends most of its time compiling on one core)."""
    return subprocess.Popen(
        [sys.executable, str(RUN), records],
        env={
            **os.environ,
            "KERAS_BACKEND": "jax",
            "JAX_PLATFORMS": "cpu",
            "XLA_FLAGS": f"--xla_force_host_platform_device_count={count}",
            "TF_CPP_MIN_LOG_LEVEL": "3",
            "PYTHONPATH": str(REPO_ROOT),
        },
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def report_of(run: subprocess.Popen) -> dict:
    stdout, stderr = run.communicate(timeout=600)
    lines = [line for line in stdout.splitlines() if line.startswith("REPORT ")]
    assert run.returncode == 0 and lines, stderr[-3000:]
    return json.loads(lines[-1][len("REPORT ") :])


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_fit_over_8_devices_equals_1_device(tiny_records):
    runs = [start_on_devices(count, tiny_records["train"]) for count in (8, 1)]
    eight, one = [report_of(run) for run in runs]
    assert eight["line"].startswith(
        "runtime: jax backend, DataParallel over 8 cpu device(s), global batch 16 = 8 x 2, "
        "steps_per_execution=1; why: asked for"
    )
    # fit ran inside the distribution, every step, with the weights on all 8 devices.
    distributed = {"distribution": "DataParallel", "mesh": {"batch": 8}, "variable_devices": 8}
    assert eight["states"] == [distributed] * 6
    assert one["states"] == [{**distributed, "mesh": {"batch": 1}, "variable_devices": 1}] * 6
    assert set(eight["history"]) == set(one["history"]) >= {"loss", "mlm_loss", "sentence_loss"}
    differences = {
        name: float(np.max(np.abs(np.subtract(eight["history"][name], values))))
        for name, values in one["history"].items()
    }
    print("max |8 devices - 1 device| per metric:", differences)
    assert max(differences.values()) <= 1e-5, differences
    assert one["history"]["loss"][-1] < one["history"]["loss"][0]  # it trained
