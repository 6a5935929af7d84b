"""The pretraining-data writer on Apache Beam's DirectRunner and DaskRunner beside the local
writer, at two corpus sizes, so that the runner's fixed start-up cost and its cost per MB are
told apart.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/beam_pretraining_data.py \\
        [--megabytes 1,8] [--tiny] [--repeats 3] [--max_seq_length 512] [--dupe_factor 4]

Each corpus is cut from the books (`../shared/data/corpus/gutenberg`, concatenated in name
order, repeated if more text is asked for than they hold) into files of about 1 MB, ended at a
paragraph, in a temporary folder. On each corpus it runs `python -m pipelines.pretraining_data`
in a fresh process: the local writer with 1 and 2 workers, and the Beam pipeline on the
DirectRunner with 2 workers (`--direct_running_mode multi_processing`) and on the DaskRunner over
a dask.distributed LocalCluster of 2 worker processes started in the measured process
(`DASK_DRIVER`; the scheduler and workers are in its tree). For each run: examples,
CPU-seconds of the whole process tree (`RUSAGE_CHILDREN`: Beam's worker processes too;
interpreter start-up included), peak RSS summed over the tree (a page shared by processes, as
Beam's libraries are, counts once per process), peak PSS summed over the tree (a shared page
counts once in all: the memory the tree takes), and wall seconds (meaningless on a loaded
machine), each the median of `--repeats` rounds (Beam's start-up alone varies by about half a
CPU-second from run to run). It checks that every run on a corpus wrote the same shards.

From the two sizes: the extra CPU-seconds from the small corpus to the large one (the cost of
the work itself), the fixed start-up cost (the CPU-seconds extrapolated to an empty corpus:
interpreter, imports, the runner's workers), and the ratio of Beam's extra CPU-seconds to the
local writer's (2 workers; the goal of issue #34 is <= 1/0.6 = 1.67). Last, Beam's own floor on
this runner: a 3-element pipeline's CPU-seconds and memory, and what each process (the driver,
each worker) held when the tree's PSS peaked, in Beam's run on the large corpus and in the
floor. `--tiny` (0.25 and 1 MB at dupe 1)
checks that the script runs in a minute; its ratio is noise, since its extra work (a tenth of
a CPU-second) is below the spread of Beam's start-up (about half a CPU-second).
"""

import argparse
import hashlib
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
FILE_BYTES = 1_000_000
GOAL = 1 / 0.6

RUNS = {
    "local writer, 1 worker": ["--num_workers", "1"],
    "local writer, 2 workers": ["--num_workers", "2"],
    "Beam DirectRunner, 2 workers": [
        "--runner", "DirectRunner", "--direct_num_workers=2",
        "--direct_running_mode=multi_processing",
    ],
    # Its `--runner DaskRunner --dask_client_address ...` are added by `DASK_DRIVER`.
    "Beam DaskRunner, 2 workers": [],
}  # fmt: skip
LOCAL, BEAM = "local writer, 2 workers", "Beam DirectRunner, 2 workers"
DASK = "Beam DaskRunner, 2 workers"

# The DaskRunner's run: a dask.distributed LocalCluster of 2 worker processes (1 thread each,
# talking over TCP) started by the measured process, so its workers are in the measured tree.
DASK_DRIVER = """
import sys
from distributed import LocalCluster
from pipelines.pretraining_data import main
if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        code = main([*sys.argv[1:], "--runner", "DaskRunner",
                     "--dask_client_address", cluster.scheduler_address])
    sys.exit(code)
"""


def make_corpus(folder: pathlib.Path, megabytes: float, books: list[pathlib.Path]) -> str:
    """Writes about `megabytes` MB of the books into `folder` as ~1 MB files; returns a glob."""
    texts = [book.read_bytes().decode("utf-8-sig", errors="replace") for book in books]
    text = "\n\n".join(texts).replace("\r\n", "\n").encode()  # the books end lines with CRLF
    wanted = int(megabytes * 1e6)
    folder.mkdir(parents=True)
    written, number, position = 0, 0, 0
    while written < wanted:
        size = min(FILE_BYTES, wanted - written)
        if position + size >= len(text):  # out of books: start them again
            chunk, position = text[position:], 0
        else:
            end = text.find(b"\n\n", position + size)  # end at a paragraph
            end = len(text) if end < 0 else end
            chunk, position = text[position:end], end + 2
        (folder / f"part-{number:04d}.txt").write_bytes(chunk + b"\n")
        written += len(chunk) + 1
        number += 1
    return str(folder / "part-*.txt")


