"""Pretraining-data writer speed beside SentencePiece alone and the official script.

    .venv/bin/python benchmarks/pretraining_data.py [--input 'corpus/*.txt'] [--num_workers 2]

Prints examples/s, MB of input text/s and peak RSS of `python -m pipelines.pretraining_data`
at max_seq_length 128 with dupe_factor 1 and 10, beside SentencePiece's own encoding speed on
the same sentences (the floor of any pipeline: no reading, no pairs, no masks, no writing) and
the official script's figures from `../shared/data/reference/README.md`. Each run is a fresh
process; its time is taken from its `stats.json` (after interpreter start-up, as the official
figures), and RSS is sampled over the whole process tree. The machine is shared, so compare
the ratios printed by one run rather than absolute figures across runs.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
# ../shared/data/reference/README.md: the official script at seq 128 on the six books (8.2 MB),
# after start-up (its log: first read to last write).
OFFICIAL = {
    1: {"examples": 16217, "seconds": 68.0, "rss_mb": 805},
    10: {"examples": 159182, "seconds": 601.0, "rss_mb": 1320},
}
OFFICIAL_MB = 8.2


def sentencepiece_alone(pattern: str, spm_model: str) -> dict:
    """Seconds SentencePiece takes to encode the input's sentences (prepared as ours are)."""
    sys.path.insert(0, str(ROOT))
    from pipelines.documents import iter_documents
    from pipelines.tokenization import SentencePieceEncoder

    encoder = SentencePieceEncoder(spm_model)
    sentences = encoder.preprocess([s for d in iter_documents(pattern) for s in d])
    processor = encoder._processor
    started = time.perf_counter()
    processor.encode(sentences, num_threads=1)
    return {"seconds": time.perf_counter() - started}


def ours(pattern: str, spm_model: str, dupe_factor: int, num_workers: int, seq: int) -> dict:
    """Runs the writer in a fresh process; returns its examples, seconds and peak RSS."""
    import psutil

    with tempfile.TemporaryDirectory() as output_dir:
        command = [
            sys.executable, "-m", "pipelines.pretraining_data", "--input", pattern,
            "--spm_model", spm_model, "--output_dir", output_dir,
            "--max_seq_length", str(seq), "--dupe_factor", str(dupe_factor),
            "--num_shards", str(max(2, num_workers)), "--num_workers", str(num_workers), "--quiet",
        ]  # fmt: skip
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT)
        tree_peak = largest = 0
        parent = psutil.Process(process.pid)
        while process.poll() is None:
            try:
                rss = [p.memory_info().rss for p in [parent, *parent.children(recursive=True)]]
            except psutil.Error:
                rss = [0]
            tree_peak, largest = max(tree_peak, sum(rss)), max(largest, max(rss))
            time.sleep(0.05)
        wall = time.perf_counter() - started
        if process.returncode:
            raise SystemExit(f"the writer failed ({process.returncode}): {' '.join(command)}")
        stats = json.loads((pathlib.Path(output_dir) / "stats.json").read_text())
    return {
        "examples": stats["examples"],
        "seconds": stats["seconds"],
        "wall": wall,
        "rss_mb": tree_peak / 2**20,
        "largest_mb": largest / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default=str(DATA / "corpus/gutenberg/[0-9]*.txt"))
    parser.add_argument("--spm_model", default=str(DATA / "vocab/30k-clean.reconstructed.model"))
    parser.add_argument("--num_workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=1, help="Best of this many runs each.")
    args = parser.parse_args()
    import glob

    megabytes = sum(os.path.getsize(p) for p in glob.glob(args.input)) / 1e6
    rows = {}
    for _ in range(args.repeats):
        # Interleaved, so a busy spell on the shared machine hits every row alike.
        for name, run in [
            ("SentencePiece alone", lambda: sentencepiece_alone(args.input, args.spm_model)),
            ("ours, dupe 1", lambda: ours(args.input, args.spm_model, 1, args.num_workers,
                                          args.max_seq_length)),
            ("ours, dupe 10", lambda: ours(args.input, args.spm_model, 10, args.num_workers,
                                           args.max_seq_length)),
        ]:  # fmt: skip
            result = run()
            if name not in rows or result["seconds"] < rows[name]["seconds"]:
                rows[name] = result
    for dupe, figures in OFFICIAL.items():
        rows[f"official, dupe {dupe}"] = {**figures, "megabytes": OFFICIAL_MB}

    print(f"input: {args.input} ({megabytes:.2f} MB), max_seq_length {args.max_seq_length}, "
          f"{args.num_workers} workers, {os.cpu_count()} cores")  # fmt: skip
    header = (
        f"{'':22}{'examples':>10}{'seconds':>9}{'examples/s':>12}{'MB/s':>7}{'peak RSS MB':>24}"
    )
    print(header)
    for name, row in rows.items():
        seconds = row["seconds"]
        rate = f"{row['examples'] / seconds:12,.0f}" if "examples" in row else f"{'-':>12}"
        examples = f"{row['examples']:10,}" if "examples" in row else f"{'-':>10}"
        mb_rate = row.get("megabytes", megabytes) / seconds
        rss = ""
        if "rss_mb" in row:
            rss = f"{row['rss_mb']:.0f}" + (
                f" (largest process {row['largest_mb']:.0f})" if "largest_mb" in row else ""
            )
        print(f"{name:22}{examples}{seconds:9.2f}{rate}{mb_rate:7.2f}{rss:>24}")

    def per_second(name):
        return rows[name]["examples"] / rows[name]["seconds"]

    print("ratios, this run:")
    for dupe, goal in [(1, 20), (10, 50)]:
        ratio = per_second(f"ours, dupe {dupe}") / per_second(f"official, dupe {dupe}")
        print(f"  examples/s ours / official, dupe {dupe:2}: {ratio:6.1f}x (goal >= {goal}x)")
    share = rows["SentencePiece alone"]["seconds"] / rows["ours, dupe 1"]["seconds"]
    print(f"  MB/s ours (dupe 1) / SentencePiece alone: {share:6.2f}  (goal >= 0.70)")
    wall = {name: row["wall"] for name, row in rows.items() if "wall" in row}
    print("  wall seconds with start-up: " + ", ".join(f"{k} {v:.1f}" for k, v in wall.items()))


if __name__ == "__main__":
    main()
