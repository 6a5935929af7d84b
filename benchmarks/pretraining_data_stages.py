"""Where one pretraining-data worker's CPU time goes, stage by stage.

    .venv/bin/python benchmarks/pretraining_data_stages.py [--repeats 4] [--input 'corpus/*.txt']

Runs `write_pretraining_data` (1 worker, dupe_factor 1, seq 128 by default) in a fresh process
per repeat, with each stage's functions wrapped to add up their `time.process_time`, and prints
the best of the repeats per stage (CPU-s) beside the run's total. `SentencePiece` is its own
`encode` call on whole sentences and text normalization `preprocess_texts`; "the ids' gather"
is the rest of `SentencePieceEncoder.encode` (flattening the id lists into arrays). A stage's
figure counts its first calls in a fresh process, as a real run.
"""

import argparse
import collections
import gc
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

STAGES = [
    ("SentencePiece's encoding itself", "spm"),
    ("reading and sentence splitting", "iter_documents"),
    ("text normalization", "preprocess_texts"),
    ("n-gram masking", "mask_ngrams"),
    ("the ids' gather", "lists"),
    ("pairs and packing", "pairs_and_packing"),
    ("serialization and TFRecord framing", "serialization"),
    ("model load", "model_load"),
]


def one_run(args) -> dict:
    """Runs the writer here with the stages wrapped; returns CPU-s per stage and in all."""
    sys.path.insert(0, str(ROOT))
    import sentencepiece as spm

    import pipelines.pretraining_examples as examples
    from pipelines import pretraining_data, tokenization, writer_task
    from pipelines.shard_worker import keep_freed_memory

    spent = collections.Counter()

    def timed(function, key):
        def wrapper(*a, **k):
            started = time.process_time()
            try:
                return function(*a, **k)
            finally:
                spent[key] += time.process_time() - started

        return wrapper

    def timed_iterator(function, key):
        def wrapper(*a, **k):
            iterator = function(*a, **k)
            while True:
                started = time.process_time()
                try:
                    item = next(iterator)
                except StopIteration:
                    spent[key] += time.process_time() - started
                    return
                spent[key] += time.process_time() - started
                yield item

        return wrapper

    for name, key in [
        ("create_pairs", "pairs_and_packing"),
        ("pack_pairs", "pairs_and_packing"),
        ("mask_ngrams", "mask_ngrams"),
        ("serialize_examples", "serialization"),
        ("frame_records", "serialization"),
    ]:
        setattr(examples, name, timed(getattr(examples, name), key))
    tokenization.preprocess_texts = timed(tokenization.preprocess_texts, "preprocess_texts")
    encoder = tokenization.SentencePieceEncoder
    encoder.encode = timed(encoder.encode, "encode")
    encoder.__init__ = timed(encoder.__init__, "model_load")
    spm.SentencePieceProcessor.encode = timed(spm.SentencePieceProcessor.encode, "spm")
    writer_task.iter_documents = timed_iterator(writer_task.iter_documents, "iter_documents")
    keep_freed_memory()  # as the command line does
    gc_started = []

    def collecting(phase, _):
        # Cyclic garbage collection, wherever it falls (inside the stages above): a line apart.
        if phase == "start":
            gc_started.append(time.process_time())
        else:
            spent["gc"] += time.process_time() - gc_started.pop()

    gc.callbacks.append(collecting)
    with tempfile.TemporaryDirectory() as output_dir:
        summary = pretraining_data.write_pretraining_data(
            input=args.input,
            spm_model=args.spm_model,
            output_dir=output_dir,
            max_seq_length=args.max_seq_length,
            dupe_factor=args.dupe_factor,
            num_shards=2,
            num_workers=1,
            progress=False,
        )
    spent["lists"] = spent["encode"] - spent["spm"] - spent["preprocess_texts"]
    return {**spent, "total": summary["cpu_seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default=str(DATA / "corpus/gutenberg/[0-9]*.txt"))
    parser.add_argument("--spm_model", default=str(DATA / "vocab/30k-clean.reconstructed.model"))
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--dupe_factor", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=4, help="Fresh runs; best of them each.")
    parser.add_argument("--one_run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_run:
        print(json.dumps(one_run(args)))
        return
    runs = []
    for _ in range(args.repeats):
        command = [sys.executable, __file__, "--one_run", "--input", args.input]
        command += ["--spm_model", args.spm_model, "--max_seq_length", str(args.max_seq_length)]
        command += ["--dupe_factor", str(args.dupe_factor)]
        result = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
        runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    best = {key: min(run.get(key, 0.0) for run in runs) for key in runs[0]}
    print(
        f"1 worker, dupe {args.dupe_factor}, seq {args.max_seq_length}, best of {args.repeats} "
        "fresh runs, CPU-s:"
    )
    named = 0.0
    for label, key in STAGES:
        print(f"  {label:40} {best[key]:6.3f}")
        named += best[key]
    print(f"  {'the rest':40} {best['total'] - named:6.3f}")
    print(f"  {'total (stats.json cpu_seconds)':40} {best['total']:6.3f}")
    print(f"  {'(cyclic GC, inside the stages above)':40} {best.get('gc', 0.0):6.3f}")


if __name__ == "__main__":
    main()
