"""The pretraining-data writer on Apache Beam's local runner beside the local writer.

    /path/to/venv-with-beam/bin/python benchmarks/beam_pretraining_data.py \\
        [--input 'corpus/*.txt'] [--num_workers 1,2] [--max_seq_length 512] [--dupe_factor 4]

Runs `python -m pipelines.pretraining_data` on the same input and settings four ways, each in a
fresh process: the local writer (`--num_workers N`) and the Beam pipeline on the DirectRunner
(`--runner DirectRunner --direct_num_workers N --direct_running_mode multi_processing`), for
each N. Prints examples/s by the clock (whole process, interpreter start-up included), CPU
seconds of the process tree (`RUSAGE_CHILDREN`: the runner's worker processes too), examples per
CPU-second (the per-core rate a Dataflow estimate scales from), and peak RSS summed over the
process tree. It checks that every run wrote the same shards (sha256). The machine is shared:
compare the ratios of one run, not absolute figures across runs.
"""

import argparse
import glob
import hashlib
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def run(arguments: list[str]) -> dict:
    """Runs the writer command in a fresh process; returns its figures and its shards' hashes."""
    import psutil

    with tempfile.TemporaryDirectory() as output_dir:
        command = [sys.executable, "-m", "pipelines.pretraining_data", *arguments]
        command += ["--output_dir", output_dir, "--quiet"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        # Output to a file, not a pipe: Beam's workers log a lot, and a full pipe blocks them.
        log = open(pathlib.Path(output_dir) / "log.txt", "w+b")  # noqa: SIM115
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        parent, peak = psutil.Process(process.pid), 0
        while process.poll() is None:
            try:
                tree = [parent, *parent.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree))
            except psutil.Error:
                pass
            time.sleep(0.05)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        log.seek(0)
        output = log.read().decode(errors="replace")
        log.close()
        if process.returncode:
            error = output[-2000:]
            raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}\n{error}")
        stats = json.loads((pathlib.Path(output_dir) / "stats.json").read_text())
        hashes = {
            name: hashlib.sha256((pathlib.Path(output_dir) / name).read_bytes()).hexdigest()
            for name in stats["shards"]
        }
    cpu = sum(getattr(after, k) - getattr(before, k) for k in ("ru_utime", "ru_stime"))
    return {
        "examples": stats["examples"],
        "wall": wall,
        "cpu": cpu,
        "rss_mb": peak / 2**20,
        "hashes": hashes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default=str(DATA / "corpus/gutenberg/[0-9]*.txt"))
    parser.add_argument("--spm_model", default=str(DATA / "vocab/30k-clean.reconstructed.model"))
    parser.add_argument("--num_workers", default="1,2", help="Comma-separated worker counts.")
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--dupe_factor", type=int, default=4)
    parser.add_argument("--num_shards", type=int, default=4)
    args = parser.parse_args()
    common = [
        "--input", args.input, "--spm_model", args.spm_model,
        "--max_seq_length", str(args.max_seq_length), "--dupe_factor", str(args.dupe_factor),
        "--num_shards", str(args.num_shards),
    ]  # fmt: skip
    megabytes = sum(os.path.getsize(p) for p in glob.glob(args.input))
    rows = {}
    for n in sorted({int(n) for n in args.num_workers.split(",")}):
        rows[f"local writer, {n} worker(s)"] = run([*common, "--num_workers", str(n)])
        rows[f"Beam DirectRunner, {n} worker(s)"] = run(
            [
                *common, "--runner", "DirectRunner", f"--direct_num_workers={n}",
                "--direct_running_mode=multi_processing",
            ]
        )  # fmt: skip
    print(
        f"input: {args.input} ({megabytes / 1e6:.1f} MB), max_seq_length {args.max_seq_length}, "
        f"dupe_factor {args.dupe_factor}, {args.num_shards} shards, {os.cpu_count()} cores, "
        f"load average at the end {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'':34}{'examples':>9}{'wall s':>8}{'CPU s':>8}{'examples/s':>11}"
        f"{'examples/CPU-s':>15}{'peak RSS MB':>12}"
    )
    for name, row in rows.items():
        print(
            f"{name:34}{row['examples']:9,}{row['wall']:8.1f}{row['cpu']:8.1f}"
            f"{row['examples'] / row['wall']:11,.0f}{row['examples'] / row['cpu']:15,.0f}"
            f"{row['rss_mb']:12,.0f}"
        )
    hashes = {json.dumps(row["hashes"], sort_keys=True) for row in rows.values()}
    print(f"identical shards in every run: {len(hashes) == 1}")


if __name__ == "__main__":
    main()
