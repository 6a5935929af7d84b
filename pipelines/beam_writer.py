"""The pretraining-data writer as an Apache Beam pipeline: the same shards, on any Beam runner.

    python -m pipelines.pretraining_data --input 'gs://bucket/corpus/*.txt' \\
        --spm_model gs://bucket/spm.model --output_dir gs://bucket/records \\
        --max_seq_length 512 --dupe_factor 40 --num_shards 1024 \\
        --runner DataflowRunner --project P --region R --temp_location gs://bucket/tmp

The steps are the local writer's functions (`pipelines.documents`, `pipelines.document_groups`,
`pipelines.pretraining_examples.make_records`, `pipelines.writer_settings.summarize`), wired as
Beam transforms (`pipelines.beam_pipeline`), so for the same settings the shards are
byte-identical to `write_pretraining_data`'s, whatever the runner and its parallelism:

1. Match: each input pattern is expanded on a worker (not in the driver), files de-duplicated.
2. Measure (parallel over files): each file is read as the local writer reads it and its
   documents' sizes kept (not their text), with its `ReadStats` (skips and repairs per file).
3. Number (one small sequential step over the sizes, in sorted path order): where each file
   starts in the writer's group numbering (`document_groups.file_start_states`).
4. Read (parallel over files): documents again, cut into pieces (a group's documents in one
   file), packed (text and sizes, compressed) and spilled to a hidden folder of the output
   (`pipelines.beam_pieces`), each piece's place keyed by its shard (group g goes to shard
   g % num_shards): the one shuffle carries places, never text nor records.
5. Make and write (parallel over shards): a shard's pieces, read back a group at a time in
   group order, made into records by `make_records` (seeded by (seed, group, round) as
   locally) and written as they are made to a hidden temporary name, then renamed.
   SentencePiece is loaded once per worker process.
6. `stats.json`: the shards no group went to are written empty (as locally), then the same
   summary as the local writer's (`cpu_seconds` is null: it is spread over workers).

Files are the unit of reading (a single huge file is read by one worker, streamed in blocks);
shards are the unit of work after that: pick `--num_shards` well above the number of workers.
A worker holds a group's text and a batch of its records while it makes a shard; the spill
folder is removed at the end. The local writer's resume
bookkeeping does not apply: Beam retries failed work itself, and a rerun rewrites every shard.
"""

from __future__ import annotations

import glob
import hashlib
import os
import time
from collections.abc import Iterable

from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from albert_keras_settings.setting import resolve_settings
from albert_keras_settings.writer_settings import WriterSettings
from pipelines import filesystems
from pipelines.beam_pipeline import run_writer_pipeline, shared_encoder
from pipelines.pretraining_examples import ExampleConfig
from pipelines.writer_folder import writer_folder
from pipelines.writer_settings import log, recorded_settings, write_in_folder

# Runners whose workers run on the driver's machine (names lower-cased, "Runner" dropped).
_LOCAL_RUNNERS = {"direct", "prism", "bundlebaseddirect", "switchingdirect"}
# Runners Beam knows only by their module path (its short names list leaves them out).
_RUNNER_PATHS = {"dask": "apache_beam.runners.dask.dask_runner.DaskRunner"}


def _runner_path(runner: str) -> str:
    """`runner` as `--runner` takes it: `DaskRunner` (or `dask`) by its module path."""
    return _RUNNER_PATHS.get(runner.lower().removesuffix("runner"), runner)


def write_pretraining_data_beam(
    settings: WriterSettings | None = None,
    /,
    *,
    runner: str = "DirectRunner",
    beam_args: list[str] | None = None,
    progress: bool = True,
    keep_freed_memory: bool = False,
    **overrides,
) -> dict:
    """Writes every shard with a Beam pipeline; returns the statistics written to `stats.json`.

    Args:
        settings: `WriterSettings`, as `write_pretraining_data` takes them (same meaning, same
            records); `input`, `spm_model` and `output_dir` may be on any filesystem Beam has
            (`gs://...`). Beam spreads the work: `num_workers` and `checkpoint_seconds` are
            not used, and `task_index`/`num_tasks` must be 0/1.
        runner: str. A Beam runner: DirectRunner, PrismRunner, DataflowRunner, FlinkRunner,
            SparkRunner, ...
        beam_args: list of str or None. More Beam pipeline options (`--direct_num_workers=2`,
            `--project=...`).
        progress: bool. Print progress lines to stderr.
        keep_freed_memory: bool. Whether the workers that make the records call
            `shard_worker.keep_freed_memory()` (glibc's malloc keeps freed memory for NumPy's
            large temporaries, as the local writer's workers do). Off by default, since on an
            in-process runner (the DirectRunner's default mode) it would change the calling
            process's malloc too; the command line turns it on.
        **overrides: settings as keyword arguments, alone or over `settings`. With `overwrite`,
            the folder is opened by `pipelines.writer_folder` (owned, locked; a remote one is
            neither).

    Example:
    >>> stats = write_pretraining_data_beam(input="corpus/*.txt", spm_model="spm.model",
    ...                                     output_dir="out/records", max_seq_length=128,
    ...                                     dupe_factor=10, num_shards=8)
    >>> stats["examples"]  # as write_pretraining_data with the same settings
    193
    """
    s = resolve_settings(WriterSettings, settings, overrides)
    started = time.time()
    if (s.task_index, s.num_tasks) != (0, 1):
        raise ValueError(
            "--task_index/--num_tasks do not apply with --runner (Beam spreads the work)"
        )
    patterns = _split_patterns(s.input)
    model_bytes = _read_model(s.spm_model, patterns)
    digest = hashlib.sha256(model_bytes).hexdigest()
    # Checked here, not on a worker; a runner whose workers share this process uses this one.
    encoder, loaded_here = shared_encoder(model_bytes, s.lower_case, digest)
    recorded = recorded_settings(s, encoder)
    options = PipelineOptions([f"--runner={_runner_path(runner)}", *(beam_args or [])])
    folder = writer_folder(
        s.output_dir, recorded, patterns, s.spm_model, runner=runner, overwrite=s.overwrite
    )

    def write() -> dict:
        log(progress, f"running on {runner}: {len(patterns)} input pattern(s) -> {s.output_dir}")
        summary, counters = run_writer_pipeline(
            options,
            patterns,
            s.output_dir,
            recorded,
            ExampleConfig.of(s),
            _model_for_workers(s.spm_model, model_bytes, runner),
            started=started,
            keep_freed_memory=keep_freed_memory,
        )
        if counters is None:
            log(progress, f"workers' CPU-seconds: not reported ({runner} collects no Beam metrics)")
        else:
            log(progress, _counters_line(counters, loaded_here))
        if summary["input"]["documents"] == 0:
            # Every shard was written empty: remove them, as the local writer leaves nothing.
            _delete(s.output_dir, [*summary["shards"], "stats.json"])
            raise ValueError(
                f"no document could be read from {summary['files']} ({summary['input']['skipped']})"
            )
        return summary

    return write_in_folder(folder, write, s.output_dir, progress)


