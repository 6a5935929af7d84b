"""The data writer's Beam pipeline: its steps as transforms (`pipelines.beam_writer` describes
them and runs them). Each step is one of the local writer's functions, so the shards are the
same bytes.

Where the time goes on a runner, and why the pipeline is cut this way (`docs/beam.md` has the
figures): text crosses the one shuffle, records never do. A group's records are 7 (dupe 1) to
280 (dupe 40) times its text, so a shard's groups are gathered as text and made and written
by the worker that holds them, as the local writer's workers own their shards; each element
is a group's piece of one file (not a document, not a record). SentencePiece is loaded once
per worker process (`shared_encoder`), not once per DoFn instance, and the transforms are
few, since each adds a fixed cost to the driver and to every worker.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import Metrics, MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

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
_METRICS = "albert_keras.pretraining_data"

# This process's SentencePiece encoders by (model sha256, lower_case): Beam makes a DoFn
# instance per bundle processor (per stage, per thread, again after a failure), and each would
# load the model and build its piece tables.
_ENCODERS: dict[tuple[str, bool | None], SentencePieceEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


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
) -> tuple[dict, dict]:
    """Runs the writer's pipeline; returns the `stats.json` it wrote and the workers' counters.

    Args:
        options: the Beam pipeline options (runner included).
        patterns: list of str. Input glob patterns, matched on workers.
        output_dir: str. Gets the shards and `stats.json`.
        recorded: dict. `writer_settings.recorded_settings(...)`: what `stats.json` records.
        config: `ExampleConfig`. What the records hold.
        model_bytes: bytes. The SentencePiece model (workers get its bytes, not a path).
        started: float. `time.time()` when the run began (`stats.json`'s `seconds`).
        keep_freed_memory: bool. As `write_pretraining_data_beam`.

    Returns:
        `(summary, counters)`: `counters` maps each of the workers' counters (`read_cpu_ms`,
        `make_cpu_ms`, `write_cpu_ms`, `sentencepiece_loads`) to its total over the workers.
    """
    pipeline = beam.Pipeline(options=options)
    measured, pieces = _read_pieces(pipeline, patterns, recorded)
    shards = pipeline | "Shards" >> beam.Create([(s, None) for s in range(recorded["num_shards"])])
    maker = _MakeShard(config, model_bytes, recorded, output_dir, keep_freed_memory)
    _ = (
        (pieces, shards)
        | "With empty shards" >> beam.Flatten()
        | "Gather shards" >> beam.GroupByKey()
        | "Make and write" >> beam.ParDo(maker)
        | "Merge made stats" >> beam.CombineGlobally(_merge_made_stats)
        | "Stats"
        >> beam.Map(
            _write_stats,
            beam.pvalue.AsSingleton(measured),
            recorded=recorded,
            output_dir=output_dir,
            started=started,
        )
    )
    result = pipeline.run()
    result.wait_until_finish()
    counters = {
        c.key.metric.name: c.committed
        for c in result.metrics().query(MetricsFilter().with_namespace(_METRICS))["counters"]
    }
    summary = json.loads(filesystems.read_bytes(FileSystems.join(output_dir, "stats.json")))
    return summary, counters


def _read_pieces(pipeline, patterns: list[str], recorded: dict):
    """Steps 1-4: every file's measure `[(path, [document sizes], ReadStats dict)]` (one
    element), and the input's pieces `(shard, (group index, path, [documents]))`: the
    documents of one group in one file."""
    group_chars = recorded["group_chars"]
    read_file = (recorded["input_format"], recorded["paragraphs_per_document"])
    measured = (
        pipeline
        | "Patterns" >> beam.Create(patterns)
        | "Match" >> beam.FlatMap(list_input_files)
        | "Distinct files" >> beam.Distinct()  # a shuffle: the files are spread over workers
        | "Measure" >> beam.ParDo(_MeasureFile(*read_file))
        | "All files" >> beam.combiners.ToList()
    )
    pieces = (
        measured
        | "Number"
        >> beam.FlatMap(lambda files: file_start_states([f[:2] for f in files], group_chars))
        | "Spread numbered files" >> beam.Reshuffle()
        | "Read" >> beam.ParDo(_ReadPieces(*read_file, group_chars, recorded["num_shards"]))
    )
    return measured, pieces


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


def shared_encoder(
    model_bytes: bytes, lower_case: bool | None, model_sha256: str
) -> tuple[SentencePieceEncoder, bool]:
    """This process's encoder of a model: loaded by the first caller, shared by every later one
    (DoFn instances and threads alike; SentencePiece encodes from several threads at once).

    Args:
        model_bytes: bytes. A SentencePiece model.
        lower_case: bool or None. As `SentencePieceEncoder`.
        model_sha256: str. The model's sha256 (the key; not checked against `model_bytes`).

    Returns:
        `(encoder, loaded)`: `loaded` is True for the call that loaded the model.

    Example:
    >>> model = open("spm.model", "rb").read()
    >>> digest = SentencePieceEncoder("spm.model").model_sha256
    >>> first, loaded = shared_encoder(model, None, digest)
    >>> second, loaded_again = shared_encoder(model, None, digest)
    >>> second is first, loaded_again
    (True, False)
    """
    key = (model_sha256, lower_case)
    with _ENCODERS_LOCK:
        if key in _ENCODERS:
            return _ENCODERS[key], False
        encoder = encoder_from_bytes(model_bytes, lower_case)
        _ENCODERS[key] = encoder
        return encoder, True


class _MeasureFile(beam.DoFn):
    """path -> (path, [characters of each document], ReadStats dict)."""

    def __init__(self, input_format: str, paragraphs_per_document: int):
        self.input_format = input_format
        self.paragraphs_per_document = paragraphs_per_document
        self.cpu_ms = Metrics.counter(_METRICS, "read_cpu_ms")

    def process(self, path: str):
        start, stats = time.thread_time(), ReadStats()
        documents = iter_file_documents(
            path,
            self.input_format,
            paragraphs_per_document=self.paragraphs_per_document,
            stats=stats,
        )
        sizes = [document_chars(document) for document in documents]
        self.cpu_ms.inc(round((time.thread_time() - start) * 1000))
        yield path, sizes, stats.to_dict()


class _ReadPieces(beam.DoFn):
    """(path, group state at its start) -> (shard, (group index, path, [documents])) for each
    group the file's documents fall in."""

    def __init__(self, input_format, paragraphs_per_document, group_chars, num_shards):
        self.input_format = input_format
        self.paragraphs_per_document = paragraphs_per_document
        self.group_chars = group_chars
        self.num_shards = num_shards
        self.cpu_ms = Metrics.counter(_METRICS, "read_cpu_ms")

    def process(self, element):
        path, (index, size) = element
        cutter = GroupCutter(self.group_chars, index, size)
        documents = iter_file_documents(
            path, self.input_format, paragraphs_per_document=self.paragraphs_per_document
        )
        start, group, piece = time.thread_time(), index, []
        for document in documents:
            document_group = cutter.add(document_chars(document))
            if document_group != group:
                self.cpu_ms.inc(round((time.thread_time() - start) * 1000))
                yield group % self.num_shards, (group, path, piece)
                start, group, piece = time.thread_time(), document_group, []
            piece.append(document)
        self.cpu_ms.inc(round((time.thread_time() - start) * 1000))
        if piece:
            yield group % self.num_shards, (group, path, piece)


