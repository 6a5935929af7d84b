"""One task of the local data writer: which of its shards are left to write, the workers that
write them, and its statistics (`pipelines.pretraining_data` describes the whole flow).

A shard is finished (kept), half-written by a run with the same fingerprint (resumed from its
last checkpoint), or new; anything else in its place is refused. The input is read once, in the
main process, and each group is sent to the worker that owns its shard (`shard_worker`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from albert_keras_contracts import atomic_write
from albert_keras_settings.writer_settings import WriterSettings
from pipelines.document_groups import iter_groups
from pipelines.documents import iter_documents
from pipelines.pretraining_examples import ExampleConfig
from pipelines.pretraining_stats import PretrainingStats
from pipelines.read_stats import ReadStats
from pipelines.record_writer import bookkeeping_dir, partial_path, read_progress
from pipelines.shard_worker import ShardPlan, start_workers
from pipelines.tokenization import SentencePieceEncoder
from pipelines.writer_folder import shard_name
from pipelines.writer_settings import log, summarize

# Bumped when the records' bytes change for the same settings, so old checkpoints are not resumed.
_FORMAT_VERSION = 5
_INPUT_STATS = "input_stats.json"  # in the bookkeeping subfolder
_PROGRESS_SECONDS = 5.0


def write_task(
    s: WriterSettings,
    files: list[str],
    recorded: dict,
    encoder: SentencePieceEncoder,
    *,
    progress: bool,
) -> dict:
    """Writes the shards of this task (`s.task_index` of `s.num_tasks`) not yet finished.

    Args:
        s: `WriterSettings`.
        files: list of str. The input files, in reading order.
        recorded: dict. `writer_settings.recorded_settings(s, encoder)`.
        encoder: `SentencePieceEncoder` of `s.spm_model`.
        progress: bool. Print progress lines to stderr.

    Returns:
        `stats.json`'s summary of this task's shards (less the times).
    """
    fingerprint = writer_fingerprint(recorded, files, s.spm_model)
    shards = [i for i in range(s.num_shards) if i % s.num_tasks == s.task_index]
    paths = {i: os.path.join(s.output_dir, shard_name(i, s.num_shards)) for i in shards}
    plans = {i: plan for i in shards if (plan := _plan_shard(paths[i], fingerprint)) is not None}
    log(progress, f"{len(shards) - len(plans)} of {len(shards)} shards already finished")

    input_stats_path = os.path.join(bookkeeping_dir(s.output_dir), _INPUT_STATS)
    saved = _read_json(input_stats_path)
    if plans or saved is None or saved.get("fingerprint") != fingerprint:
        shared = {
            "config": ExampleConfig.of(s),
            "encoder": encoder,
            "num_shards": s.num_shards,
            "fingerprint": fingerprint,
            "checkpoint_seconds": s.checkpoint_seconds,
        }
        # The progress lines count the examples of this task's shards, those already written
        # included, as the last line does (`write_in_folder`): the two agree.
        already = sum(
            (read_progress(paths[i]) or {}).get("stats", {}).get("examples", 0)
            if i not in plans
            else (plans[i].stats or {}).get("examples", 0)
            for i in shards
        )
        read_stats = _run(files, s, plans, shared, progress, already)
        _write_json(input_stats_path, {"fingerprint": fingerprint, "input": read_stats.to_dict()})
    else:
        read_stats = ReadStats.from_dict(saved["input"])

    made = PretrainingStats()
    for i in shards:
        made.merge(PretrainingStats.from_dict(read_progress(paths[i])["stats"]))
    return summarize(recorded, files, read_stats, made, [paths[i] for i in shards])


def write_task_stats(s: WriterSettings, summary: dict, recorded: dict, files: list[str]) -> None:
    """`stats.json`, or with several tasks this task's file (and `stats.json` once all are)."""
    if s.num_tasks == 1:
        _write_json(os.path.join(s.output_dir, "stats.json"), summary)
        return
    name = f"stats-task-{s.task_index:05d}-of-{s.num_tasks:05d}.json"
    _write_json(os.path.join(s.output_dir, name), summary)
    read_stats = ReadStats.from_dict(summary["input"])
    fingerprint = writer_fingerprint(recorded, files, s.spm_model)
    _merge_tasks(s.output_dir, recorded, files, read_stats, fingerprint)