def _model_for_workers(spm_model: str, model_bytes: bytes, runner: str) -> bytes | str:
    """The model's path where every worker can read it (a remote path, or any path on a
    runner whose workers run on this machine), else its bytes. Bytes travel inside the DoFn,
    which Beam pickles and bz2-compresses in the driver and decompresses for every instance
    on every worker: 0.07 CPU-s each for ALBERT's 0.8 MB model."""
    if filesystems.is_remote(spm_model):
        return spm_model
    if runner.lower().removesuffix("runner") in _LOCAL_RUNNERS:
        return os.path.abspath(spm_model)
    return model_bytes


def _counters_line(counters: dict, loaded_here: bool = False) -> str:
    """The workers' counters in one line: the CPU-seconds of each of the writer's steps (the
    thread time inside them: Beam's own work, its shuffle and pickling, is not counted, so the
    sum is no match for the local writer's whole-process `cpu_seconds`), and the SentencePiece
    loads: on the workers, or, where the workers run in this process and none loaded it, the
    one load made here (said so: it read "loaded 0 time(s)").

    Example:
    >>> line = _counters_line({"read_cpu_ms": 110, "make_cpu_ms": 910, "sentencepiece_loads": 2})
    >>> line.split(": ", 1)
    ["workers' CPU-seconds in the writer's steps (not Beam's own work)",
     'read 0.11, make 0.91, write 0.00; SentencePiece loaded 2 time(s) on the workers']
    >>> _counters_line({}, loaded_here=True).split("; ")[1]
    'SentencePiece loaded once, in this process (its in-process workers share it)'
    """
    seconds = ", ".join(
        f"{step} {counters.get(f'{step}_cpu_ms', 0) / 1000:.2f}"
        for step in ("read", "make", "write")
    )
    loads = counters.get("sentencepiece_loads", 0)
    loaded = f"SentencePiece loaded {loads} time(s) on the workers"
    # No worker loaded it: the workers ran in this process and used its encoder, loaded by this
    # run (`loaded_here`) or an earlier one in the same process; either way once, here.
    if loads == 0 and (loaded_here or counters):
        loaded = "SentencePiece loaded once, in this process (its in-process workers share it)"
    return f"workers' CPU-seconds in the writer's steps (not Beam's own work): {seconds}; {loaded}"


def _read_model(spm_model: str, patterns: list[str]) -> bytes:
    """The SentencePiece model's bytes, once every pattern is known to match a file."""
    for pattern in patterns:
        if not _matches_a_file(pattern):
            raise FileNotFoundError(f"input pattern {pattern!r} matches no file")
    if not filesystems.is_remote(spm_model) and os.path.isdir(spm_model):
        raise ValueError(f"SentencePiece model {spm_model!r} is a folder: give the .model file")
    if not filesystems.is_file(spm_model):
        raise FileNotFoundError(f"SentencePiece model {spm_model!r} does not exist")
    return filesystems.read_bytes(spm_model)


def _delete(output_dir: str, names: list[str]) -> None:
    paths = [FileSystems.join(output_dir, name) for name in names]
    FileSystems.delete([path for path in paths if FileSystems.exists(path)])


def _split_patterns(input_patterns: str | Iterable[str]) -> list[str]:
    """Comma-separated patterns as `list_input_files` splits them (an existing name is one)."""
    texts = [input_patterns] if isinstance(input_patterns, str) else list(input_patterns)
    patterns = []
    for text in texts:
        parts = [text] if filesystems.is_file(text) else text.split(",")
        patterns += [p.strip() for p in parts if p.strip()]
    if not patterns:
        raise FileNotFoundError(f"no input pattern given in {texts!r}")
    return patterns


def _matches_a_file(pattern: str) -> bool:
    """Whether `pattern` matches at least one file, without listing all it matches."""
    if filesystems.is_remote(pattern):
        (result,) = FileSystems.match([pattern], limits=[1])
        return bool(result.metadata_list)
    if os.path.isfile(pattern):
        return True
    return any(os.path.isfile(p) for p in glob.iglob(os.path.expanduser(pattern), recursive=True))