def measure(command: list[str], log_path: pathlib.Path) -> dict:
    """Runs `command` in a fresh process; returns the CPU-seconds, peak RSS and PSS of its
    process tree, each process's RSS and PSS when the tree's PSS peaked (the driver first;
    the shells that start Beam's workers, under 8 MB, left out) and its wall seconds."""
    import psutil

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # Output to a file, not a pipe: Beam's workers log a lot, and a full pipe blocks them.
    with open(log_path, "w+b") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        parent, peak, peak_pss, processes = psutil.Process(process.pid), 0, 0, []
        while process.poll() is None:
            try:
                tree = [parent, *parent.children(recursive=True)]
                memory = [p.memory_full_info() for p in tree]
                peak = max(peak, sum(m.rss for m in memory))
                if sum(m.pss for m in memory) > peak_pss:
                    peak_pss = sum(m.pss for m in memory)
                    processes = [(m.rss / 2**20, m.pss / 2**20) for m in memory if m.rss > 2**23]
            except psutil.Error:
                pass
            time.sleep(0.02)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        log.seek(0)
        output = log.read().decode(errors="replace")
    if process.returncode:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}\n{output[-2000:]}")
    return {
        "wall": wall,
        "cpu": sum(getattr(after, k) - getattr(before, k) for k in ("ru_utime", "ru_stime")),
        "rss_mb": peak / 2**20,
        "pss_mb": peak_pss / 2**20,
        "processes": processes,
    }


def run(arguments: list[str], dask: bool = False) -> dict:
    """Runs the writer command in a fresh process (on the DaskRunner with `dask`); returns its
    figures and its shards' hashes."""
    with tempfile.TemporaryDirectory() as folder:
        output_dir = pathlib.Path(folder) / "records"
        if dask:
            driver = pathlib.Path(folder) / "dask_driver.py"
            driver.write_text(DASK_DRIVER)
            command = [sys.executable, str(driver), *arguments]
        else:
            command = [sys.executable, "-m", "pipelines.pretraining_data", *arguments]
        command += ["--output_dir", str(output_dir), "--quiet"]
        figures = measure(command, pathlib.Path(folder) / "log.txt")
        stats = json.loads((output_dir / "stats.json").read_text())
        hashes = {
            name: hashlib.sha256((output_dir / name).read_bytes()).hexdigest()
            for name in stats["shards"]
        }
    return {**figures, "examples": stats["examples"], "hashes": hashes}