class _MakeShard(beam.DoFn):
    """(shard, [its pieces]) -> the shard file, its groups in order; yields its stats."""

    def __init__(self, config, model_bytes, recorded, output_dir, keep_freed_memory=False):
        self.config = config
        self.model_bytes = model_bytes
        self.lower_case = recorded["lower_case"]
        self.model_sha256 = recorded["vocabulary_sha256"]
        self.num_shards = recorded["num_shards"]
        self.output_dir = output_dir
        self.keep_freed_memory = keep_freed_memory
        self.make_cpu_ms = Metrics.counter(_METRICS, "make_cpu_ms")
        self.write_cpu_ms = Metrics.counter(_METRICS, "write_cpu_ms")
        self.loads = Metrics.counter(_METRICS, "sentencepiece_loads")

    def setup(self):
        if self.keep_freed_memory:
            shard_worker.keep_freed_memory()
        self.encoder, loaded = shared_encoder(self.model_bytes, self.lower_case, self.model_sha256)
        self.loaded = loaded  # counted in process: a counter counts only inside a bundle

    def process(self, element):
        if self.loaded:
            self.loads.inc()
            self.loaded = False
        shard, pieces = element
        name = shard_name(shard, self.num_shards)
        path = FileSystems.join(self.output_dir, name)
        # A retried or concurrent attempt writes the same bytes: the last rename wins.
        temporary = FileSystems.join(self.output_dir, f".{name}.beam-{os.getpid()}.partial")
        stats = PretrainingStats()
        with FileSystems.create(temporary, mime_type="application/octet-stream") as f:
            for chunks in self._made(_groups(pieces), stats):
                start = time.thread_time()
                for chunk in chunks:
                    f.write(chunk)
                self.write_cpu_ms.inc(round((time.thread_time() - start) * 1000))
        if FileSystems.exists(path):
            FileSystems.delete([path])
        FileSystems.rename([temporary], [path])
        yield stats.to_dict()

    def _made(self, groups, stats):
        """Yields the records of `groups` (in order) a batch of about `_COMBINE_CHARS` at a time,
        as lists of TFRecord chunks."""
        pending, pending_chars = [], 0
        for group in [*groups, None]:
            if group is not None:
                pending.append(group)
                pending_chars += sum(map(document_chars, group[1]))
            if pending and (
                group is None or pending_chars * self.config.dupe_factor >= _COMBINE_CHARS
            ):
                start = time.thread_time()
                made = make_records(self.config, self.encoder, pending, [stats] * len(pending))
                chunks = [chunk for _, chunk in made]
                self.make_cpu_ms.inc(round((time.thread_time() - start) * 1000))
                yield chunks
                pending, pending_chars = [], 0


def _groups(pieces: Iterable) -> list[tuple[int, list[list[str]]]]:
    """A shard's pieces (and None for the empty-shard marker) -> its groups, in input order:
    `(group index, documents)`, a group's files in path order."""
    ordered = sorted((p for p in pieces if p is not None), key=lambda p: (p[0], p[1]))
    groups = []
    for group, _, documents in ordered:
        if groups and groups[-1][0] == group:
            groups[-1][1].extend(documents)
        else:
            groups.append((group, list(documents)))
    return groups


def _merge_made_stats(dicts: Iterable[dict]) -> dict:
    total = PretrainingStats()
    for value in dicts:
        total.merge(PretrainingStats.from_dict(value))
    return total.to_dict()


def _write_stats(made, measured, *, recorded, output_dir, started):
    num_shards = recorded["num_shards"]
    read_stats = ReadStats()
    for _, _, file_stats in measured:
        read_stats.merge(ReadStats.from_dict(file_stats))
    summary = summarize(
        recorded,
        sorted(path for path, _, _ in measured),
        read_stats,
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
