"""Writes ALBERT pretraining records (SOP pairs, n-gram masks) from raw text into TFRecord shards.

    python -m pipelines.pretraining_data --input 'corpus/*.txt' --spm_model out/spm.model \\
        --output_dir out/records --max_seq_length 128 --dupe_factor 10 --num_shards 8

How it runs (the official script keeps every instance in RAM; this streams):
- The main process reads documents (`pipelines.documents`) and cuts the stream into groups of
  whole documents of about `group_chars` characters. Group g belongs to shard g % num_shards.
- Shards are split between `num_tasks` machines (shard s to task s % num_tasks) and, on each,
  between `num_workers` processes. A worker encodes each group it is sent once, makes every dupe
  round's pairs and masks from it (`pipelines.pretraining_examples`) and appends them to the
  group's shard. Small groups (low dupe factors) are held and made together, ~2 MB of text times
  rounds at a time, for NumPy's sake; the bytes are the same. Memory stays bounded: a few groups
  in flight per worker, plus those held. (Each task reads all the input, which costs a fraction
  of encoding it; only its own groups are encoded.)
- Records are shuffled within a batch of a group's rounds (the official script shuffles all it
  holds in RAM); the reader's shard interleave and shuffle buffer mix the rest.
- Every draw is seeded by (seed, group, round), and a shard is its groups in order, so the same
  inputs and seed give byte-identical shards whatever the number of workers or tasks.
- A shard is written under a temporary name in the hidden `.albert_progress/` subfolder,
  checkpointed now and then, and renamed when finished: the output folder holds only finished
  shards and `stats.json`, so `out/records/*` globs shards alone. A rerun keeps finished shards,
  resumes the others from their last checkpoint (same bytes as an uninterrupted run), and
  refuses shards made with other settings or inputs. A failed run removes the partial shards
  it could not resume from.
- `stats.json` beside the shards: input read and skipped per file, examples, labels, masks,
  n-grams, lengths (the last under the reference statistics' names).
- `--runner DirectRunner|DataflowRunner|...`: the same shards, byte for byte, from an Apache
  Beam pipeline built from these functions (`pipelines.beam_writer`, docs/beam.md); the groups'
  numbering lives in `pipelines.document_groups` for both.
- `--sentence_objective none --packing full_sentences|doc_sentences`: RoBERTa's inputs
  (`pipelines.sentence_packing`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import resource
import sys
import time
from collections.abc import Iterable

from pipelines import atomic_write
from pipelines.document_groups import iter_groups
from pipelines.documents import INPUT_FORMATS, iter_documents, list_input_files
from pipelines.output_folder import os_error_line
from pipelines.pretraining_examples import ExampleConfig
from pipelines.pretraining_stats import PretrainingStats
from pipelines.read_stats import ReadStats
from pipelines.record_writer import bookkeeping_dir, partial_path, read_progress
from pipelines.sentence_packing import PACKINGS
from pipelines.shard_worker import DISK_ERRNOS, ShardPlan, keep_freed_memory, start_workers
from pipelines.sop_pairs import SENTENCE_OBJECTIVES
from pipelines.tokenization import SentencePieceEncoder
from pipelines.writer_folder import shard_name, writer_folder
from pipelines.writer_settings import (
    check_input_format,
    check_settings,
    summarize,
    writer_settings,
)

# Bumped when the records' bytes change for the same settings, so old checkpoints are not resumed.
_FORMAT_VERSION = 5
_INPUT_STATS = "input_stats.json"  # in the bookkeeping subfolder
_PROGRESS_SECONDS = 5.0


def write_pretraining_data(
    input_patterns: str | Iterable[str],
    spm_model: str,
    output_dir: str,
    *,
    max_seq_length: int = 512,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    dupe_factor: int = 40,
    short_seq_prob: float = 0.1,
    ngram: int = 3,
    sentence_objective: str = "sop",
    packing: str | None = None,
    num_shards: int = 1,
    seed: int = 12345,
    num_workers: int = 1,
    task_index: int = 0,
    num_tasks: int = 1,
    input_format: str = "text",
    paragraphs_per_document: int = 20,
    lower_case: bool | None = None,
    group_chars: int = 1 << 17,
    checkpoint_seconds: float = 30.0,
    progress: bool = True,
    overwrite: bool = False,
) -> dict:
    """Writes this task's shards of pretraining records and returns its statistics.

    Args:
        input_patterns: str or list of str. Glob patterns of text files (plain or .gz).
        spm_model: str. SentencePiece model (`pipelines.train_vocab`, or ALBERT's release one).
        output_dir: str. Gets `pretraining-SSSSS-of-NNNNN.tfrecord` files and `stats.json`.
        max_seq_length, max_predictions_per_seq, masked_lm_prob, dupe_factor, short_seq_prob,
            ngram: as the official `create_pretraining_data.py` flags.
        sentence_objective: str. `"sop"` (ALBERT), `"nsp"` (BERT) or `"none"` (one segment).
        packing: str or None. With `sentence_objective="none"`, RoBERTa's inputs: contiguous
            whole sentences packed up to `max_seq_length`, across documents with an extra
            `[SEP]` between them (`"full_sentences"`) or within one (`"doc_sentences"`);
            `short_seq_prob` does not apply. None: one chunk per target length, as BERT.
        num_shards: int. Output files (all tasks together).
        seed: int (>= 0). Every random draw derives from it.
        num_workers: int. Processes on this machine (1: everything in this process).
        task_index, num_tasks: int. This machine's share: shards s with s % num_tasks == task_index.
        input_format: str. `"text"` (prose) or `"sentences"` (one per line, blank line between
            documents), see `pipelines.documents`.
        paragraphs_per_document: int. Document size in the `text` format.
        lower_case: bool or None. None: lower-case when the vocabulary has no capitals.
        group_chars: int. Documents are grouped up to about this many characters: the unit of
            work, of seeding and of shard assignment.
        checkpoint_seconds: float. Least time between two checkpoints of a shard.
        progress: bool. Print progress lines to stderr.
        overwrite: bool. When `output_dir` holds a writer run with other arguments, remove
            what it wrote (only that) instead of refusing (`pipelines.writer_folder`).

    Returns:
        The statistics also written to `stats.json` (or `stats-task-*.json` with several tasks).

    Raises:
        ValueError / FileNotFoundError: a bad setting, a missing or bad model, no input, an
            output folder that is not this run's to write (`OutputFolderError`, one line).

    Example:
    >>> stats = write_pretraining_data("corpus/*.txt", "spm.model", "out/records",
    ...                                max_seq_length=128, dupe_factor=10, num_shards=8,
    ...                                progress=False)
    >>> stats["examples"], len(os.listdir("out/records"))  # 8 shards, stats, progress, manifest
    (193, 11)
    """
    started, cpu_started = time.monotonic(), _cpu_seconds()
    config = ExampleConfig(
        max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions_per_seq,
        masked_lm_prob=masked_lm_prob,
        dupe_factor=dupe_factor,
        short_seq_prob=short_seq_prob,
        ngram=ngram,
        sentence_objective=sentence_objective,
        packing=packing,
        seed=seed,
    )
    check_settings(config, num_shards, num_workers, task_index, num_tasks, group_chars)
    check_input_format(input_format, paragraphs_per_document)
    encoder = SentencePieceEncoder(spm_model, lower_case)
    files = list_input_files(input_patterns)
    settings = writer_settings(
        config, encoder, num_shards, input_format, paragraphs_per_document, group_chars
    )
    # Checked, locked and claimed before anything is written; a run that fails having written
    # nothing it could resume from leaves nothing behind, manifest included.
    folder = writer_folder(
        output_dir,
        settings,
        files,
        spm_model,
        num_tasks=num_tasks,
        task_index=task_index,
        overwrite=overwrite,
        fingerprint=_fingerprint(settings, files, spm_model),
    )
    try:
        summary = _write_task(
            output_dir,
            files,
            settings,
            spm_model,
            config=config,
            encoder=encoder,
            task=(task_index, num_tasks),
            num_workers=num_workers,
            checkpoint_seconds=checkpoint_seconds,
            progress=progress,
        )
        summary["seconds"] = round(time.monotonic() - started, 3)
        # CPU time of this process and its workers: on a shared machine, steadier than the clock.
        summary["cpu_seconds"] = round(_cpu_seconds() - cpu_started, 3)
        _write_stats(output_dir, summary, settings, files, spm_model, (task_index, num_tasks))
    except BaseException:
        folder.close()
        folder.discard_if_unused()
        raise
    folder.close()
    _log(
        progress,
        f"wrote {summary['examples']:,} examples to {len(summary['shards'])} shards in "
        f"{output_dir} ({summary['seconds']:.1f} s)",
    )
    return summary


def _write_stats(output_dir, summary, settings, files, spm_model, task) -> None:
    """`stats.json`, or with several tasks this task's file (and `stats.json` once all are)."""
    task_index, num_tasks = task
    if num_tasks == 1:
        _write_json(os.path.join(output_dir, "stats.json"), summary)
        return
    name = f"stats-task-{task_index:05d}-of-{num_tasks:05d}.json"
    _write_json(os.path.join(output_dir, name), summary)
    read_stats = ReadStats.from_dict(summary["input"])
    _merge_tasks(output_dir, settings, files, read_stats, _fingerprint(settings, files, spm_model))


def _write_task(
    output_dir, files, settings, spm_model, *, config, encoder, task, num_workers,
    checkpoint_seconds, progress,
) -> dict:  # fmt: skip
    """Writes the shards of `task` (index, count) not yet finished; returns the summary."""
    task_index, num_tasks = task
    num_shards = settings["num_shards"]
    fingerprint = _fingerprint(settings, files, spm_model)
    shards = [s for s in range(num_shards) if s % num_tasks == task_index]
    paths = {s: os.path.join(output_dir, shard_name(s, num_shards)) for s in shards}
    plans = {s: plan for s in shards if (plan := _plan_shard(paths[s], fingerprint)) is not None}
    _log(progress, f"{len(shards) - len(plans)} of {len(shards)} shards already finished")

    input_stats_path = os.path.join(bookkeeping_dir(output_dir), _INPUT_STATS)
    saved = _read_json(input_stats_path)
    if plans or saved is None or saved.get("fingerprint") != fingerprint:
        shared = {
            "config": config,
            "encoder": encoder,
            "num_shards": num_shards,
            "fingerprint": fingerprint,
            "checkpoint_seconds": checkpoint_seconds,
        }
        read_stats = _run(files, settings, plans, shared, num_workers, progress)
        _write_json(input_stats_path, {"fingerprint": fingerprint, "input": read_stats.to_dict()})
    else:
        read_stats = ReadStats.from_dict(saved["input"])

    made = PretrainingStats()
    for s in shards:
        made.merge(PretrainingStats.from_dict(read_progress(paths[s])["stats"]))
    return summarize(settings, files, read_stats, made, [paths[s] for s in shards])


def _fingerprint(settings: dict, files: list[str], spm_model: str) -> str:
    """A hash of everything that decides the shards' bytes."""
    digest = hashlib.sha256()
    with open(spm_model, "rb") as f:
        digest.update(f.read())
    inputs = [(os.path.abspath(p), *_size_and_mtime(p)) for p in files]
    digest.update(json.dumps([_FORMAT_VERSION, settings, inputs], sort_keys=True).encode())
    return digest.hexdigest()


def _size_and_mtime(path: str) -> tuple[int, float]:
    """(0, 0.0) for a file that cannot be stat'ed (a symlink loop: skipped when read)."""
    try:
        info = os.stat(path)
    except OSError:
        return 0, 0.0
    return info.st_size, info.st_mtime


def _file_size(path: str) -> int:
    return _size_and_mtime(path)[0]


def _plan_shard(path: str, fingerprint: str) -> ShardPlan | None:
    """None if the shard is finished; else where to start it (afresh or from a checkpoint)."""
    saved = read_progress(path)
    same = saved is not None and saved.get("fingerprint") == fingerprint
    if os.path.exists(path):
        if same and saved.get("complete"):
            return None
        raise ValueError(
            f"{path} exists but was not written with these settings and inputs; "
            "use another --output_dir or delete the old shards"
        )
    partial = partial_path(path)
    if same and os.path.exists(partial) and os.path.getsize(partial) >= saved["bytes"]:
        return ShardPlan(path, saved["next_group"], saved["bytes"], saved["stats"])
    return ShardPlan(path)


def _run(files, settings, plans, shared, num_workers, progress) -> ReadStats:
    """Reads the input once and has the shards in `plans` written. Returns what was read.

    `shared` holds the `ShardWorker` arguments common to all workers.
    """
    num_shards = settings["num_shards"]
    owned = sorted(plans)
    num_workers = max(1, min(num_workers, len(owned)))
    owner = {s: i % num_workers for i, s in enumerate(owned)}
    read_stats = ReadStats()
    total_bytes = sum(_file_size(p) for p in files) or 1
    last_report = started = time.monotonic()
    pool = None
    try:
        pool = start_workers(
            [
                {**shared, "plans": {s: plans[s] for s in owned if owner[s] == w}}
                for w in range(num_workers)
            ]
        )
        documents = iter_documents(
            files,
            settings["input_format"],
            paragraphs_per_document=settings["paragraphs_per_document"],
            stats=read_stats,
        )
        for group_index, group in iter_groups(documents, settings["group_chars"]):
            shard = group_index % num_shards
            if shard in owner and group_index >= plans[shard].next_group:
                pool.send(owner[shard], (group_index, group))
            if progress and time.monotonic() - last_report >= _PROGRESS_SECONDS:
                last_report = time.monotonic()
                rate = pool.examples_written.value / (last_report - started)
                _log(
                    True,
                    f"{100 * read_stats.bytes_read / total_bytes:.0f}% of the input read, "
                    f"{read_stats.documents:,} documents, {pool.examples_written.value:,} examples "
                    f"({rate:,.0f}/s)",
                )
        if read_stats.documents == 0:
            raise ValueError(f"no document could be read from {files} ({read_stats.skipped})")
        pool.finish()
    except BaseException:
        if pool is not None:
            pool.abort()
        _remove_unresumable(plans, shared["fingerprint"])
        raise
    return read_stats


def _remove_unresumable(plans: dict[int, ShardPlan], fingerprint: str) -> None:
    """After a failure: removes the partial shards no checkpoint of this run can resume from
    (and the bookkeeping folder if that leaves it empty), so a failed run leaves no empty
    hidden files behind; resumable ones stay."""
    for plan in plans.values():
        saved = read_progress(plan.path) or {}
        resumable = saved.get("fingerprint") == fingerprint and saved.get("bytes", 0) > 0
        if not resumable:
            try:
                os.remove(partial_path(plan.path))
            except OSError:
                pass  # never created, or not ours to remove (e.g. a folder in its place)
    for folder in {os.path.dirname(partial_path(plan.path)) for plan in plans.values()}:
        try:
            os.rmdir(folder)
        except OSError:
            pass  # not empty (checkpoints, or another run's files)


def _merge_tasks(output_dir, settings, files, read_stats, fingerprint):
    """With several tasks: once every shard is finished, whoever sees it writes `stats.json`."""
    num_shards = settings["num_shards"]
    made = PretrainingStats()
    paths = [os.path.join(output_dir, shard_name(s, num_shards)) for s in range(num_shards)]
    for path in paths:
        saved = read_progress(path)
        if not (os.path.exists(path) and saved and saved.get("fingerprint") == fingerprint):
            return
        made.merge(PretrainingStats.from_dict(saved["stats"]))
    _write_json(
        os.path.join(output_dir, "stats.json"), summarize(settings, files, read_stats, made, paths)
    )


def _cpu_seconds() -> float:
    """CPU seconds used by this process and its finished children."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _read_json(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_json(path: str, value: dict) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    atomic_write.write_json(path, value, indent=1)


def _log(enabled: bool, message: str) -> None:
    if enabled:
        print(f"pretraining_data: {message}", file=sys.stderr, flush=True)


# === Command line ===


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.pretraining_data", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--input", required=True, help="Glob pattern(s) of text files, comma-separated."
    )
    parser.add_argument("--spm_model", required=True, help="SentencePiece .model file.")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--masked_lm_prob", type=float, default=0.15)
    parser.add_argument("--dupe_factor", type=int, default=40)
    parser.add_argument("--short_seq_prob", type=float, default=0.1)
    parser.add_argument("--ngram", type=int, default=3)
    parser.add_argument("--sentence_objective", choices=SENTENCE_OBJECTIVES, default="sop")
    parser.add_argument(
        "--packing",
        choices=PACKINGS,
        default=None,
        help="With --sentence_objective none: RoBERTa's packed whole sentences, across documents "
        "(full_sentences, an extra [SEP] between them) or within one (doc_sentences).",
    )
    parser.add_argument(
        "--num_shards", type=int, default=1, help="Output files, all tasks together."
    )
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument(
        "--num_workers",
        type=int,
        default=None,
        help="Processes on this machine (default: one per core; at most one per shard). "
        "With --runner, passed to Beam (Dataflow's initial workers).",
    )
    parser.add_argument(
        "--task_index",
        type=int,
        default=0,
        help="This machine's share: shards s with s %% num_tasks == task_index.",
    )
    parser.add_argument("--num_tasks", type=int, default=1, help="Machines sharing the work.")
    parser.add_argument("--input_format", choices=INPUT_FORMATS, default="text")
    parser.add_argument("--paragraphs_per_document", type=int, default=20)
    parser.add_argument(
        "--lower_case",
        "--do_lower_case",  # the official script's name, kept as an alias
        dest="do_lower_case",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Default: lower-case when the vocabulary has no capitals.",
    )
    parser.add_argument(
        "--group_chars",
        type=int,
        default=1 << 17,
        help="Characters per group of documents: the unit of work, seeding and shard assignment.",
    )
    parser.add_argument("--checkpoint_seconds", type=float, default=30.0)
    parser.add_argument("--quiet", action="store_true", help="No progress lines.")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="When --output_dir holds an earlier run of this command with other settings, "
        "remove what that run wrote (nothing else) instead of refusing.",
    )
    parser.add_argument(
        "--runner",
        default=None,
        help="Run as an Apache Beam pipeline on this runner (DirectRunner, PrismRunner, "
        "DataflowRunner, FlinkRunner, SparkRunner; needs `pip install albert-keras[beam]`): the "
        "same shards, byte for byte. Any other Beam option (--project, --region, "
        "--temp_location, --direct_num_workers, ...) is passed through to Beam.",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, beam_args = parser.parse_known_args(argv)
    if args.runner is None and beam_args:
        parser.error(f"unrecognized arguments: {' '.join(beam_args)} (Beam options need --runner)")
    if args.runner is not None:
        return _main_beam(args, beam_args)
    keep_freed_memory()  # this process is the one worker when there is one
    return _reported(
        lambda: write_pretraining_data(
            args.input,
            args.spm_model,
            args.output_dir,
            **_shard_settings(args),
            num_workers=args.num_workers or os.cpu_count() or 1,
            task_index=args.task_index,
            num_tasks=args.num_tasks,
            checkpoint_seconds=args.checkpoint_seconds,
        ),
        args.output_dir,
    )


def _shard_settings(args: argparse.Namespace) -> dict:
    """The flags both drivers take: what the shards hold (the same bytes for the same values)."""
    return {
        "max_seq_length": args.max_seq_length,
        "max_predictions_per_seq": args.max_predictions_per_seq,
        "masked_lm_prob": args.masked_lm_prob,
        "dupe_factor": args.dupe_factor,
        "short_seq_prob": args.short_seq_prob,
        "ngram": args.ngram,
        "sentence_objective": args.sentence_objective,
        "packing": args.packing,
        "num_shards": args.num_shards,
        "seed": args.seed,
        "input_format": args.input_format,
        "paragraphs_per_document": args.paragraphs_per_document,
        "lower_case": args.do_lower_case,
        "group_chars": args.group_chars,
        "progress": not args.quiet,
        "overwrite": args.overwrite,
    }


def _reported(write, output_dir: str) -> int:
    """Runs `write()`; a bad input, an output folder not ours to write (in use, another
    command's, a user's), a full disk or no permission exit 2; a failed worker 1."""
    try:
        write()
    except (ValueError, FileNotFoundError) as error:
        print(f"pretraining_data: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"pretraining_data: error: {os_error_line(error, output_dir)}", file=sys.stderr)
        return 2 if error.errno in DISK_ERRNOS else 1
    except RuntimeError as error:
        print(f"pretraining_data: error: {error}", file=sys.stderr)
        return 1
    return 0


def _main_beam(args: argparse.Namespace, beam_args: list[str]) -> int:
    """`--runner`: the same shards written by an Apache Beam pipeline (`pipelines.beam_writer`)."""
    # Beam's import logs "apitools not found ..." on the root logger: a handler that drops it
    # keeps logging's own default handler from printing that line before ours.
    quiet = logging.NullHandler()
    logging.getLogger().addHandler(quiet)
    try:
        from pipelines.beam_writer import write_pretraining_data_beam
    except ImportError as error:
        print(
            f"pretraining_data: error: --runner needs apache-beam ({error}); "
            "install it with `pip install albert-keras[beam]`",
            file=sys.stderr,
        )
        return 2
    finally:
        logging.getLogger().removeHandler(quiet)
    if args.num_workers is not None:
        beam_args = [*beam_args, f"--num_workers={args.num_workers}"]
    if (args.task_index, args.num_tasks) != (0, 1):
        print(
            "pretraining_data: error: --task_index/--num_tasks do not apply with --runner "
            "(Beam spreads the work)",
            file=sys.stderr,
        )
        return 2
    return _reported(
        lambda: write_pretraining_data_beam(
            args.input,
            args.spm_model,
            args.output_dir,
            runner=args.runner,
            beam_args=beam_args,
            **_shard_settings(args),
            keep_freed_memory=True,  # in the workers that make records, as locally
        ),
        args.output_dir,
    )


if __name__ == "__main__":
    sys.exit(main())
