"""The data writer's Beam pipeline: its steps as transforms (`pipelines.beam_writer` describes
them and runs them). Each step is one of the local writer's functions, so the shards are the
same bytes.

Where the time goes on a runner, and why the pipeline is cut this way (`docs/beam.md` has the
figures): neither records nor text cross the one shuffle. A group's records are 7 (dupe 1) to
280 (dupe 40) times its text, so the worker that gathers a shard's groups makes and writes
its records, as the local writer's workers own their shards. The text itself is spilled to
files by the workers that read it (`pipelines.beam_pieces`): the shuffle carries each piece's
place (a group's documents in one file: a path and a few integers), so no runner holds the
text in its driver, and the worker that makes a shard reads it back one group at a time.
SentencePiece is loaded once per worker process (`shared_encoder`), not once per DoFn
instance, and the transforms are few, since each adds a fixed cost to the driver and to every
worker.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from itertools import chain

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import Metrics, MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines import filesystems, shard_worker
from pipelines.beam_pieces import (
    read_piece,
    remove_spill_folder,
    remove_stale_spill_folders,
    spill_folder,
    spill_pieces,
)
from pipelines.document_groups import GroupCutter, document_chars, file_start_states
from pipelines.documents import iter_file_documents, list_input_files
from pipelines.pretraining_examples import ExampleConfig, make_records
from pipelines.pretraining_stats import PretrainingStats
from pipelines.read_stats import ReadStats
from pipelines.tokenization import SentencePieceEncoder
from pipelines.writer_folder import shard_name
from pipelines.writer_settings import summarize

# Groups are made together until they hold this many characters times dupe rounds: fewer,
# larger NumPy calls; the bytes are the same. A quarter of the local writer's batch
# (`shard_worker`): its temporaries were 40 MB of each worker's peak, 18 MB at this size, for
# no measurable CPU (docs/beam.md).
_COMBINE_CHARS = 1 << 19
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
    model: bytes | str,
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
        model: bytes or str. The SentencePiece model's bytes, or a path every worker can read
            (`shared_encoder`).
        started: float. `time.time()` when the run began (`stats.json`'s `seconds`).
        keep_freed_memory: bool. As `write_pretraining_data_beam`.

    Returns:
        `(summary, counters)`: `counters` maps each of the workers' counters (`read_cpu_ms`,
        `make_cpu_ms`, `write_cpu_ms`, `sentencepiece_loads`) to its total over the workers;
        None on a runner that reports no metrics (the DaskRunner).
    """
    pipeline = beam.Pipeline(options=options)
    remove_stale_spill_folders(output_dir)  # a killed run's; this run holds the folder's lock
    spilled = spill_folder(output_dir)
    measured, pieces = _read_pieces(pipeline, patterns, recorded, spilled)
    maker = _MakeShard(config, model, recorded, output_dir, keep_freed_memory)
    _ = (
        pieces
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
    result = None
    try:
        result = pipeline.run()
        result.wait_until_finish()
    finally:
        remove_spill_folder(spilled)
        # The DaskRunner's client (and the local cluster it started without
        # --dask_client_address) outlives the run unless closed; a scheduler given by address
        # keeps running.
        client = getattr(result, "client", None)
        if client is not None:
            client.close()
    try:
        queried = result.metrics().query(MetricsFilter().with_namespace(_METRICS))["counters"]
        counters = {c.key.metric.name: c.committed for c in queried}
    except NotImplementedError:  # the DaskRunner's result collects no metrics (Beam 2.77)
        counters = None
    summary = json.loads(filesystems.read_bytes(FileSystems.join(output_dir, "stats.json")))
    return summary, counters


def _read_pieces(pipeline, patterns: list[str], recorded: dict, spilled: str):
    """Steps 1-4: every file's measure `[(path, [document sizes], ReadStats dict)]` (one
    element), and the input's pieces `(shard, (group index, path, location))`: where the
    documents of one group in one file were spilled, in the folder `spilled`."""
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
        | "Read"
        >> beam.ParDo(_ReadPieces(*read_file, group_chars, recorded["num_shards"], spilled))
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
    model: bytes | str, lower_case: bool | None, model_sha256: str
) -> tuple[SentencePieceEncoder, bool]:
    """This process's encoder of a model: loaded by the first caller, shared by every later one
    (DoFn instances and threads alike; SentencePiece encodes from several threads at once).

    Args:
        model: bytes or str. The model's bytes, or its path (local or remote) to read them from.
        lower_case: bool or None. As `SentencePieceEncoder`.
        model_sha256: str. The model's sha256: the key, and checked against a model read from
            its path (the file may have changed since the driver read it).

    Returns:
        `(encoder, loaded)`: `loaded` is True for the call that loaded the model.

    Example:
    >>> digest = SentencePieceEncoder("spm.model").model_sha256
    >>> first, loaded = shared_encoder("spm.model", None, digest)
    >>> second, loaded_again = shared_encoder(open("spm.model", "rb").read(), None, digest)
    >>> second is first, loaded_again
    (True, False)
    """
    with _ENCODERS_LOCK:
        if (model_sha256, lower_case) in _ENCODERS:
            return _ENCODERS[model_sha256, lower_case], False
        if isinstance(model, str):
            encoder = encoder_from_bytes(filesystems.read_bytes(model), lower_case)
            if encoder.model_sha256 != model_sha256:
                raise ValueError(
                    f"SentencePiece model {model!r} changed while the pipeline ran "
                    f"(sha256 {encoder.model_sha256}, was {model_sha256})"
                )
        else:
            encoder = encoder_from_bytes(model, lower_case)
        # Under the setting asked for and the one it resolved to (None -> the vocabulary's).
        _ENCODERS[model_sha256, lower_case] = _ENCODERS[model_sha256, encoder.lower_case] = encoder
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
    """(path, group state at its start) -> (shard, (group index, path, location)) for each group
    the file's documents fall in: its documents in this file, spilled (`spill_pieces`)."""

    def __init__(self, input_format, paragraphs_per_document, group_chars, num_shards, spilled):
        self.input_format = input_format
        self.paragraphs_per_document = paragraphs_per_document
        self.group_chars = group_chars
        self.num_shards = num_shards
        self.spilled = spilled
        self.cpu_ms = Metrics.counter(_METRICS, "read_cpu_ms")

    def process(self, element):
        path, (index, size) = element
        start = time.thread_time()
        located = spill_pieces(
            self.spilled, self._pieces(path, GroupCutter(self.group_chars, index, size))
        )
        self.cpu_ms.inc(round((time.thread_time() - start) * 1000))
        for group, location in located:
            yield group % self.num_shards, (group, path, location)

    def _pieces(self, path: str, cutter: GroupCutter) -> Iterator[tuple[int, list[list[str]]]]:
        """`(group index, its documents in this file)`, a group at a time."""
        documents = iter_file_documents(
            path, self.input_format, paragraphs_per_document=self.paragraphs_per_document
        )
        group, piece = cutter.index, []
        for document in documents:
            document_group = cutter.add(document_chars(document))
            if document_group != group:
                yield group, piece
                group, piece = document_group, []
            piece.append(document)
        if piece:
            yield group, piece


