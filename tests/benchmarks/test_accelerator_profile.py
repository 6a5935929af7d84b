import gzip
import json
import os

import pytest


@pytest.fixture(autouse=True)
def _keep_the_backend(monkeypatch):
    # The script defaults KERAS_BACKEND to jax on import; the suite's backend must stay.
    monkeypatch.setenv("KERAS_BACKEND", os.environ.get("KERAS_BACKEND", "tensorflow"))


def _write_trace(path, events):
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": events}, f)


def _meta(pid, name):
    return {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}}


def _kernel(pid, name, ts, dur):
    return {"ph": "X", "pid": pid, "name": name, "ts": ts, "dur": dur}


def test_kernel_times_sums_the_device_streams_only(benchmark_script, tmp_path):
    profile = benchmark_script("accelerator_profile")
    path = tmp_path / "vm.trace.json.gz"
    _write_trace(
        path,
        [
            _meta(1, "/host:CPU"),
            _meta(7, "/device:GPU:0 (stream 13)"),
            _meta(8, "/device:GPU:0 (stream 14)"),
            _kernel(1, "PjitFunction(train_step)", 0.0, 500.0),
            _kernel(7, "nvjet_sm90_tst_128x128_NNT", 100.0, 30.0),
            _kernel(7, "nvjet_sm90_tst_128x128_NNT", 140.0, 20.0),
            _kernel(8, "loop_convert_multiply_fusion_11", 130.0, 40.0),
        ],
    )
    totals, span = profile.kernel_times(str(path))
    assert totals == {"nvjet_sm90_tst_128x128_NNT": 50.0, "loop_convert_multiply_fusion_11": 40.0}
    assert span == pytest.approx(70.0)  # 100 .. 170 on the device, the host's event left out


def test_kernel_times_without_device_streams_names_the_processes(
    benchmark_script, tmp_path, capsys
):
    profile = benchmark_script("accelerator_profile")
    path = tmp_path / "cpu.trace.json.gz"
    _write_trace(path, [_meta(1, "/host:CPU"), _kernel(1, "dot", 0.0, 5.0)])
    assert profile.kernel_times(str(path)) == ({}, 0.0)
    assert "['/host:CPU']" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name, family",
    [
        ("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16", "attention (cuDNN)"),
        ("nvjet_sm90_tst_320x64_64x4_2x4_h_bz_NNT", "matmul"),
        ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x128>", "matmul"),
        ("input_add_reduce_fusion_19", "XLA fusion (elementwise, reductions, softmax)"),
        ("Memset 0", "other"),
    ],
)
def test_family_groups_kernel_names(benchmark_script, name, family):
    assert benchmark_script("accelerator_profile").family(name) == family
