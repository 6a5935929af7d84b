"""The writer's `stats.json` beside record shards: the shards its run made and their records.

Where a folder holds a `stats.json` of `pipelines.pretraining_data` (or the Beam writer), it is
the run's own account of what it wrote, so the readers hold the shards to it:

- a glob match it does not list (`pretraining-00000-of-00002.tfrecord.bak`, a shard of another
  run copied in) is left out, named in one printed line, rather than refused: the folder is
  the writer's and the listed shards are whole, so the run can go on, and nothing is silent;
- a listed shard the glob would match but that is gone is refused (half the data missing);
- when every listed shard is read, their records must add up to the `examples` it recorded:
  an empty (0 bytes) or short shard is refused, named;
- shards of another record format version than this code's are refused, naming both versions
  (`record_format.check_version`; a `stats.json` without a version is version 1).

A glob that picks some of the listed shards (`pretraining-0000[0-7]-*` for training, the rest
held out) reads those; their count cannot be checked (the stats hold the total only).

TensorFlow is imported inside the functions (`gs://` paths go through `tf.io.gfile`).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable, Sequence

from albert_keras_contracts import record_format

STATS_FILE = "stats.json"


def read_writer_stats(folder: str, flag: str = "file_pattern") -> dict | None:
    """The writer's `stats.json` in `folder`, or None when there is none (or it is not one).

    Args:
        folder: str. A folder of record shards (`gs://` works).
        flag: str. How the error names the input.

    Raises:
        ValueError: a `stats.json` that is not JSON, or that records another record format
            version (`record_format.check_version`).

    Example:
    >>> read_writer_stats("records")["shards"]
    ['pretraining-00000-of-00002.tfrecord', 'pretraining-00001-of-00002.tfrecord']
    """
    import tensorflow as tf

    path = _join(folder, STATS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    try:
        with tf.io.gfile.GFile(path, "r") as f:
            stats = json.load(f)
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"{flag}: {path} is not valid JSON ({error}); fix or remove it") from None
    if not isinstance(stats, dict) or not isinstance(stats.get("shards"), list):
        return None  # some other stats.json: it says nothing about the shards
    record_format.check_version(stats, f"{flag}: {path}")
    return stats


def stats_path(folder: str) -> str:
    """The path of `folder`'s `stats.json` (for messages)."""
    return _join(folder, STATS_FILE)


def listed_shards(pattern: str, shards: Sequence[str], flag: str, unlisted: list[str]) -> list:
    """The glob matches of `pattern` that the writer's stats beside them list.

    Args:
        pattern: str. The glob that matched `shards` (a listed shard it would match must exist).
        shards: list of str. Its matches that are record files.
        flag: str. How errors name the input.
        unlisted: list. Gets the paths left out (matches the stats do not list).

    Raises:
        FileNotFoundError: a shard the stats list, that `pattern` would match, is missing.
    """
    kept = []
    for folder, matches in _by_folder(shards).items():
        stats = read_writer_stats(folder, flag)
        if stats is None:
            kept.extend(matches)
            continue
        listed = set(stats["shards"])
        names = {os.path.basename(path) for path in matches}
        for name in sorted(listed - names):
            if fnmatch.fnmatchcase(_join(folder, name), pattern) or fnmatch.fnmatchcase(
                name, os.path.basename(pattern)
            ):
                raise FileNotFoundError(
                    f"{flag}: {_join(folder, name)} is missing, but {stats_path(folder)} lists it "
                    f"among the {len(listed)} shards its run wrote"
                )
        for path in matches:
            (kept if os.path.basename(path) in listed else unlisted).append(path)
    return kept


def check_counts(counts: dict[str, int], flag: str) -> None:
    """Refuses shards whose records do not add up to what their writer's stats recorded.

    Args:
        counts: dict. Records per shard path (`pipelines.record_files.count_records`).
        flag: str. How the error names the input.

    Raises:
        ValueError: naming the folder, the stats and any empty shard.
    """
    for folder, paths in _by_folder(counts).items():
        stats = read_writer_stats(folder, flag)
        if stats is None or "examples" not in stats:
            continue
        here = {os.path.basename(path): counts[path] for path in paths}
        if not set(stats["shards"]) <= set(here):
            continue  # some of the shards: their share of the total is not known
        total = sum(here[name] for name in stats["shards"])
        if total != stats["examples"]:
            empty = [name for name in stats["shards"] if here[name] == 0]
            which = f": {', '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty" * bool(empty)
            raise ValueError(
                f"{flag}: the {len(stats['shards'])} shards in {folder} hold {total:,} records, "
                f"but {stats_path(folder)} says its run wrote {stats['examples']:,}{which}; "
                "write them again"
            )


def check_empty_shards(files: Sequence[str], flag: str, count: Callable) -> None:
    """Counts (with `count`, which checks the totals) the shards of a folder whose writer's
    stats list an empty one: cheap (a `stat` per file) unless a listed shard is empty."""
    import tensorflow as tf

    for folder, paths in _by_folder(files).items():
        stats = read_writer_stats(folder, flag)
        if stats is None or not stats.get("examples"):
            continue
        listed = set(stats["shards"])
        if any(os.path.basename(p) in listed and tf.io.gfile.stat(p).length == 0 for p in paths):
            count(paths, flag)


def recorded_vocabulary_size(files: Sequence[str], flag: str = "file_pattern") -> int | None:
    """The vocabulary size the writer's stats beside `files` record (None where a folder has
    none, or they disagree).

    Example:
    >>> recorded_vocabulary_size(["records/pretraining-00000-of-00002.tfrecord"])
    50
    """
    sizes = set()
    for folder in _by_folder(files):
        stats = read_writer_stats(folder, flag)
        sizes.add(None if stats is None else stats.get("vocabulary_size"))
    return sizes.pop() if len(sizes) == 1 else None


def _by_folder(paths) -> dict[str, list[str]]:
    folders: dict[str, list[str]] = {}
    for path in paths:
        folders.setdefault(os.path.dirname(path), []).append(path)
    return folders


def _join(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}" if "://" in folder else os.path.join(folder, name)