# Beam's own floor on this runner: three numbers through a Map and a GroupByKey.
TRIVIAL_PIPELINE = """
import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
options = PipelineOptions(["--runner=DirectRunner", "--direct_num_workers=2",
                           "--direct_running_mode=multi_processing"])
with beam.Pipeline(options=options) as pipeline:
    _ = pipeline | beam.Create([1, 2, 3]) | beam.Map(lambda x: (x % 2, x)) | beam.GroupByKey()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", default="1,8", help="The two corpus sizes, in MB.")
    parser.add_argument("--tiny", action="store_true", help="Corpora of 0.25 and 1 MB, dupe 1.")
    parser.add_argument("--repeats", type=int, default=3, help="Rounds; medians are printed.")
    parser.add_argument("--spm_model", default=str(DATA / "vocab/30k-clean.reconstructed.model"))
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--dupe_factor", type=int, default=4)
    parser.add_argument("--num_shards", type=int, default=4)
    args = parser.parse_args()
    if args.tiny:
        args.megabytes, args.dupe_factor = "0.25,1", 1
    small, large = sorted(float(m) for m in args.megabytes.split(","))
    books = sorted((DATA / "corpus" / "gutenberg").glob("[0-9]*.txt"))
    if not books or small >= large:
        raise SystemExit(f"need the books under {DATA} and two different sizes ({args.megabytes})")
    common = [
        "--spm_model", args.spm_model, "--max_seq_length", str(args.max_seq_length),
        "--dupe_factor", str(args.dupe_factor), "--num_shards", str(args.num_shards),
    ]  # fmt: skip
    print(" ".join([os.path.relpath(sys.executable, ROOT), *sys.argv]))
    print(
        f"max_seq_length {args.max_seq_length}, dupe_factor {args.dupe_factor}, "
        f"{args.num_shards} shards, {os.cpu_count()} cores"
    )
    runs, floors = {}, []
    with tempfile.TemporaryDirectory() as folder:
        patterns = {
            megabytes: make_corpus(pathlib.Path(folder) / f"{megabytes}MB", megabytes, books)
            for megabytes in (small, large)
        }
        log = pathlib.Path(folder) / "log"
        # Rounds: a burst of load hits every run of a round alike.
        for _ in range(args.repeats):
            for megabytes, pattern in patterns.items():
                for name, arguments in RUNS.items():
                    row = run([*common, "--input", pattern, *arguments], dask=name == DASK)
                    runs.setdefault((megabytes, name), []).append(row)
            floors.append(measure([sys.executable, "-c", TRIVIAL_PIPELINE], log))
    rows = {key: _median(values) for key, values in runs.items()}
    floor = _median(floors)
    _print_table(rows, small, large)
    print(
        f"Beam's floor (a 3-element pipeline on the same runner, 2 workers): "
        f"{floor['cpu']:.2f} CPU-s, peak RSS {floor['rss_mb']:,.0f} MB, "
        f"PSS {floor['pss_mb']:,.0f} MB"
    )
    print("each process's RSS/PSS MB at the tree's peak PSS:")
    print(f"  Beam at {large:g} MB: {_processes(rows[large, BEAM])}")
    print(f"  Beam's floor: {_processes(floor)}")


def _median(rows: list[dict]) -> dict:
    """Each figure's median over the rounds (the shards' hashes: every round's, to compare;
    the processes' memory: the round of the median PSS's)."""
    lists = ("hashes", "processes")
    median = {k: statistics.median(row[k] for row in rows) for k in rows[0] if k not in lists}
    if "hashes" in rows[0]:
        median["hashes"] = [row["hashes"] for row in rows]
    median["processes"] = sorted(rows, key=lambda row: row["pss_mb"])[len(rows) // 2]["processes"]
    return median


def _processes(row: dict) -> str:
    """`driver RSS/PSS, workers RSS/PSS, ...` in MB, at the tree's peak PSS."""
    if not row["processes"]:
        return "not sampled (the run was too short)"
    (driver, *workers) = [f"{rss:.0f}/{pss:.0f}" for rss, pss in row["processes"]]
    return f"driver {driver}, worker(s) {', '.join(workers) or 'none'}"


def _print_table(rows: dict, small: float, large: float) -> None:
    print(
        f"{'':30}{'MB':>5}{'examples':>9}{'CPU s':>8}{'peak RSS MB':>12}{'PSS MB':>7}"
        f"{'wall s':>8}{'examples/CPU-s':>15}"
    )
    for (megabytes, name), row in rows.items():
        print(
            f"{name:30}{megabytes:5g}{int(row['examples']):9,}{row['cpu']:8.2f}"
            f"{row['rss_mb']:12,.0f}{row['pss_mb']:7,.0f}{row['wall']:8.1f}"
            f"{row['examples'] / row['cpu']:15,.0f}"
        )
    print(f"\nfrom {small:g} MB to {large:g} MB:")
    print(f"{'':30}{'extra CPU s':>12}{'CPU s/MB':>9}{'fixed start-up CPU s':>21}")
    extra = {}
    for name in RUNS:
        extra[name] = rows[large, name]["cpu"] - rows[small, name]["cpu"]
        per_mb = extra[name] / (large - small)
        fixed = rows[small, name]["cpu"] - per_mb * small
        print(f"{name:30}{extra[name]:12.2f}{per_mb:9.3f}{fixed:21.2f}")
    for megabytes in (small, large):
        hashes = {
            json.dumps(hashes, sort_keys=True)
            for n in RUNS
            for hashes in rows[megabytes, n]["hashes"]
        }
        print(f"identical shards in every run at {megabytes:g} MB: {len(hashes) == 1}")
    ratio = extra[BEAM] / extra[LOCAL]
    beam = rows[large, BEAM]
    print(
        f"Beam's extra CPU-seconds / the local writer's (2 workers): {ratio:.2f} "
        f"(goal <= {GOAL:.2f}); Beam's peak RSS {beam['rss_mb']:,.0f} MB, PSS "
        f"{beam['pss_mb']:,.0f} MB (goal <= 400)"
    )
    dask = rows[large, DASK]
    print(
        f"DaskRunner's extra CPU-seconds / the DirectRunner's: {extra[DASK] / extra[BEAM]:.2f}; "
        f"its peak RSS {dask['rss_mb']:,.0f} MB, PSS {dask['pss_mb']:,.0f} MB (scheduler, "
        "2 workers and the driver)"
    )


if __name__ == "__main__":
    main()
