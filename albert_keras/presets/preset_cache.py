"""Downloads into the cache, checked, and converted once: what `from_preset` names resolve to.

The cache (`$ALBERT_KERAS_CACHE`, else `$KERAS_HOME/albert_keras`, else `~/.keras/albert_keras`):

    downloads/<name>/<file>          what was fetched (`keras.utils.get_file`)
    downloads/<name>/<file>.json     its URL, size and SHA-256, recorded once it converted
    presets/<name>/pretrainer.keras  our `AlbertPretrainer`, converted once
    presets/<name>/<vocabulary>      the SentencePiece model found with the weights
    presets/<name>/preset.json       where it came from and what the conversion said

A converted preset is used without touching the network or the downloads. A download is
trusted only once a conversion of it succeeded and its size and SHA-256 were recorded; a
later use checks both (`get_file` fetches it again on a mismatch), and a download with no
record (an interrupted earlier run) is fetched again. A download that does not convert is
deleted, never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import shutil
import tempfile

import keras

PRETRAINER_FILE = "pretrainer.keras"
PRESET_RECORD = "preset.json"


class PresetFetchError(ValueError):
    """A preset's files could not be fetched (no network, missing URL, bad download); the
    message names the URL and how to use a local copy instead."""


def cache_dir() -> pathlib.Path:
    """Where presets are downloaded and converted (see the module docstring)."""
    if os.environ.get("ALBERT_KERAS_CACHE"):
        return pathlib.Path(os.environ["ALBERT_KERAS_CACHE"]).expanduser()
    keras_home = os.environ.get("KERAS_HOME") or os.path.join("~", ".keras")
    return pathlib.Path(keras_home).expanduser() / "albert_keras"


def cache_key(name: str) -> str:
    """A folder name for a preset name or handle (`hf://albert/albert-base-v2` ->
    `hf--albert--albert-base-v2`): always one plain, visible path component (never `.`, `..`
    or empty, which would name the cache itself or its parent).

    Example:
    >>> cache_key("hf://albert/albert-base-v2"), cache_key("..")[:7]
    ('hf--albert--albert-base-v2', 'preset-')
    """
    key = re.sub(r"[^A-Za-z0-9._-]+", "--", name).strip("-.")
    if not key:
        key = "preset-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return key


def converted_preset(name: str) -> pathlib.Path | None:
    """The folder of `name`'s converted preset, if a complete one is cached."""
    folder = cache_dir() / "presets" / cache_key(name)
    record_path = folder / PRESET_RECORD
    if not record_path.is_file():
        return None
    try:
        record = json.loads(record_path.read_text())
        sizes = record["sizes"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return None
    # A size check only (hashing a 900 MB xxlarge model on every load would cost seconds);
    # a mismatch converts again from the (hash-checked) downloads.
    for file_name, size in sizes.items():
        path = folder / file_name
        if not path.is_file() or path.stat().st_size != size:
            return None
    return folder


def save_converted(name: str, imported, origin: dict) -> pathlib.Path:
    """Writes an `ImportedModel` as `name`'s cached preset (a temporary folder, then a rename)."""
    presets = cache_dir() / "presets"
    presets.mkdir(parents=True, exist_ok=True)
    final = presets / cache_key(name)
    staging = pathlib.Path(tempfile.mkdtemp(dir=presets, prefix=f".{final.name}."))
    try:
        imported.pretrainer.save(staging / PRETRAINER_FILE)
        files = [PRETRAINER_FILE]
        if imported.sentencepiece is not None:
            (staging / imported.sentencepiece_name).write_bytes(imported.sentencepiece)
            files.append(imported.sentencepiece_name)
        record = {
            "name": name,
            **origin,
            "sentencepiece": imported.sentencepiece_name,
            "fresh_parts": list(imported.fresh_parts),
            "notes": list(imported.notes),
            "sizes": {f: (staging / f).stat().st_size for f in files},
        }
        (staging / PRESET_RECORD).write_text(json.dumps(record, indent=2))
        _replace_preset(staging, final)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return final


def _replace_preset(staging: pathlib.Path, final: pathlib.Path) -> None:
    """Moves `staging` to `final`; an earlier preset there is removed only when it is one this
    cache made (a folder holding its record and the files it lists, nothing else)."""
    if not (final.exists() or final.is_symlink()):
        staging.replace(final)
        return
    if not _made_here(final):
        raise ValueError(
            f"{final}: not a preset this cache converted (no {PRESET_RECORD}, or other files); "
            "move it away and run again"
        )
    old = final.with_name(f"{staging.name}.old")  # hidden, beside it: renamed, then removed
    final.replace(old)
    staging.replace(final)
    shutil.rmtree(old, ignore_errors=True)


def _made_here(folder: pathlib.Path) -> bool:
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        record = json.loads((folder / PRESET_RECORD).read_text())
        files = set(record["sizes"]) | {PRESET_RECORD}
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return False
    entries = list(folder.iterdir())
    return all(e.name in files and e.is_file() and not e.is_symlink() for e in entries)


def fetch(name: str, url: str, file_name: str, md5: str | None = None) -> pathlib.Path:
    """Downloads `url` into `downloads/<name>/<file_name>` (or reuses a checked copy).

    A copy whose size and SHA-256 were recorded (by `record_download`) is checked against
    them and fetched again on a mismatch (a truncated or altered file); a copy without a record
    is fetched again. Raises `PresetFetchError` naming the URL and how to use a local copy.
    """
    folder = cache_dir() / "downloads" / cache_key(name)
    target = folder / file_name
    record = _read_record(target)
    if target.exists() and record is None:
        target.unlink()  # left by an interrupted or failed run: never trusted
    if record is not None and target.exists() and target.stat().st_size != record["size"]:
        target.unlink()
    expected = record["sha256"] if record else md5
    folder.mkdir(parents=True, exist_ok=True)  # get_file falls back to /tmp if it is missing
    try:
        path = keras.utils.get_file(
            fname=file_name,
            origin=url,
            file_hash=expected,
            hash_algorithm="sha256" if record else "md5",
            cache_dir=str(cache_dir()),
            cache_subdir=str(pathlib.Path("downloads") / cache_key(name)),
        )
    except ValueError as error:  # get_file: the hash of a fresh download does not match
        target.unlink(missing_ok=True)
        raise PresetFetchError(
            f"{url}: the download does not match its checksum ({error}); deleted it. "
            f"Run again, or download it yourself and pass the local file instead of {name!r}"
        ) from None
    except Exception as error:  # noqa: BLE001 (get_file wraps URLError / HTTPError in Exception)
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise PresetFetchError(
            f"could not fetch {url} for preset {name!r} ({reason}); without network, "
            f"download it elsewhere and pass the local file or folder instead of {name!r}"
        ) from None
    return pathlib.Path(path)


def record_download(path: pathlib.Path, url: str) -> dict:
    """Records a download's URL, size and SHA-256 (once it converted); returns the record."""
    record = {"url": url, "size": path.stat().st_size, "sha256": sha256_of(path)}
    partial = path.with_name(f".{path.name}.json.partial")
    partial.write_text(json.dumps(record, indent=2))
    partial.replace(_record_path(path))
    return record


def forget_download(path: pathlib.Path) -> None:
    """Deletes a download and its record (it did not convert: never reused)."""
    path.unlink(missing_ok=True)
    _record_path(path).unlink(missing_ok=True)


def sha256_of(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _record_path(path: pathlib.Path) -> pathlib.Path:
    return path.with_name(f"{path.name}.json")


def _read_record(path: pathlib.Path) -> dict | None:
    try:
        record = json.loads(_record_path(path).read_text())
        return record if {"size", "sha256"} <= set(record) else None
    except (FileNotFoundError, json.JSONDecodeError, TypeError):
        return None
