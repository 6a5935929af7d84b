"""Reader speed per core, with and without dynamic masking, at seq 128 and 512.

    .venv/bin/python benchmarks/read_pretraining_records.py [--batch_size 256] [--rounds 5]
    .venv/bin/python benchmarks/read_pretraining_records.py --records 'out/records/*.tfrecord' \
        --seq_lengths 128

Times `pipelines.read_pretraining_records` (shuffle, repeat, batch, parse, int32, prefetch; and
`dynamic_masking=True`) on ONE core: tf.data gets a private pool of one thread and TensorFlow one
intra-op thread. By default it reads synthetic records (written once to a temp folder): packed
[CLS] A [SEP] B [SEP] examples, 75% at full length, words of 1-3 pieces (1.3 pieces per word,
about what SentencePiece gives on English prose), static masks from the same masking code;
`--records` reads real ones instead (e.g. from `python -m pipelines.pretraining_data`).

The machine is shared, so the main figure is examples per CPU-second of the reading process (all
its threads: the per-core cost, which other load barely moves); wall-clock examples/s is printed
beside it. Each measurement is a fresh process (a pipeline left idle still fills its prefetch
buffers, which would be charged to whichever one is being timed); peers alternate round by round
in a rotated order and the median round counts, so a burst of load hits every peer alike.
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
from _timing import measure_in_fresh_process, print_table

ROOT = pathlib.Path(__file__).resolve().parents[1]
VOCABULARY_SIZE = 30000
GOAL = 20_000  # examples/s per core with dynamic masking (issue 3)


def synthetic_examples(rng: np.random.Generator, num_examples: int, seq_length: int) -> dict:
    """Packed examples (unmasked ids, mask, segments, token_boundary, labels) as NumPy arrays."""
    position = np.arange(seq_length)[None, :]
    full = rng.random(num_examples) < 0.75
    length = np.where(full, seq_length, rng.integers(16, seq_length, num_examples))[:, None]
    split = rng.integers(2, length - 2)  # the first [SEP]
    pieces = rng.choice(3, p=[0.78, 0.16, 0.06], size=(num_examples, seq_length)) + 1
    stream_boundary = np.zeros((num_examples, 3 * seq_length), np.int64)
    stream_boundary[np.arange(num_examples)[:, None], np.cumsum(pieces, axis=1) - pieces] = 1
    stream = np.where(position < split, position - 1, position - 2).clip(0)
    boundary = np.take_along_axis(stream_boundary, stream, axis=1)
    sep = (position == split) | (position == length - 1)
    boundary[(position == 0) | sep | (position == split + 1)] = 1
    ids = rng.integers(5, VOCABULARY_SIZE, (num_examples, seq_length))
    ids = np.where(position == 0, 2, np.where(sep, 3, ids))
    real = position < length
    return {
        "input_ids": np.where(real, ids, 0),
        "input_mask": real.astype(np.int64),
        "segment_ids": ((position > split) & real).astype(np.int64),
        "token_boundary": np.where(real, boundary, 0),
        "next_sentence_labels": rng.integers(0, 2, (num_examples, 1)),
    }


def write_synthetic_records(directory: pathlib.Path, seq_length: int, args) -> str:
    import tensorflow as tf

    from pipelines.dynamic_masking import mask_whole_word_ngrams
    from pipelines.masking_settings import MaskingSettings

    rng = np.random.default_rng(args.seed)
    for shard in range(args.num_files):
        examples = synthetic_examples(rng, args.examples_per_file, seq_length)
        static = mask_whole_word_ngrams(
            examples["input_ids"],
            examples["input_mask"],
            examples["token_boundary"],
            tf.constant([args.seed, shard]),
            masking=MaskingSettings(vocabulary_size=VOCABULARY_SIZE),
            max_predictions_per_seq=args.max_predictions_per_seq,
        )
        examples.update({name: value.numpy() for name, value in static.items()})
        path = directory / f"synthetic-{seq_length}-{shard:03d}.tfrecord"
        with tf.io.TFRecordWriter(str(path)) as writer:
            for row in range(args.examples_per_file):
                feature = {
                    name: tf.train.Feature(float_list=tf.train.FloatList(value=values[row]))
                    if values.dtype == np.float32
                    else tf.train.Feature(int64_list=tf.train.Int64List(value=values[row]))
                    for name, values in examples.items()
                }
                writer.write(
                    tf.train.Example(
                        features=tf.train.Features(feature=feature)
                    ).SerializeToString()
                )
    return str(directory / f"synthetic-{seq_length}-*.tfrecord")


def measure(pattern: str, seq_length: int, dynamic: bool, args) -> dict:
    """In this (fresh) process: warm up, then time `--batches` batches on one core."""
    import tensorflow as tf

    from pipelines.masking_settings import MaskingSettings
    from pipelines.record_reader import read_pretraining_records

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    dataset = read_pretraining_records(
        pattern,
        args.batch_size,
        max_seq_length=seq_length,
        max_predictions_per_seq=args.max_predictions_per_seq,
        dynamic_masking=MaskingSettings(vocabulary_size=VOCABULARY_SIZE) if dynamic else False,
        seed=args.seed,
    )
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    options.threading.max_intra_op_parallelism = 1
    iterator = iter(dataset.with_options(options))
    for _ in range(args.warmup):  # tracing, XLA compilation, file cache, shuffle buffer
        next(iterator)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(args.batches):
        next(iterator)
    examples = args.batches * args.batch_size
    return {
        "cpu": examples / (time.process_time() - cpu),
        "wall": examples / (time.perf_counter() - wall),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", help="glob of real records (one --seq_lengths value)")
    parser.add_argument("--seq_lengths", default="128,512")
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--num_files", type=int, default=4)
    parser.add_argument("--examples_per_file", type=int, default=2048)
    parser.add_argument("--batches", type=int, default=40, help="batches timed per measurement")
    parser.add_argument("--warmup", type=int, default=8, help="untimed batches first")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # "SEQ,DYNAMIC,PATTERN": a child
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.measure:
        seq_length, dynamic, pattern = args.measure.split(",", 2)
        print(json.dumps(measure(pattern, int(seq_length), dynamic == "1", args)))
        return 0
    seq_lengths = [int(s) for s in args.seq_lengths.split(",")]
    if args.records and len(seq_lengths) != 1:
        parser.error("--records needs exactly one --seq_lengths value (the records' length)")

    with tempfile.TemporaryDirectory() as directory:
        patterns = {
            seq_length: args.records
            or write_synthetic_records(pathlib.Path(directory), seq_length, args)
            for seq_length in seq_lengths
        }
        peers = [(seq_length, dynamic) for seq_length in seq_lengths for dynamic in (False, True)]
        rates = {peer: [] for peer in peers}
        for round_index in range(args.rounds):
            order = peers[round_index % len(peers) :] + peers[: round_index % len(peers)]
            for seq_length, dynamic in order:
                rates[(seq_length, dynamic)].append(
                    measure_in_fresh_process(
                        __file__,
                        argv or sys.argv[1:],
                        f"{seq_length},{int(dynamic)},{patterns[seq_length]}",
                    )
                )
            print(f"  round {round_index + 1}/{args.rounds} done", flush=True)

    source = f"records {args.records}" if args.records else "synthetic records"
    print(
        f"\nread_pretraining_records on one core: batch {args.batch_size}, "
        f"P={args.max_predictions_per_seq}, {source}, median of {args.rounds} rounds x "
        f"{args.batches} batches"
    )
    header = ["seq", "masking", "examples/CPU-s", "examples/s wall", "vs static", "vs goal 20k"]
    rows = []
    for seq_length in seq_lengths:
        static = statistics.median(r["cpu"] for r in rates[(seq_length, False)])
        for dynamic in (False, True):
            cpu = statistics.median(r["cpu"] for r in rates[(seq_length, dynamic)])
            wall = statistics.median(r["wall"] for r in rates[(seq_length, dynamic)])
            rows.append(
                [
                    str(seq_length),
                    "dynamic" if dynamic else "static (as written)",
                    f"{cpu:,.0f}",
                    f"{wall:,.0f}",
                    f"{cpu / static:.2f}x",
                    f"{cpu / GOAL:.2f}x" if dynamic else "",
                ]
            )
    print_table(header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
