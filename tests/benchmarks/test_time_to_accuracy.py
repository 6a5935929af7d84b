"""benchmarks/time_to_accuracy.py on tiny synthetic records: its table and its last line."""

import re

import pytest
from synthetic_records import VOCABULARY_SIZE, write_synthetic_records

pytest.importorskip("torch", reason="torch not installed (make install-hf)")
pytest.importorskip("transformers", reason="transformers not installed (make install-hf)")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tta_records")
    write_synthetic_records(folder / "train.tfrecord", 64, seed=0)
    write_synthetic_records(folder / "heldout.tfrecord", 16, seed=1)
    return ["--records", str(folder / "train.tfrecord"), "--heldout",
            str(folder / "heldout.tfrecord"), "--vocabulary_size", str(VOCABULARY_SIZE)]  # fmt: skip


def run(benchmark_script, capsys, tmp_path, records, *flags):
    script = benchmark_script("time_to_accuracy")
    argv = [*records, "--tiny", "--workdir", str(tmp_path), "--eval_every", "5", *flags]
    assert script.main(argv) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.slow  # four peers built and traced: ~100 s on the shared 2 cores
def test_unreachable_target_says_not_reached(benchmark_script, capsys, tmp_path, records):
    lines = run(benchmark_script, capsys, tmp_path, records, "--target", "1.01", "--max_steps", "5")
    assert lines[0].startswith("$ python ") and "--target 1.01" in lines[0]
    # One init in all: HF computes ours' float32 logits to round-off; keras-hub's MLM head
    # has its own LayerNorm epsilon (1e-5 against ours' 1e-12), so it is close, not equal.
    same = next(line for line in lines if line.startswith("same init:"))
    differences = dict(re.findall(r"(\S+ \S+) ([0-9.]+e[-+]\d+)", same.split("):")[1]))
    assert float(differences["hf float32"]) < 1e-5
    assert float(differences["keras-hub float32"]) < 1e-2
    rows = [line for line in lines if re.match(r"(ours|keras-hub|hf) ", line)]
    # Ours twice (its default precision and float32) where auto picks bfloat16, else once.
    bfloat16_here = any(line.startswith("ours mixed_bfloat16") for line in rows)
    assert len(rows) == 3 + bfloat16_here and all("not reached in 5" in row for row in rows)
    # Both sides missed: no ratio, only that neither got there.
    assert re.fullmatch(
        r"time to accuracy: ours >= \d+ s \(not reached\), keras-hub >= \d+ s \(not reached\), "
        r"Hugging Face >= \d+ s \(not reached\)",
        lines[-1],
    )


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_reachable_target_stops_at_the_first_score(benchmark_script, capsys, tmp_path, records):
    lines = run(
        benchmark_script, capsys, tmp_path, records, "--target", "0.0", "--precision", "defaults"
    )
    rows = [line.split() for line in lines if re.match(r"(ours|keras-hub|hf) ", line)]
    assert [row[2] for row in rows] == ["5", "5", "5"]  # steps: every peer reached it at 5
    assert re.fullmatch(
        r"time to accuracy: ours \d+ s, keras-hub \d+ s \(\d+\.\dx\), Hugging Face \d+ s "
        r"\(\d+\.\dx\)",
        lines[-1],
    )


def test_a_missed_target_makes_the_ratio_a_bound(benchmark_script):
    ratio = benchmark_script("time_to_accuracy").ratio
    ours = {"reached": True, "wall": 10.0}
    assert ratio({"reached": True, "wall": 25.0}, ours, "wall") == "2.50"
    assert ratio({"reached": False, "wall": 25.0}, ours, "wall", digits=1) == ">= 2.5"
    missed = {"reached": False, "wall": 10.0}
    assert ratio({"reached": True, "wall": 5.0}, missed, "wall") == "<= 0.50"
    assert ratio({"reached": False, "wall": 5.0}, missed, "wall") is None
    assert ratio(ours, None, "wall") is None


@pytest.mark.slow  # three races of three peers: ~90 s on the shared 2 cores
def test_sweep_prints_each_peers_best_rate_then_the_defaults(
    benchmark_script, capsys, tmp_path, records
):
    lines = run(
        benchmark_script, capsys, tmp_path, records,
        "--target", "0.0", "--precision", "defaults", "--sweep", "1e-3,1e-2",
    )  # fmt: skip
    assert sum(line.startswith("sweep: every peer at learning rate") for line in lines) == 2
    # The tuned line as soon as the sweep ends, and again above the defaults' line at the end.
    said = [i for i, line in enumerate(lines) if line.startswith("time to accuracy, each")]
    assert len(said) == 2 and lines[said[0]] == lines[said[1]]
    tuned = said[1]
    assert re.fullmatch(
        r"time to accuracy, each at its best rate: ours \d+ s, keras-hub \d+ s \(\d+\.\dx\), "
        r"Hugging Face \d+ s \(\d+\.\dx\)",
        lines[tuned],
    )
    assert lines[-1].startswith("time to accuracy: ours ") and tuned < len(lines) - 1


def test_sweep_keeps_the_soonest_rate_and_names_a_peer_that_never_reached(benchmark_script, capsys):
    script = benchmark_script("time_to_accuracy")
    args = script.parse_arguments(["--sweep", "5e-5,1e-3"])
    assert args.sweep == [5e-5, 1e-3]
    best = {
        "ours float32": {"rate": 1e-3, "state": {"steps": 300, "wall": 10.0, "cpu": 19.0}},
        "keras-hub float32": {"rate": 5e-5, "state": {"steps": 900, "wall": 35.0, "cpu": 60.0}},
    }
    names = {"ours": "ours float32", "keras-hub": "keras-hub float32", "hf": "hf float32"}
    script.report_sweep(args, best, names)
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (
        "time to accuracy, each at its best rate: ours 10 s, keras-hub 35 s (3.5x), "
        "Hugging Face not reached at any swept rate"
    )
    for bad in ("5e-5,fast", "0,1e-3"):
        with pytest.raises(SystemExit):
            script.parse_arguments(["--sweep", bad])
