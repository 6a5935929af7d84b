"""The data writer's Beam pipeline: its steps as transforms (`pipelines.beam_writer` describes
them and runs them). Each step is one of the local writer's functions, so the shards are the
same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
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
from pipelines.writer_folder import shard_name
from pipelines.writer_settings import summarize

# Groups are made together until they hold this many characters times dupe rounds, as the local
# writer's workers do (`shard_worker`): fewer, larger NumPy calls; the bytes are the same.
_COMBINE_CHARS = 1 << 21


def run_writer_pipeline(
    options: PipelineOptions,
    patterns: list[str],
    output_dir: str,
    recorded: dict,
    config: ExampleConfig,
    model_bytes: bytes,
    *,
    started: float,
    keep_freed_memory: bool,
) -> dict:
    """Runs the writer's pipeline; returns the `stats.json` it wrote.

    Args:
        options: the Beam pipeline options (runner included).
        patterns: list of str. Input glob patterns, matched on workers.
        output_dir: str. Gets the shards and `stats.json`.
        recorded: dict. `writer_settings.recorded_settings(...)`: what `stats.json` records.
        config: `ExampleConfig`. What the records hold.
        model_bytes: bytes. The SentencePiece model (workers get its bytes, not a path).
        started: float. `time.time()` when the run began (`stats.json`'s `seconds`).
        keep_freed_memory: bool. As `write_pretraining_data_beam`.
    """
    num_shards = recorded["num_shards"]
    with beam.Pipeline(options=options) as pipeline:
        read_stats, file_list, groups = _read_groups(pipeline, patterns, recorded)
        records = groups | "Make" >> beam.ParDo(
            _MakeRecords(config, model_bytes, recorded["lower_case"], num_shards, keep_freed_memory)
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
                recorded=recorded,
                output_dir=output_dir,
                started=started,
            )
        )
    return json.loads(filesystems.read_bytes(FileSystems.join(output_dir, "stats.json")))


def _read_groups(pipeline, patterns: list[str], recorded: dict):
    """Steps 1-4: the input's read statistics, its file list, and its groups of documents
    `(group index, [documents])`, each gathered from the files it spans."""
    group_chars = recorded["group_chars"]
    read_file = (recorded["input_format"], recorded["paragraphs_per_document"])
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
    return read_stats, file_list, groups


def encoder_from_bytes(model_bytes: bytes, lower_case: bool | None) -> SentencePieceEncoder:
    """A `SentencePieceEncoder` of a model's bytes (workers get the bytes, not a path).

    Args:
        model_bytes: bytes. A SentencePiece model.
        lower_case: bool or None. As `SentencePieceEncoder`.
    """
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
        self.encoder = encoder_from_bytes(self.model_bytes, self.lower_case)

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


def _write_stats(_, read_stats, made, files, *, recorded, output_dir, started):
    num_shards = recorded["num_shards"]
    summary = summarize(
        recorded,
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
