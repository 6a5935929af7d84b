"""The data writer's output folder: whose it is, with which arguments, and one run at a time.

Both drivers of the writer (`pipelines.pretraining_data`, locally or with `--runner`) open their
`--output_dir` through `albert_keras_contracts.output_folder.OutputFolder` as one command,
`python -m pipelines.pretraining_data`. Its arguments are what decides the shards' bytes (the
settings `stats.json` records, the input files, the vocabulary's SHA-256), the number of tasks,
and the runner (a Beam run and a local one lay the folder out differently). A rerun with equal
arguments resumes, as it always did; other arguments are refused unless `--overwrite`.

A folder the writer filled before it kept a manifest (its `.albert_progress/` bookkeeping,
only the shards and statistics of this layout, every progress record made with this run's
settings and inputs) is adopted as its own, so that such a run still resumes.

Each task of a multi-machine run (`--num_tasks`) holds its own lock, so tasks sharing one folder
run at once while two runs of the same task are refused; every task claims every entry of the
folder, so the manifest lists them all whichever task wrote it last.
"""

from __future__ import annotations

import hashlib
import json
import os

from albert_keras_contracts import atomic_write
from albert_keras_contracts.output_folder import LOCK, MANIFEST, OutputFolder, check_apart
from pipelines import filesystems
from pipelines.record_writer import BOOKKEEPING_DIR

COMMAND = "python -m pipelines.pretraining_data"


def writer_folder(
    output_dir: str,
    settings: dict,
    files: list[str],
    spm_model: str,
    *,
    num_tasks: int = 1,
    task_index: int = 0,
    runner: str | None = None,
    overwrite: bool = False,
    fingerprint: str | None = None,
) -> OutputFolder:
    """Opens `output_dir` for the writer (checks, lock, manifest) and claims its entries.

    Args:
        output_dir: str. The shard folder (a remote one is neither checked nor locked).
        settings: dict. `writer_settings.recorded_settings(...)`.
        files: list of str. The input files (or, where they are listed on workers, patterns).
        spm_model: str. The SentencePiece model: its bytes' hash is an argument.
        num_tasks, task_index: int. This machine's share of a multi-machine run.
        runner: str or None. The Beam runner, None for the local writer.
        overwrite: bool. Replace an earlier run's files made with other arguments.
        fingerprint: str or None. The local writer's hash of settings and inputs: a folder an
            earlier writer left without a manifest, whose progress records all carry it, is
            adopted.

    Returns:
        The opened `OutputFolder`: the caller closes it.

    Example:
    >>> import tempfile
    >>> folder = writer_folder(tempfile.mkdtemp(), {"num_shards": 2}, [], "spm.model")
    >>> folder.close()
    >>> folder.owns("pretraining-00001-of-00002.tfrecord"), folder.owns("stats.json")
    (True, True)
    """
    # Never over what it reads: the shard folder is no input, holds none, lies in none.
    check_apart("--output_dir", output_dir, {"--input": files, "--spm_model": spm_model})
    arguments = {
        **settings,
        "num_tasks": num_tasks,
        "runner": runner,
        "input_files": describe_files(files),
        "vocabulary_sha256": hashlib.sha256(filesystems.read_bytes(spm_model)).hexdigest(),
    }
    lock = (
        LOCK if num_tasks == 1 else f".albert-keras.task-{task_index:05d}-of-{num_tasks:05d}.lock"
    )
    entries = folder_entries(settings["num_shards"], num_tasks, bookkeeping=runner is None)
    if fingerprint is not None:
        _adopt_earlier_layout(output_dir, entries, arguments, fingerprint)
    folder = OutputFolder(
        output_dir,
        COMMAND,
        arguments,
        inputs={"input": files, "spm_model": spm_model},
        overwrite=overwrite,
        lock_name=lock,
    ).open()
    for name in entries:
        folder.claim(name)
    return folder


def _adopt_earlier_layout(output_dir, entries: list[str], arguments: dict, fingerprint: str):
    """Writes a manifest into a folder of this layout that an earlier writer made without one,
    with these settings and inputs."""
    if filesystems.is_remote(output_dir) or not os.path.isdir(output_dir):
        return
    names = set(os.listdir(output_dir))
    if MANIFEST in names or BOOKKEEPING_DIR not in names or not names <= set(entries):
        return
    bookkeeping = os.path.join(output_dir, BOOKKEEPING_DIR)
    records = [n for n in os.listdir(bookkeeping) if n.endswith(".progress.json")]
    for name in records:
        try:
            with open(os.path.join(bookkeeping, name), encoding="utf-8") as file:
                if json.load(file).get("fingerprint") != fingerprint:
                    return
        except (OSError, ValueError):
            return
    if not records:
        return
    manifest = {"command": COMMAND, "arguments": arguments, "inputs": {}, "files": sorted(names)}
    manifest["created"] = manifest["updated"] = "before manifests (adopted)"
    atomic_write.write_json(os.path.join(output_dir, MANIFEST), manifest)


def shard_name(shard: int, num_shards: int) -> str:
    """The file name of shard `shard` of `num_shards`."""
    return f"pretraining-{shard:05d}-of-{num_shards:05d}.tfrecord"


def folder_entries(num_shards: int, num_tasks: int = 1, *, bookkeeping: bool = True) -> list[str]:
    """Every entry a writer run may make in its folder (all tasks together)."""
    entries = [shard_name(s, num_shards) for s in range(num_shards)] + ["stats.json"]
    if num_tasks > 1:
        entries += [f"stats-task-{t:05d}-of-{num_tasks:05d}.json" for t in range(num_tasks)]
    return entries + ([BOOKKEEPING_DIR] if bookkeeping else [])


def describe_files(files: list[str]) -> str:
    """`"N files, sha256 H"` of the absolute paths: short enough for a one-line refusal."""
    paths = sorted(p if filesystems.is_remote(p) else os.path.abspath(p) for p in files)
    digest = hashlib.sha256("\n".join(paths).encode()).hexdigest()[:16]
    return f"{len(paths)} file{'s' if len(paths) != 1 else ''}, sha256 {digest}"