class _MakeShard(beam.DoFn):
    """(shard, [its pieces]) -> the shard file, its groups in order; yields `([shard], its
    PretrainingStats dict)` (the form `_merge_made_stats` merges)."""

    def __init__(self, config, model, recorded, output_dir, keep_freed_memory=False):
        self.config = config
        self.model = model
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
        self.encoder, loaded = shared_encoder(self.model, self.lower_case, self.model_sha256)
        self.loaded = loaded  # counted in process: a counter counts only inside a bundle

    def process(self, element):
        if self.loaded:
            self.loads.inc()
            self.loaded = False
        shard, pieces = element
        stats = PretrainingStats()
        with _ShardFile(self.output_dir, shard_name(shard, self.num_shards)) as f:
            for chunks in self._made(_groups(pieces), stats):
                start = time.thread_time()
                for chunk in chunks:
                    f.write(chunk)
                self.write_cpu_ms.inc(round((time.thread_time() - start) * 1000))
        yield [shard], stats.to_dict()

    def _made(self, groups, stats):
        """Yields the records of `groups` (in order) a batch of about `_COMBINE_CHARS` at a time,
        as lists of TFRecord chunks."""
        pending, pending_chars = [], 0
        for group in chain(groups, [None]):
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


class _ShardFile:
    """Writes `output_dir/name` under a hidden temporary name, renamed once complete: a retried
    or concurrent attempt writes the same bytes, and the last rename wins."""

    def __init__(self, output_dir: str, name: str):
        self.path = FileSystems.join(output_dir, name)
        self.temporary = FileSystems.join(output_dir, f".{name}.beam-{os.getpid()}.partial")

    def __enter__(self):
        self.file = FileSystems.create(self.temporary, mime_type="application/octet-stream")
        return self.file

    def __exit__(self, error_type, *_):
        self.file.close()
        if error_type is None:
            if FileSystems.exists(self.path):
                FileSystems.delete([self.path])
            FileSystems.rename([self.temporary], [self.path])


def _groups(pieces: Iterable) -> Iterator[tuple[int, list[list[str]]]]:
    """A shard's pieces -> its groups, in input order: `(group index, documents)`, a group's
    files in path order. Read back from the spill files one group at a time."""
    group, documents = None, []
    for index, _, location in sorted(pieces, key=lambda p: (p[0], p[1])):
        if index != group and documents:
            yield group, documents
            documents = []
        group = index
        documents += read_piece(location)
    if documents:
        yield group, documents


def _merge_made_stats(values: Iterable[tuple[list[int], dict]]) -> tuple[list[int], dict]:
    """`(shards, stats dict)` of several shards -> of all of them."""
    shards, total = [], PretrainingStats()
    for value_shards, value in values:
        shards += value_shards
        total.merge(PretrainingStats.from_dict(value))
    return sorted(shards), total.to_dict()


def _write_stats(made, measured, *, recorded, output_dir, started):
    """Writes the shards no group went to (empty, as locally), then `stats.json`."""
    num_shards = recorded["num_shards"]
    names = [shard_name(s, num_shards) for s in range(num_shards)]
    for shard in sorted(set(range(num_shards)) - set(made[0])):
        with _ShardFile(output_dir, names[shard]):
            pass
    read_stats = ReadStats()
    for _, _, file_stats in measured:
        read_stats.merge(ReadStats.from_dict(file_stats))
    files = sorted(path for path, _, _ in measured)
    made_stats = PretrainingStats.from_dict(made[1])
    summary = summarize(recorded, files, read_stats, made_stats, names)
    summary["seconds"] = round(time.time() - started, 3)
    summary["cpu_seconds"] = None  # spread over the runner's workers
    with _ShardFile(output_dir, "stats.json") as f:
        f.write(json.dumps(summary, indent=1).encode())
