"""benchmarks/accelerator_side_by_side.py: its model shapes, its table and its CPU smoke run."""

import argparse
import importlib.util
import pathlib
import subprocess
import sys

import pytest

from albert_keras.models import AlbertBackbone

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def test_its_sizes_are_the_albert_presets(benchmark_script):
    # The script reads them from the catalogue; it also assumes E = 128 and one group.
    script = benchmark_script("accelerator_side_by_side")
    assert list(script.SIZES) == ["albert_base", "albert_large", "albert_xlarge", "albert_xxlarge"]
    assert script.SIZES["albert_large"]["hidden_dim"] == 1024
    for preset in script.SIZES:
        wanted = AlbertBackbone.presets[preset]
        assert wanted["embedding_dim"] == 128 and wanted["num_groups"] == 1


def test_the_table_gives_each_peer_its_ratio_to_the_fastest_other(benchmark_script):
    script = benchmark_script("accelerator_side_by_side")
    args = script.parse_args(["--presets", "albert_base"])
    results = {
        "ours-jax": {"seconds": 0.030, "device": "NVIDIA H200", "versions": "jax"},
        "keras-hub-jax": {"seconds": 0.045, "device": "NVIDIA H200", "versions": "jax"},
        "hugging-face-torch": {"skipped": "the device lacks it (No module named 'torch')"},
    }
    lines = script.table(args, "albert_base", results)
    ours = next(line for line in lines if line.startswith("| ours-jax"))
    cells = [cell.strip() for cell in ours.split("|")[1:-1]]
    assert cells[2] == "30.0" and cells[3] == f"{32 * 512 / 0.030:,.0f}"
    flops = 32 * script.train_flops_per_sequence(
        argparse.Namespace(seq_length=512, **script.model_size(args)), 20
    )
    assert cells[5] == f"{flops / 0.030 / 989e12:.1%}"  # the H200's bf16 peak
    assert cells[6] == "1.50"  # 45 ms / 30 ms
    assert any("hugging-face-torch | not run: the device lacks it" in line for line in lines)


def test_unknown_peer_or_preset_is_refused(benchmark_script, capsys):
    script = benchmark_script("accelerator_side_by_side")
    for argv in (["--peers", "ours-jax,pytorch"], ["--presets", "albert_huge"]):
        with pytest.raises(SystemExit) as exit_info:
            script.parse_args(argv)
        assert exit_info.value.code == 2
    assert "unknown ['albert_huge']" in capsys.readouterr().err


@pytest.mark.slow
def test_tiny_mode_runs_every_peer_on_a_cpu():
    """The CI smoke run: every peer times a tiny model on the CPU (or is named as missing)."""
    run = subprocess.run(
        [sys.executable, "accelerator_side_by_side.py", "--tiny"],
        cwd=BENCHMARKS,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    rows = {line.split("|")[1].strip(): line for line in run.stdout.splitlines() if "| " in line}
    for peer in ("ours-jax", "ours-tensorflow", "keras-hub-jax"):
        assert "| cpu |" in rows[peer], rows[peer]
    torch_here = importlib.util.find_spec("torch") and importlib.util.find_spec("transformers")
    if torch_here:
        assert "| cpu |" in rows["hugging-face-torch"], rows["hugging-face-torch"]
    else:
        assert "not run: the device lacks it" in rows["hugging-face-torch"]
