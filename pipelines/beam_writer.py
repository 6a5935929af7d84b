"""The pretraining-data writer as an Apache Beam pipeline: the same shards, on any Beam runner.

    python -m pipelines.pretraining_data --input 'gs://bucket/corpus/*.txt' \\
        --spm_model gs://bucket/spm.model --output_dir gs://bucket/records \\
        --max_seq_length 512 --dupe_factor 40 --num_shards 1024 \\
        --runner DataflowRunner --project P --region R --temp_location gs://bucket/tmp

The steps are the local writer's functions (`pipelines.documents`, `pipelines.document_groups`,
`pipelines.pretraining_examples.make_records`, `pipelines.writer_settings.summarize`), wired as
Beam transforms, so for the same settings the shards are byte-identical to
`write_pretraining_data`'s, whatever the runner and its parallelism:

1. Match: each input pattern is expanded on a worker (not in the driver), files de-duplicated.
2. Measure (parallel over files): each file is read as the local writer reads it and its
   documents' sizes kept (not their text), with its `ReadStats` (skips and repairs per file).
3. Number (one small sequential step over the sizes, in sorted path order): where each file
   starts in the writer's group numbering (`document_groups.file_start_states`).
4. Read (parallel over files): documents again, each keyed by its group; a group (which may
   span files) is gathered by a GroupByKey, its documents in input order.
5. Make (parallel over groups): `make_records`, seeded by (seed, group, round) as locally.
6. Write (parallel over shards): group g goes to shard g % num_shards; a shard is its groups'
   records in group order, written to a hidden temporary name and renamed. Every shard is
   written, empty or not, as locally.
7. `stats.json`: the same summary as the local writer's (`cpu_seconds` is null: it is spread
   over workers).

Files are the unit of reading (a single huge file is read by one worker, streamed in blocks);
groups are the unit of work after that. A shard's records are held in one worker's memory while
it is written: pick `--num_shards` so that a shard is at most a few hundred MB. The local
writer's resume bookkeeping does not apply: Beam retries failed work itself, and a rerun
rewrites every shard.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.transforms.window import GlobalWindows

from pipelines import filesystems, shard_worker
from pipelines.document_groups import GroupCutter, document_chars, file_start_states
from pipelines.documents import iter_file_documents, list_input_files
from pipelines.pretraining_examples import ExampleConfig, make_records
from pipelines.pretraining_stats import PretrainingStats
from pipelines.read_stats import ReadStats
from pipelines.tokenization import SentencePieceEncoder
from pipelines.writer_folder import shard_name, writer_folder
from pipelines.writer_settings import (
    check_input_format,
    check_settings,
    summarize,
    writer_settings,
)

# Groups are made together until they hold this many characters times dupe rounds, as the local
# writer's workers do (`shard_worker`): fewer, larger NumPy calls; the bytes are the same.
_COMBINE_CHARS = 1 << 21


def write_pretraining_data_beam(
    input_patterns: str | Iterable[str],
    spm_model: str,
    output_dir: str,
    *,
    runner: str = "DirectRunner",
    beam_args: list[str] | None = None,
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
    input_format: str = "text",
    paragraphs_per_document: int = 20,
    lower_case: bool | None = None,
    group_chars: int = 1 << 17,
    progress: bool = True,
    keep_freed_memory: bool = False,
    overwrite: bool = False,
) -> dict:
    """Writes every shard with a Beam pipeline; returns the statistics written to `stats.json`.

    Args:
        input_patterns, spm_model, output_dir: as `write_pretraining_data`, on the local disk or
            any filesystem Beam has (`gs://...`).
        runner: str. A Beam runner: DirectRunner, PrismRunner, DataflowRunner, FlinkRunner,
            SparkRunner, ...
        beam_args: list of str or None. More Beam pipeline options (`--direct_num_workers=2`,
            `--project=...`).
        keep_freed_memory: bool. Whether the workers that make the records call
            `shard_worker.keep_freed_memory()` (glibc's malloc keeps freed memory for NumPy's
            large temporaries, as the local writer's workers do). Off by default, since on an
            in-process runner (the DirectRunner's default mode) it would change the calling
            process's malloc too; the command line turns it on.
        overwrite: bool. As `write_pretraining_data`: the folder is opened by
            `pipelines.writer_folder` (owned, locked; a remote one is neither).
        The others: as `write_pretraining_data` (same meaning, same records).

    Example:
    >>> stats = write_pretraining_data_beam("corpus/*.txt", "spm.model", "out/records",
    ...                                     max_seq_length=128, dupe_factor=10, num_shards=8)
    >>> stats["examples"]  # as write_pretraining_data with the same settings
    193
    """
    started = time.time()
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
    check_settings(config, num_shards, group_chars=group_chars)
    check_input_format(input_format, paragraphs_per_document)
    patterns = _split_patterns(input_patterns)
    for pattern in patterns:
        if not _matches_a_file(pattern):
            raise FileNotFoundError(f"input pattern {pattern!r} matches no file")
    if not filesystems.is_remote(spm_model) and os.path.isdir(spm_model):
        raise ValueError(f"SentencePiece model {spm_model!r} is a folder: give the .model file")
    if not filesystems.is_file(spm_model):
        raise FileNotFoundError(f"SentencePiece model {spm_model!r} does not exist")
    model_bytes = filesystems.read_bytes(spm_model)
    encoder = _encoder(model_bytes, lower_case)  # checks the model here, not on a worker
    settings = writer_settings(
        config, encoder, num_shards, input_format, paragraphs_per_document, group_chars
    )
    options = PipelineOptions([f"--runner={runner}", *(beam_args or [])])
    folder = writer_folder(
        output_dir, settings, patterns, spm_model, runner=runner, overwrite=overwrite
    )
    try:
        summary = _run_pipeline(
            options, patterns, output_dir, config, model_bytes, encoder, settings, started,
            log=f"running on {runner}: {len(patterns)} input pattern(s) -> {output_dir}"
            if progress else None,
            keep_freed_memory=keep_freed_memory,
        )  # fmt: skip
        if summary["input"]["documents"] == 0:
            # Every shard was written empty: remove them, as the local writer leaves nothing.
            _delete(output_dir, [*summary["shards"], "stats.json"])
            raise ValueError(
                f"no document could be read from {summary['files']} ({summary['input']['skipped']})"
            )
    except BaseException:
        folder.close()
        folder.discard_if_unused()
        raise
    folder.close()
    _log(
        progress,
        f"wrote {summary['examples']:,} examples to {num_shards} shards in {output_dir} "
        f"({time.time() - started:.1f} s)",
    )
    return summary


def _run_pipeline(
    options, patterns, output_dir, config, model_bytes, encoder, settings, started, *,
    log, keep_freed_memory,
) -> dict:  # fmt: skip
    """Runs the pipeline (see the module docstring); returns the `stats.json` it wrote."""
    num_shards, group_chars = settings["num_shards"], settings["group_chars"]
    read_file = (settings["input_format"], settings["paragraphs_per_document"])
    _log(log is not None, log)
    with beam.Pipeline(options=options) as pipeline:
        files = (
            pipeline
            | "Patterns" >> beam.Create(patterns)
            | "Match" >> beam.FlatMap(list_input_files)
            | "Distinct files" >> beam.Distinct()
        )
        measured = (
            files
            | "Spread files" >> beam.Reshuffle()
            | "Measure" >> beam.ParDo(_MeasureFile(*read_file))
        )
        read_stats = (
            measured
            | "Read stats" >> beam.Map(lambda m: m[2])
            | "Merge read stats" >> beam.CombineGlobally(_merge_read_stats)
        )
        file_list = (
            measured | "Paths" >> beam.Map(lambda m: m[0]) | "All paths" >> beam.combiners.ToList()
        )
        groups = (
            measured
            | "Sizes" >> beam.Map(lambda m: (m[0], m[1]))
            | "All sizes" >> beam.combiners.ToList()
            | "Number" >> beam.FlatMap(file_start_states, group_chars)
            | "Spread numbered files" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(_ReadDocuments(*read_file, group_chars))
            | "Gather groups" >> beam.GroupByKey()
            | "Order documents" >> beam.Map(_ordered_group)
        )
        records = groups | "Make" >> beam.ParDo(
            _MakeRecords(config, model_bytes, encoder.lower_case, num_shards, keep_freed_memory)
        )
        every_shard = pipeline | "Shards" >> beam.Create([(s, None) for s in range(num_shards)])
        made = (
            (records, every_shard)
            | "With empty shards" >> beam.Flatten()
            | "Gather shards" >> beam.GroupByKey()
            | "Write" >> beam.ParDo(_WriteShard(output_dir, num_shards))
            | "Merge made stats" >> beam.CombineGlobally(_merge_made_stats)
        )
        _ = (
            pipeline
            | "Once" >> beam.Create([None])
            | "Stats"
            >> beam.Map(
                _write_stats,
                beam.pvalue.AsSingleton(read_stats),
                beam.pvalue.AsSingleton(made),
                beam.pvalue.AsSingleton(file_list),
                settings=settings,
                output_dir=output_dir,
                started=started,
            )
        )
    return json.loads(filesystems.read_bytes(FileSystems.join(output_dir, "stats.json")))


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


def _encoder(model_bytes: bytes, lower_case: bool | None) -> SentencePieceEncoder:
    """A `SentencePieceEncoder` of a model's bytes (workers get the bytes, not a path)."""
    folder = tempfile.mkdtemp(prefix="albert-keras-spm-")
    path = os.path.join(folder, "spm.model")
    try:
        with open(path, "wb") as f:
            f.write(model_bytes)
        return SentencePieceEncoder(path, lower_case)  # loaded now; the file is not needed after
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class _MeasureFile(beam.DoFn):
    """path -> (path, [characters of each document], ReadStats dict)."""

    def __init__(self, input_format: str, paragraphs_per_document: int):
        self.input_format = input_format
        self.paragraphs_per_document = paragraphs_per_document

    def process(self, path: str):
        stats = ReadStats()
        documents = iter_file_documents(
            path,
            self.input_format,
            paragraphs_per_document=self.paragraphs_per_document,
            stats=stats,
        )
        sizes = [document_chars(document) for document in documents]
        yield path, sizes, stats.to_dict()


class _ReadDocuments(beam.DoFn):
    """(path, group state at its start) -> (group index, (path, document index, document))."""

    def __init__(self, input_format: str, paragraphs_per_document: int, group_chars: int):
        self.input_format = input_format
        self.paragraphs_per_document = paragraphs_per_document
        self.group_chars = group_chars

    def process(self, element):
        path, (index, size) = element
        cutter = GroupCutter(self.group_chars, index, size)
        documents = iter_file_documents(
            path, self.input_format, paragraphs_per_document=self.paragraphs_per_document
        )
        for number, document in enumerate(documents):
            yield cutter.add(document_chars(document)), (path, number, document)


def _ordered_group(element):
    group_index, documents = element
    return group_index, [d for _, _, d in sorted(documents, key=lambda d: (d[0], d[1]))]


class _MakeRecords(beam.DoFn):
    """(group index, documents) -> (shard, (group index, TFRecord bytes, PretrainingStats dict))."""

    def __init__(self, config, model_bytes, lower_case, num_shards, keep_freed_memory=False):
        self.config = config
        self.model_bytes = model_bytes
        self.lower_case = lower_case
        self.num_shards = num_shards
        self.keep_freed_memory = keep_freed_memory

    def setup(self):
        if self.keep_freed_memory:
            shard_worker.keep_freed_memory()
        self.encoder = _encoder(self.model_bytes, self.lower_case)

    def start_bundle(self):
        self.pending, self.pending_chars = [], 0

    def process(self, element):
        group_index, documents = element
        self.pending.append((group_index, documents))
        self.pending_chars += sum(map(document_chars, documents))
        if self.pending_chars * self.config.dupe_factor >= _COMBINE_CHARS:
            yield from self._flush()

    def finish_bundle(self):
        for value in self._flush():
            yield GlobalWindows.windowed_value(value)

    def _flush(self):
        groups, self.pending, self.pending_chars = self.pending, [], 0
        if not groups:
            return
        stats = [PretrainingStats() for _ in groups]
        chunks = [[] for _ in groups]
        for k, chunk in make_records(self.config, self.encoder, groups, stats):
            chunks[k].append(chunk)
        for (group_index, _), data, group_stats in zip(groups, chunks, stats):
            value = (group_index, b"".join(data), group_stats.to_dict())
            yield group_index % self.num_shards, value


class _WriteShard(beam.DoFn):
    """(shard, [its groups' records]) -> the shard file, its groups in order; its stats."""

    def __init__(self, output_dir: str, num_shards: int):
        self.output_dir = output_dir
        self.num_shards = num_shards

    def process(self, element):
        shard, values = element
        groups = sorted((v for v in values if v is not None), key=lambda v: v[0])
        name = shard_name(shard, self.num_shards)
        path = FileSystems.join(self.output_dir, name)
        # A retried or concurrent attempt writes the same bytes: the last rename wins.
        temporary = FileSystems.join(self.output_dir, f".{name}.beam-{os.getpid()}.partial")
        with FileSystems.create(temporary, mime_type="application/octet-stream") as f:
            for _, data, _ in groups:
                f.write(data)
        if FileSystems.exists(path):
            FileSystems.delete([path])
        FileSystems.rename([temporary], [path])
        stats = PretrainingStats()
        for _, _, group_stats in groups:
            stats.merge(PretrainingStats.from_dict(group_stats))
        yield stats.to_dict()


def _merge_read_stats(dicts: Iterable[dict]) -> dict:
    total = ReadStats()
    for value in dicts:
        total.merge(ReadStats.from_dict(value))
    return total.to_dict()


def _merge_made_stats(dicts: Iterable[dict]) -> dict:
    total = PretrainingStats()
    for value in dicts:
        total.merge(PretrainingStats.from_dict(value))
    return total.to_dict()


def _write_stats(_, read_stats, made, files, *, settings, output_dir, started):
    num_shards = settings["num_shards"]
    summary = summarize(
        settings,
        sorted(files),
        ReadStats.from_dict(read_stats),
        PretrainingStats.from_dict(made),
        [shard_name(s, num_shards) for s in range(num_shards)],
    )
    summary["seconds"] = round(time.time() - started, 3)
    summary["cpu_seconds"] = None  # spread over the runner's workers
    path = FileSystems.join(output_dir, "stats.json")
    temporary = FileSystems.join(output_dir, f".stats.json.beam-{os.getpid()}.partial")
    with FileSystems.create(temporary, mime_type="application/json") as f:
        f.write(json.dumps(summary, indent=1).encode())
    if FileSystems.exists(path):
        FileSystems.delete([path])
    FileSystems.rename([temporary], [path])


def _log(enabled: bool, message: str) -> None:
    if enabled:
        print(f"pretraining_data: {message}", file=sys.stderr, flush=True)
