"""Where the Beam pipeline's CPU goes, stage by stage: a profile of one in-process run.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/beam_pretraining_stages.py [--megabytes 1,8] \\
        [--max_seq_length 512] [--dupe_factor 4] [--num_shards 4]

Runs the Beam pipeline on the DirectRunner in this process (`--direct_running_mode in_memory`,
one worker, so that one profile sees the driver and the worker) over a corpus cut from the books
as `beam_pretraining_data.py` cuts it (two sizes: the difference is the cost of the work, the
rest is fixed), under cProfile timed by CPU (`time.process_time`), and splits the CPU-seconds
into: reading and splitting the text (both reads), tokenizing
(SentencePiece), making the examples (pairs, packing, masking), serializing them (tf.train
Examples, TFRecord framing), packing the pieces of text spilled between reading and making
(and back), writing the shards and the spilled text, and the rest: Beam itself (building the
pipeline, its runner, coders, the in-memory shuffle of the pieces' places). The
profiler's own cost inflates Python-heavy steps, so read the shares, not the seconds; the
workers' counters that every Beam run logs (read, make, write, measured without a profiler)
are the cross-check.
"""

import argparse
import cProfile
import pathlib
import pstats
import sys
import tempfile
import time

from beam_pretraining_data import DATA, ROOT, make_corpus

# Stage -> the functions (file suffix, name) whose cumulative CPU it is.
STAGES = {
    "read and split": [("pipelines/documents.py", "iter_file_documents")],
    "tokenize": [("pipelines/tokenization.py", "encode")],
    "serialize": [
        ("pipelines/record_writer.py", "serialize_examples"),
        ("pipelines/record_writer.py", "frame_records"),
    ],
    "make examples": [("pipelines/pretraining_examples.py", "make_records")],
    "pack the spilled text": [
        ("pipelines/beam_pieces.py", "pack_documents"),
        ("pipelines/beam_pieces.py", "unpack_documents"),
    ],
    "write (shards, spilled text)": [("~", "<method 'write' of '_io.BufferedWriter' objects>")],
}


def cumulative(stats: pstats.Stats, functions: list[tuple[str, str]]) -> float:
    """Cumulative seconds of the functions named (summed; none of them calls another)."""
    total = 0.0
    for (filename, _, name), (_, _, _, cumtime, _) in stats.stats.items():
        if any(filename.endswith(f) and name == n for f, n in functions):
            total += cumtime
    return total


def profile_run(pattern: str, output_dir: str, args: argparse.Namespace) -> tuple[dict, int]:
    """CPU-seconds per stage of one in-process run under the profiler, and its examples."""
    from pipelines.beam_writer import write_pretraining_data_beam

    profile = cProfile.Profile(time.process_time)
    started = time.process_time()
    profile.enable()
    summary = write_pretraining_data_beam(
        input=pattern,
        spm_model=args.spm_model,
        output_dir=output_dir,
        max_seq_length=args.max_seq_length,
        dupe_factor=args.dupe_factor,
        num_shards=args.num_shards,
        progress=False,
        beam_args=["--direct_num_workers=1", "--direct_running_mode=in_memory"],
    )
    profile.disable()
    total = time.process_time() - started
    stats = pstats.Stats(profile)
    seconds = {stage: cumulative(stats, functions) for stage, functions in STAGES.items()}
    seconds["make examples"] -= seconds["tokenize"] + seconds["serialize"]
    seconds["Beam (pipeline, runner, coders, shuffle)"] = total - sum(seconds.values())
    seconds["total"] = total
    return seconds, summary["examples"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", default="1,8", help="The two corpus sizes, in MB.")
    parser.add_argument("--spm_model", default=str(DATA / "vocab/30k-clean.reconstructed.model"))
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--dupe_factor", type=int, default=4)
    parser.add_argument("--num_shards", type=int, default=4)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    small, large = sorted(float(m) for m in args.megabytes.split(","))
    print(" ".join([pathlib.Path(sys.executable).name, *sys.argv]))
    books = sorted((DATA / "corpus" / "gutenberg").glob("[0-9]*.txt"))
    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        for megabytes in (small, large):
            pattern = make_corpus(pathlib.Path(folder) / f"{megabytes}MB", megabytes, books)
            output_dir = str(pathlib.Path(folder) / f"records-{megabytes}")
            runs[megabytes] = profile_run(pattern, output_dir, args)
    print(
        f"max_seq_length {args.max_seq_length}, dupe_factor {args.dupe_factor}, "
        f"{args.num_shards} shards; examples: {runs[small][1]:,} at {small:g} MB, "
        f"{runs[large][1]:,} at {large:g} MB; CPU-s under the profiler"
    )
    print(f"{'':42}{small:>7g} MB{large:>7g} MB{'per extra MB':>14}{'share':>7}")
    extra_total = runs[large][0]["total"] - runs[small][0]["total"]
    for stage in runs[small][0]:
        at_small, at_large = runs[small][0][stage], runs[large][0][stage]
        extra = at_large - at_small
        print(
            f"{stage:42}{at_small:10.2f}{at_large:10.2f}{extra / (large - small):14.3f}"
            f"{100 * extra / extra_total:6.0f}%"
        )


if __name__ == "__main__":
    main()
