"""TFRecord shards of `tf.train.Example`s, written without TensorFlow, resumable after a crash.

`serialize_examples` encodes a batch of fixed-length features as `tf.train.Example` protos by
hand: the wire format of Example -> Features -> map<string, Feature> -> Int64List/FloatList is
small and fixed, varints are computed for the whole batch with NumPy, and it keeps TensorFlow (and
its seconds of start-up and hundreds of MB) out of the writer processes. Tests parse the output
with `tf.io.parse_single_example`.

`ShardWriter` appends framed records to `.albert_progress/NAME.partial`, records progress in
`.albert_progress/NAME.progress.json` at checkpoints (after an fsync), and renames the file to
NAME when it is finished: a file under its final name is always complete, and a crashed one
resumes from its last checkpoint. The bookkeeping lives in that hidden subfolder so that the
shard folder holds shards and `stats.json` only (`dir/*.tfrecord*` matches shards alone).
"""

from __future__ import annotations

import functools
import json
import os
import struct
from itertools import chain

import numpy as np

from albert_keras_contracts import atomic_write

try:
    import google_crc32c
except ImportError:  # pragma: no cover - the NumPy fallback below is tested directly
    google_crc32c = None

_KIND_TAGS = {"float": b"\x12", "int": b"\x1a"}  # Feature.float_list = 2, Feature.int64_list = 3
_CRC_MASK_DELTA = 0xA282EAD8  # TFRecord's masked CRC-32C
BOOKKEEPING_DIR = ".albert_progress"


def serialize_examples(features: dict[str, np.ndarray]) -> list[bytes]:
    """Serializes a batch as `tf.train.Example` protos, one per row.

    Args:
        features: dict of name -> array (N, L). Float arrays become a `FloatList` (float32),
            integer arrays an `Int64List` (values must be >= 0).

    Returns:
        N serialized `tf.train.Example`s, features in the dict's order.

    Example:
    >>> records = serialize_examples({"input_ids": np.array([[2, 57, 3]])})
    >>> feature = {"input_ids": tf.io.FixedLenFeature([3], tf.int64)}
    >>> parsed = tf.io.parse_single_example(records[0], feature)
    >>> parsed["input_ids"].numpy().tolist()
    [2, 57, 3]
    """
    num_rows = len(next(iter(features.values())))
    columns = []  # each a list of num_rows bytes; an example is one of each, joined
    fixed = []  # consecutive fixed-width features, as one (num_rows, width) uint8 block
    body_length = np.zeros(num_rows, np.int64)
    for name, values in features.items():
        values = np.asarray(values)
        if values.ndim != 2 or len(values) != num_rows:
            raise ValueError(f"feature {name!r} has shape {values.shape}; expected ({num_rows}, L)")
        if values.dtype.kind == "f":
            payload = np.ascontiguousarray(values, dtype="<f4").tobytes()
            lengths = np.full(num_rows, 4 * values.shape[1])
            kind = "float"
        else:
            if values.size and values.min() < 0:
                raise ValueError(f"feature {name!r} holds negative values")
            payload, lengths = _varints(values)
            kind = "int"
        if num_rows and lengths.min() == lengths.max():
            # Same bytes count in every row: header and values go in by NumPy, not per row.
            header = np.frombuffer(_feature_header(name, kind, int(lengths[0])), np.uint8)
            rows = np.frombuffer(payload, np.uint8).reshape(num_rows, -1)
            fixed += [np.broadcast_to(header, (num_rows, header.size)), rows]
            body_length += header.size + rows.shape[1]
            continue
        if fixed:
            columns.append(_split_rows(np.concatenate(fixed, axis=1)))
            fixed = []
        # set() rather than np.unique: the same, and np.unique imports numpy.ma on first use.
        headers = {n: _feature_header(name, kind, n) for n in set(lengths.tolist())}
        columns.append([headers[n] for n in lengths.tolist()])
        body_length += np.fromiter(map(len, columns[-1]), np.int64, num_rows) + lengths
        ends = np.cumsum(lengths).tolist()
        columns.append([payload[a:b] for a, b in zip([0] + ends[:-1], ends)])
    if fixed:
        columns.append(_split_rows(np.concatenate(fixed, axis=1)))
    # Example.features = 1, a length-delimited field.
    prefixes = {n: b"\x0a" + _varint(n) for n in set(body_length.tolist())}
    columns.insert(0, [prefixes[n] for n in body_length.tolist()])
    return [b"".join(parts) for parts in zip(*columns)]