def writer_fingerprint(recorded: dict, files: list[str], spm_model: str) -> str:
    """A hash of everything that decides the shards' bytes."""
    digest = hashlib.sha256()
    with open(spm_model, "rb") as f:
        digest.update(f.read())
    inputs = [(os.path.abspath(p), *_size_and_mtime(p)) for p in files]
    digest.update(json.dumps([_FORMAT_VERSION, recorded, inputs], sort_keys=True).encode())
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


def _run(files, s: WriterSettings, plans, shared, progress, already: int = 0) -> ReadStats:
    """Reads the input once and has the shards in `plans` written. Returns what was read.

    `shared` holds the `ShardWorker` arguments common to all workers; `already` is the number
    of examples this task's shards held before (finished or resumed), counted in the progress
    lines so that their count and the last line's agree.
    """
    owned = sorted(plans)
    num_workers = max(1, min(s.num_workers, len(owned)))
    owner = {shard: i % num_workers for i, shard in enumerate(owned)}
    read_stats = ReadStats()
    total_bytes = sum(_file_size(p) for p in files) or 1
    last_report = started = time.monotonic()
    pool = None
    try:
        pool = start_workers(
            [
                {**shared, "plans": {i: plans[i] for i in owned if owner[i] == w}}
                for w in range(num_workers)
            ]
        )
        documents = iter_documents(
            files,
            s.input_format,
            paragraphs_per_document=s.paragraphs_per_document,
            stats=read_stats,
        )
        for group_index, group in iter_groups(documents, s.group_chars):
            shard = group_index % s.num_shards
            if shard in owner and group_index >= plans[shard].next_group:
                pool.send(owner[shard], (group_index, group))
            if progress and time.monotonic() - last_report >= _PROGRESS_SECONDS:
                last_report = time.monotonic()
                _report_progress(read_stats, total_bytes, pool, already, started)
        if read_stats.documents == 0:
            raise ValueError(f"no document could be read from {files} ({read_stats.skipped})")
        pool.finish()
        if progress and last_report > started:
            # The groups held back for batching are made at `finish`: said, so the last
            # progress line counts what the last line does.
            _report_progress(read_stats, total_bytes, pool, already, started)
    except BaseException:
        if pool is not None:
            pool.abort()
        _remove_unresumable(plans, shared["fingerprint"])
        raise
    return read_stats


def _report_progress(read_stats, total_bytes: int, pool, already: int, started: float) -> None:
    """One progress line: input read, documents, examples in this task's shards (and this
    run's rate)."""
    written = pool.examples_written.value
    rate = written / max(time.monotonic() - started, 1e-9)
    log(
        True,
        f"{100 * read_stats.bytes_read / total_bytes:.0f}% of the input read, "
        f"{read_stats.documents:,} documents, {already + written:,} examples ({rate:,.0f}/s)",
    )


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


def _merge_tasks(output_dir, recorded, files, read_stats, fingerprint):
    """With several tasks: once every shard is finished, whoever sees it writes `stats.json`."""
    num_shards = recorded["num_shards"]
    made = PretrainingStats()
    paths = [os.path.join(output_dir, shard_name(i, num_shards)) for i in range(num_shards)]
    for path in paths:
        saved = read_progress(path)
        if not (os.path.exists(path) and saved and saved.get("fingerprint") == fingerprint):
            return
        made.merge(PretrainingStats.from_dict(saved["stats"]))
    _write_json(
        os.path.join(output_dir, "stats.json"), summarize(recorded, files, read_stats, made, paths)
    )


def _read_json(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_json(path: str, value: dict) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    atomic_write.write_json(path, value, indent=1)
