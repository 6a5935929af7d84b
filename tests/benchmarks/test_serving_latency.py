"""benchmarks/serving_latency.py: both exports over strings, equal outputs, then the table."""

import re

import numpy as np
import pytest

pytest.importorskip("tensorflow_text", reason="the exported graphs need tensorflow-text")


@pytest.mark.slow  # three exports and their timings: ~1 min on 2 cores
def test_tiny_run_prints_equal_outputs_and_the_table(benchmark_script, capsys, tmp_path):
    script = benchmark_script("serving_latency")
    assert script.main(["--tiny", "--workdir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("$ python ") and lines[0].endswith(f"--tiny --workdir {tmp_path}")
    for folder in ("ours_saved_model", "ours_padded_saved_model", "keras_hub_saved_model"):
        assert (tmp_path / folder / "saved_model.pb").exists()
    equal = next(line for line in lines if line.startswith("equal outputs:"))
    assert float(re.search(r"within (\S+) on", equal).group(1)) <= 1e-5
    rows = {
        line.split()[0]: line.split()
        for line in lines
        if re.match(r"(ours|ours-padded|keras-hub) ", line)
    }
    assert set(rows) == {"ours", "ours-padded", "keras-hub"}
    assert rows["ours"][2] == rows["ours"][4] == rows["ours"][6] == "1.00"  # against itself
    assert all(float(value) > 0 for row in rows.values() for value in row[1:])
    assert all(len(row) == 10 for row in rows.values())  # load, first request, warm-up last
    assert "10 batch-1 requests and 4 batches of 8 per SavedModel" in lines[-2]
    # seq 32: widths 16 and 32, 1, 2, 4, 8 and 16 rows each
    assert "(the same 10 warm-up requests, one per shape ours can run)" in lines[-2]
    goal = re.fullmatch(
        r"goal \(issue #34\): ours >= 1.3x keras-hub at batch 1 \(p50\) and at batch 8: "
        r"(\S+)x and (\S+)x; p99 no worse than keras-hub's \(>= 1.0x\): (\S+)x",
        lines[-1],
    )
    assert goal and goal.groups() == tuple(rows["keras-hub"][i] for i in (2, 6, 4))


def test_defaults_time_200_requests_at_batch_1_and_batches_of_64(benchmark_script):
    args = benchmark_script("serving_latency").parse_arguments([])
    assert args.rounds * args.requests >= 200 and args.batch_size == 64
    assert args.serving_warmup == "on"


def test_every_peer_is_warmed_up_with_the_same_requests(benchmark_script, tiny_spm, tmp_path):
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    from albert_keras.serving.warmup_requests import write_warmup_requests

    (tmp_path / "saved_model.pb").write_bytes(b"")  # read_warmup_requests wants a SavedModel
    preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), sequence_length=20)
    assert write_warmup_requests(tmp_path, preprocessor, 20) == 11  # widths 16, 20; and pairs
    seen = {"ours": [], "keras-hub": []}
    calls = {name: (lambda texts, name=name: seen[name].append(texts)) for name in seen}
    seconds, count = benchmark_script("serving_latency").warm_up_all(calls, str(tmp_path))
    assert count == 10 and set(seconds) == set(seen)  # the pairs request is ours alone
    assert seen["ours"] == seen["keras-hub"]
    assert [len(texts) for texts in seen["ours"]] == [1, 2, 4, 8, 16] * 2
    assert all(isinstance(text, str) for texts in seen["ours"] for text in texts)


def test_disagreeing_exports_stop_before_timing(benchmark_script):
    script = benchmark_script("serving_latency")
    calls = {
        "ours": lambda texts: np.full((len(texts), 2), 0.5, np.float32),
        "keras-hub": lambda texts: np.tile(np.float32([[0.4, 0.6]]), (len(texts), 1)),
    }
    with pytest.raises(SystemExit, match="probabilities differ by up to 1.00e-01"):
        script.check_equal_outputs(calls, ["a", "b", "c"], batch_size=2)
    calls["keras-hub"] = lambda texts: np.full((len(texts), 2), 0.5 + 2e-5, np.float32)
    with pytest.raises(SystemExit, match="differ by up to 2.0"):  # over 1e-5: stop
        script.check_equal_outputs(calls, ["a", "b", "c"], batch_size=2)
    calls["keras-hub"] = calls["ours"]
    assert script.check_equal_outputs(calls, ["a", "b", "c"], batch_size=2) == (0.0, 0.0)