def frame_records(records: list[bytes]) -> bytes:
    """TFRecord framing: length, masked CRC of the length, data, masked CRC of the data."""
    lengths = [len(r) for r in records]
    heads = {n: _frame_head(n) for n in set(lengths)}
    crcs = np.array(_masked_crcs(records), np.uint32).astype("<u4").tobytes()
    tails = [crcs[i : i + 4] for i in range(0, len(crcs), 4)]
    return b"".join(chain.from_iterable(zip([heads[n] for n in lengths], records, tails)))


@functools.lru_cache(maxsize=1 << 16)
def _frame_head(length: int) -> bytes:
    """A record's length and its masked CRC (cached: a few hundred lengths recur all run long)."""
    packed = struct.pack("<Q", length)
    return packed + struct.pack("<I", _masked_crcs([packed])[0])


def _split_rows(block: np.ndarray) -> list[bytes]:
    data, width = block.tobytes(), block.shape[1]
    return [data[i : i + width] for i in range(0, len(data), width)]


def bookkeeping_dir(output_dir: str) -> str:
    """The hidden subfolder of `output_dir` holding partial shards and progress records."""
    return os.path.join(output_dir, BOOKKEEPING_DIR)


def partial_path(path: str) -> str:
    """Where `ShardWriter` writes `path` until it is finished."""
    folder, name = os.path.split(path)
    return os.path.join(bookkeeping_dir(folder), f"{name}.partial")


def progress_path(path: str) -> str:
    """The progress record of shard `path` (JSON), kept after the shard is finished."""
    folder, name = os.path.split(path)
    return os.path.join(bookkeeping_dir(folder), f"{name}.progress.json")


def read_progress(path: str) -> dict | None:
    """The last progress `ShardWriter` recorded for shard `path`, or None."""
    folder, name = os.path.split(path)
    # Before the subfolder, progress sat beside the shard as `.NAME.progress.json`.
    for candidate in (progress_path(path), os.path.join(folder, f".{name}.progress.json")):
        try:
            with open(candidate) as f:
                return json.load(f)
        except (OSError, ValueError):
            continue
    return None


def masked_crc(data: bytes) -> int:
    """TFRecord's masked CRC-32C of `data` (what frames a record's length and its data)."""
    return _masked_crcs([data])[0]


class ShardWriter:
    """Appends TFRecord data to one shard; resumable, renamed to its final name when finished.

    Args:
        path: str. The shard's final path.
        resume_bytes: int. Keep this many bytes of an existing partial file (a checkpoint's
            `bytes`) and append after them; 0 starts afresh.

    Example:
    >>> os.makedirs("out")
    >>> writer = ShardWriter("out/pretraining-00000-of-00001.tfrecord")
    >>> writer.write(frame_records(serialize_examples({"input_ids": np.array([[2, 7, 3]] * 2)})))
    >>> writer.finish({"examples": 2})
    >>> sum(1 for _ in tf.data.TFRecordDataset("out/pretraining-00000-of-00001.tfrecord"))
    2
    """

    def __init__(self, path: str, resume_bytes: int = 0):
        self.path = path
        self._partial = partial_path(path)
        os.makedirs(os.path.dirname(self._partial), exist_ok=True)
        # The file stays open across calls (the writer's whole life), hence no `with`.
        if resume_bytes:
            self._file = open(self._partial, "r+b")  # noqa: SIM115
            self._file.truncate(resume_bytes)
            self._file.seek(resume_bytes)
        else:
            self._file = open(self._partial, "wb")  # noqa: SIM115

    def write(self, data: bytes) -> None:
        self._file.write(data)

    def checkpoint(self, state: dict) -> None:
        """Makes the data so far durable, then records `state` (plus `bytes`) as progress."""
        self._file.flush()
        os.fsync(self._file.fileno())
        _write_json(progress_path(self.path), {**state, "bytes": self._file.tell()})

    def finish(self, state: dict) -> None:
        """Checkpoints with `complete: true`, closes, and renames the shard to its final name."""
        self.checkpoint({**state, "complete": True})
        self._file.close()
        os.replace(self._partial, self.path)

    def close(self) -> None:
        """Closes without finishing (the partial file stays for a later resume)."""
        self._file.close()


