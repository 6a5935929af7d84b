"""benchmarks/serving_latency.py: both exports over strings, equal outputs, then the table."""

import re

import numpy as np
import pytest

pytest.importorskip("tensorflow_text", reason="the exported graphs need tensorflow-text")


def test_tiny_run_prints_equal_outputs_and_the_table(benchmark_script, capsys, tmp_path):
    script = benchmark_script("serving_latency")
    assert script.main(["--tiny", "--workdir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("$ python ") and lines[0].endswith(f"--tiny --workdir {tmp_path}")
    assert (tmp_path / "ours_saved_model" / "saved_model.pb").exists()
    assert (tmp_path / "keras_hub_saved_model" / "saved_model.pb").exists()
    equal = next(line for line in lines if line.startswith("equal outputs:"))
    assert float(re.search(r"within (\S+) on", equal).group(1)) <= 1e-4
    rows = {line.split()[0]: line.split() for line in lines if re.match(r"(ours|keras-hub) ", line)}
    assert set(rows) == {"ours", "keras-hub"}
    assert rows["ours"][3] == rows["ours"][5] == "1.00"  # ratios against itself
    assert all(float(value) > 0 for value in rows["keras-hub"][1:])
    assert "10 batch-1 requests and 4 batches of 8 per SavedModel" in lines[-1]


def test_disagreeing_exports_stop_before_timing(benchmark_script):
    script = benchmark_script("serving_latency")
    calls = {
        "ours": lambda texts: np.full((len(texts), 2), 0.5, np.float32),
        "keras-hub": lambda texts: np.tile(np.float32([[0.4, 0.6]]), (len(texts), 1)),
    }
    with pytest.raises(SystemExit, match="probabilities differ by up to 1.00e-01"):
        script.check_equal_outputs(calls, ["a", "b", "c"], batch_size=2)
    calls["keras-hub"] = calls["ours"]
    assert script.check_equal_outputs(calls, ["a", "b", "c"], batch_size=2) == (0.0, 0.0)
