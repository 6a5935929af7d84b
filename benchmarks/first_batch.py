"""Time to the first batch of `pipelines.read_pretraining_records`, static against dynamic masks.

    .venv/bin/python benchmarks/first_batch.py [--baseline REV] [--rounds 5]

Times, in a fresh process each (TensorFlow imported before the clock starts), the call to
`read_pretraining_records` and the first `next()` on its dataset: the one-time cost a training
run pays before its first step (tracing the map functions; with dynamic masking, also compiling
the masking's XLA functions). At the defaults a run gets: seq 512, P 20, batch 32; both as the
pretraining job reads (`start_step=0`, the exact-resume path) and as a plain seeded reader.
`--baseline REV` adds the same dynamic reader from `pipelines/` at git revision REV (extracted
to a temp folder), so a change is measured against what it replaced in one run. The records
are the synthetic ones of `read_pretraining_records.py` (the time does not depend on the text).

The machine is shared: peers alternate round by round in a rotated order and the median round
counts; CPU-seconds (the process's, all threads) are printed beside the clock.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from _timing import measure_in_fresh_process, print_table
from read_pretraining_records import VOCABULARY_SIZE, write_synthetic_records

ROOT = pathlib.Path(__file__).resolve().parents[1]


def measure(pattern: str, dynamic: bool, start_step: int | None, args) -> dict:
    """In this (fresh) process: seconds from building the reader to its first batch."""
    import tensorflow as tf

    from pipelines.record_reader import read_pretraining_records

    try:
        from pipelines.masking_settings import MaskingSettings
    except ImportError:  # a --baseline reader from before MaskingSettings
        masking = {"dynamic_masking": dynamic, "vocabulary_size": VOCABULARY_SIZE}
    else:
        settings = MaskingSettings(vocabulary_size=VOCABULARY_SIZE)
        masking = {"dynamic_masking": settings if dynamic else False}
    tf.constant(0)  # the runtime's own start-up is not the reader's
    cpu, wall = time.process_time(), time.perf_counter()
    dataset = read_pretraining_records(
        pattern,
        args.batch_size,
        max_seq_length=args.seq_length,
        max_predictions_per_seq=args.max_predictions_per_seq,
        **masking,
        seed=args.seed,
        start_step=start_step,
    )
    built = time.perf_counter() - wall
    next(iter(dataset))
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "built": built,
    }


def extract_pipelines(revision: str, directory: pathlib.Path) -> None:
    """`pipelines/` as it was at `revision`, under `directory`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "pipelines"],
        check=True,
        capture_output=True,
    ).stdout
    archive_path = directory / "pipelines.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(directory, filter="data")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="git revision whose dynamic reader to time beside")
    parser.add_argument("--seq_length", type=int, default=512)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--num_files", type=int, default=2)
    parser.add_argument("--examples_per_file", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # "DYNAMIC,START,PATTERN": a child
    args = parser.parse_args(argv)
    if args.measure:
        dynamic, start_step, pattern = args.measure.split(",", 2)
        start = None if start_step == "none" else int(start_step)
        print(json.dumps(measure(pattern, dynamic == "1", start, args)))
        return 0

    with tempfile.TemporaryDirectory() as directory:
        directory = pathlib.Path(directory)
        sys.path.insert(0, str(ROOT))
        pattern = write_synthetic_records(directory, args.seq_length, args)
        trees = {"this tree": str(ROOT)}
        if args.baseline:
            (directory / "baseline").mkdir()
            extract_pipelines(args.baseline, directory / "baseline")
            trees[args.baseline] = str(directory / "baseline")
        peers = [
            (start_step, dynamic, tree)
            for start_step in ("0", "none")
            for dynamic in (False, True)
            for tree in trees
            if dynamic or tree == "this tree"
        ]
        results = {peer: [] for peer in peers}
        for round_index in range(args.rounds):
            shift = round_index % len(peers)
            for start_step, dynamic, tree in peers[shift:] + peers[:shift]:
                result = measure_in_fresh_process(
                    __file__,
                    argv or sys.argv[1:],
                    f"{int(dynamic)},{start_step},{pattern}",
                    pythonpath=trees[tree],
                )
                results[(start_step, dynamic, tree)].append(result)
            print(f"  round {round_index + 1}/{args.rounds} done", flush=True)

    print(
        f"\nread_pretraining_records to its first batch: seq {args.seq_length}, "
        f"P={args.max_predictions_per_seq}, batch {args.batch_size}, median of {args.rounds} "
        "rounds (fresh processes)"
    )
    header = ["reader", "masking", "pipelines/", "built (s)", "first batch (s)", "CPU (s)"]
    rows = []
    for start_step, dynamic, tree in peers:
        runs = results[(start_step, dynamic, tree)]
        rows.append(
            [
                "start_step=0 (pretrain job)" if start_step == "0" else "seed only",
                "dynamic" if dynamic else "static",
                tree,
                f"{statistics.median(r['built'] for r in runs):.2f}",
                f"{statistics.median(r['wall'] for r in runs):.2f}",
                f"{statistics.median(r['cpu'] for r in runs):.2f}",
            ]
        )
    print_table(header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
