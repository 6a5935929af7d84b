"""Two `jax.distributed` processes on localhost (2 CPU devices each, collectives between the
processes) train with `DataParallel` over the global mesh of 4 devices, each process feeding its
own rows: the per-step losses equal one process over 4 devices with the same global batch."""

import json
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from workers import Workers, free_ports

RUN = os.path.join(os.path.dirname(__file__), "jax_process_run.py")
# Measured: the losses agree to ~1e-7 (float32 all-reduces over 4 devices, in both runs).
TOLERANCE = 1e-5


def _env(devices):
    return {
        "KERAS_BACKEND": "jax",
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
        "JAX_PLATFORMS": "cpu",
        "CUDA_VISIBLE_DEVICES": "",
    }


def _reports(workers, count):
    reports = []
    for i in range(count):
        log = workers.log(i)
        lines = [line for line in log.splitlines() if line.startswith("REPORT ")]
        assert lines, log[-3000:]
        reports.append(json.loads(lines[-1][len("REPORT ") :]))
    return reports


@pytest.mark.slow
def test_two_jax_processes_equal_one_process(tiny_records, tmp_path):
    port = free_ports(1)[0]
    argv = [RUN, tiny_records["train"], "2"]
    envs = [_env(2), _env(2)]
    runs = [[*argv, str(i), str(port)] for i in range(2)]
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    # One `Workers` per process (they differ in their arguments), all ended by the `with`s.
    with Workers(runs[0], envs[:1], str(tmp_path / "two")) as first:
        os.makedirs(tmp_path / "two1")
        with Workers(runs[1], envs[1:], str(tmp_path / "two1")) as second:
            assert second.wait(300) == [0], second.log(0)[-3000:]
            assert first.wait(60) == [0], first.log(0)[-3000:]
            two = _reports(first, 1) + _reports(second, 1)
    with Workers(
        [RUN, tiny_records["train"], "1", "0", "0"], [_env(4)], str(tmp_path / "one")
    ) as alone:
        assert alone.wait(300) == [0], alone.log(0)[-3000:]
        one = _reports(alone, 1)[0]
    assert [r["process"] for r in two] == [0, 1]
    assert all(r["processes"] == 2 and r["local_devices"] == 2 for r in two)
    assert all(r["global_devices"] == 4 and r["mesh"] == {"batch": 4} for r in two)
    assert (one["processes"], one["global_devices"]) == (1, 4)
    assert len(one["losses"]) == 6
    for r in two:
        np.testing.assert_allclose(r["losses"], one["losses"], rtol=TOLERANCE)
