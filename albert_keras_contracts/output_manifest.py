"""An output folder's manifest, `.albert-keras.json`: its schema, and the entries it lists.

The manifest is the folder's own file, so it is input: `read_manifest` checks it against its
schema (its keys and their types, every entry of `files` one plain name inside the folder, every
temporary token one albert-keras draws) before anything is done with it. `remove_entry` removes
one listed entry (`--overwrite`) without following a link; `holds_a_file` tells a claimed entry
that holds work from one that does not; `first_difference` names the first argument a run
changed. `OutputFolder` (`albert_keras_contracts.output_folder`) writes the manifest and applies
the rule.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping

from albert_keras_contracts.output_checks import MANIFEST, OutputFolderError


def is_own_name(name: str) -> bool:
    """Names that never count as a user's files: the manifest and locks (`.albert-keras*.lock`,
    several when a command locks per task). Not temporaries: in a folder without a manifest no
    run's token is known, so a name like `.notes.tmp-123.txt` is a user's."""
    return name == MANIFEST or _is_lock_name(name)


def _is_lock_name(name: str) -> bool:
    return name.startswith(".albert-keras") and name.endswith(".lock")


# The manifest's keys and their types, checked before anything is done with it. `created` may
# be null in a manifest that an earlier version wrote when it adopted a pre-manifest run.
_REQUIRED = {
    "command": (str,),
    "arguments": (dict,),
    "inputs": (dict,),
    "created": (str, type(None)),
    "files": (list,),
}
_OPTIONAL = {"updated": (str, type(None)), "temporary_tokens": (list,)}
_TOKEN = re.compile(r"[0-9a-f]{16}")
# Tokens kept in a manifest: the runs whose killed temporaries may still lie in the folder.
TOKENS_KEPT = 32


def _manifest_problem(data) -> str | None:
    """What makes `data` (a parsed manifest) not one of ours, or None."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    for key, types in {**_REQUIRED, **_OPTIONAL}.items():
        if key not in data:
            if key in _REQUIRED:
                return f"no {key!r}"
            continue
        if not isinstance(data[key], types):
            return f"{key!r} is a JSON {type(data[key]).__name__}"
    if not data["command"]:
        return "an empty 'command'"
    for name in data["files"]:
        problem = _entry_problem(name)
        if problem:
            return problem
    for token in data.get("temporary_tokens", []):
        if not isinstance(token, str) or not _TOKEN.fullmatch(token):
            return f"temporary token {token!r} is not one albert-keras draws"
    return None


def _entry_problem(name) -> str | None:
    """Why `name`, an entry of a manifest's `files`, is not one plain name inside the folder
    (`claim` records top-level names only), or None. Checked before `--overwrite` removes it:
    `..`, an absolute path, `.` or "" would remove what lies outside or the whole folder."""
    if not isinstance(name, str):
        return f"entry {name!r} is not a name"
    if name in ("", ".", "..") or "/" in name or os.sep in name or "\0" in name:
        return f"entry {name!r} is not a name inside the folder"
    if name == MANIFEST or _is_lock_name(name):
        return f"entry {name!r} is the folder's own bookkeeping"
    return None


def read_manifest(folder: str) -> dict | None:
    """The manifest of `folder`, checked against its schema (`_manifest_problem`), or None
    when it has none; an `OutputFolderError` when it is not one of ours."""
    manifest = os.path.join(folder, MANIFEST)
    if not os.path.lexists(manifest):
        return None
    try:
        if not os.path.isfile(manifest) or os.path.islink(manifest):
            raise ValueError("not a regular file")
        with open(manifest, encoding="utf-8") as file:
            data = json.load(file)
        problem = _manifest_problem(data)
        if problem:
            raise ValueError(problem)
    except (OSError, ValueError) as error:
        raise OutputFolderError(
            f"{manifest}: not an albert-keras manifest ({error}): choose another folder"
        ) from None
    return data


def remove_entry(folder: str, name: str) -> None:
    """Removes the entry `name` (one plain name: `_entry_problem` passed it) of `folder`; a link
    is removed itself, never followed, and `shutil.rmtree` follows none inside a folder."""
    if _entry_problem(name):
        raise ValueError(f"{name!r} is not a name inside {folder}")
    path = os.path.join(folder, name)
    if os.path.islink(path) or not os.path.isdir(path):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def holds_a_file(folder: str, name: str) -> bool:
    """Whether the entry `name` of `folder` exists and is more than (a tree of) empty folders."""
    path = os.path.join(folder, name)
    if os.path.islink(path) or not os.path.isdir(path):
        return os.path.lexists(path)
    return any(files for _, _, files in os.walk(path))


def first_difference(before: Mapping, now: Mapping, ignore: Iterable[str]) -> str | None:
    """The first argument (by name) that differs between `before` (a manifest's) and `now`,
    as `name: before, now`, or None; the names in `ignore` are not compared."""
    for key in sorted(set(before) | set(now)):
        if key in ignore:
            continue
        if before.get(key) != now.get(key):
            return f"{key}: {before.get(key)!r} before, {now.get(key)!r} now"
    return None