def _write_json(path: str, value: dict) -> None:
    atomic_write.write_json(path, value, indent=None)


@functools.lru_cache(maxsize=1 << 16)
def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@functools.lru_cache(maxsize=1 << 16)
def _feature_header(name: str, kind: str, payload_length: int) -> bytes:
    """Everything of one `features` map entry that precedes its packed values."""
    key = name.encode()
    value_list = 1 + len(_varint(payload_length)) + payload_length  # the packed field 1
    feature = 1 + len(_varint(value_list)) + value_list
    entry = 1 + len(_varint(len(key))) + len(key) + 1 + len(_varint(feature)) + feature
    return b"".join(
        (
            b"\x0a" + _varint(entry),  # Features.feature (map entry) = 1
            b"\x0a" + _varint(len(key)) + key,  # entry key = 1
            b"\x12" + _varint(feature),  # entry value = 2
            _KIND_TAGS[kind] + _varint(value_list),
            b"\x0a" + _varint(payload_length),  # Int64List/FloatList.value = 1, packed
        )
    )


def _varints(values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Base-128 varints of every value, row after row; returns (bytes, bytes per row)."""
    largest = int(values.max(initial=0))
    if largest < 0x80:
        # 0/1 masks, labels, positions below 128: one byte each, the common case.
        return values.astype(np.uint8).tobytes(), np.full(len(values), values.shape[1])
    flat = values.astype(np.uint32 if largest < 1 << 32 else np.uint64).ravel()
    num_groups = (largest.bit_length() + 6) // 7
    # Every value's `num_groups` candidate bytes side by side, then the ones it needs kept by
    # one boolean selection (row-major, so values stay in order): no scatter, no cumsum.
    candidates = np.empty((flat.size, num_groups), np.uint8)
    keep = np.empty((flat.size, num_groups), bool)
    keep[:, 0] = True
    for k in range(num_groups):
        # 7 bits, plus the top bit when more bytes follow.
        low = ((flat >> (7 * k)) & 0x7F).astype(np.uint8)
        if k + 1 < num_groups:
            more = flat >= (1 << (7 * (k + 1)))
            keep[:, k + 1] = more
            low |= more.view(np.uint8) << 7
        candidates[:, k] = low
    sizes = keep.reshape(len(values), -1).sum(axis=1)
    # `np.compress` on the flat arrays: the same selection as `candidates[keep]`, and faster.
    return np.compress(keep.reshape(-1), candidates.reshape(-1)).tobytes(), sizes


def _masked_crcs(chunks: list[bytes]) -> list[int]:
    crcs = np.array(_crc32c(chunks), np.uint64)
    return ((((crcs >> 15) | (crcs << 17)) + _CRC_MASK_DELTA) & 0xFFFFFFFF).tolist()


def _crc32c(chunks: list[bytes]) -> list[int]:
    if google_crc32c is not None:
        return [google_crc32c.value(c) for c in chunks]
    return crc32c_numpy(chunks)


def crc32c_numpy(chunks: list[bytes]) -> list[int]:
    """CRC-32C (Castagnoli) of each chunk, in NumPy: the fallback when google-crc32c is absent.

    Hand-written because the standard library has only zlib's CRC-32; it steps through byte
    positions for all chunks at once, longest first, so it costs a few microseconds per record.
    """
    if not chunks:
        return []
    table = _crc32c_table()
    lengths = np.array([len(c) for c in chunks])
    order = np.argsort(-lengths, kind="stable")
    sorted_lengths = lengths[order]
    width = int(sorted_lengths[0])
    grid = np.zeros((len(chunks), width), np.uint8)
    for row, index in enumerate(order):
        grid[row, : lengths[index]] = np.frombuffer(chunks[index], np.uint8)
    crc = np.full(len(chunks), 0xFFFFFFFF, np.uint32)
    active = len(chunks)
    for k in range(width):
        while active and sorted_lengths[active - 1] <= k:
            active -= 1
        part = crc[:active]
        crc[:active] = table[(part ^ grid[:active, k]) & 0xFF] ^ (part >> np.uint32(8))
    result = np.empty_like(crc)
    result[order] = crc ^ np.uint32(0xFFFFFFFF)
    return result.tolist()


def _crc32c_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> np.uint32(1)) ^ np.uint32(0x82F63B78), table >> 1)
    return table.astype(np.uint32)
