"""The output folder's own files are input like any other (issue 43, security and data loss).

A manifest is checked against its schema before anything is done with it, and every name it
lists must be one plain name inside the folder, else the one-line "not an albert-keras
manifest" refusal; `--overwrite` never removes anything outside the folder, nor the folder
itself, nor follows a link out of it. Locks are opened without following links. Temporaries are
ours only when they carry a token one of our runs recorded: a user's `.notes.tmp-123.txt` is a
user's file. Each test failed on the code before this change (a traceback, a file outside the
folder deleted or overwritten, a user's file taken as ours).
"""

from __future__ import annotations

import json
import os
import threading

import pytest
from safety_folders import tree_digest

from albert_keras_contracts import atomic_write
from albert_keras_contracts.output_folder import (
    LOCK,
    MANIFEST,
    OutputFolder,
    OutputFolderError,
    check_new_file,
    live_holder,
)

COMMAND = "albert-keras pretrain"
GOOD = {"command": COMMAND, "arguments": {"seed": 1}, "inputs": {}, "created": "then",
        "updated": "then", "files": ["model.keras"]}  # fmt: skip


def _layout(tmp_path, manifest):
    """`tmp_path/outside.txt`, and `tmp_path/run` holding `manifest`, the model it lists and a
    user's unlisted file; returns the run folder."""
    (tmp_path / "outside.txt").write_text("a user's file outside the folder")
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.keras").write_text("the earlier run's model")
    (run / "notes.txt").write_text("a user's file the manifest does not list")
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (run / MANIFEST).write_text(text)
    return run


def _refused(run, match, **options):
    with pytest.raises(OutputFolderError) as error:
        OutputFolder(run, COMMAND, {"seed": 2}, **options).open()
    line = str(error.value)
    assert "\n" not in line and str(run) in line, line
    assert match in line, line
    return line


BAD_MANIFESTS = {
    "files_null": {**GOOD, "files": None},
    "files_a_string": {**GOOD, "files": "model.keras"},  # once removed letter by letter
    "arguments_a_list": {**GOOD, "arguments": ["seed", 1]},
    "no_created": {k: v for k, v in GOOD.items() if k != "created"},
    "no_inputs": {k: v for k, v in GOOD.items() if k != "inputs"},
    "command_a_number": {**GOOD, "command": 7},
    "a_list": [GOOD],
    "a_file_a_number": {**GOOD, "files": ["model.keras", 3]},
    "bad_token": {**GOOD, "temporary_tokens": ["../x"]},
    "not_json": "{half a manifest",
}


@pytest.mark.parametrize("case", sorted(BAD_MANIFESTS))
@pytest.mark.parametrize("overwrite", [False, True])
def test_a_manifest_off_its_schema_is_one_line_and_nothing_moves(case, overwrite, tmp_path):
    run = _layout(tmp_path, BAD_MANIFESTS[case])
    before = tree_digest(tmp_path)
    _refused(run, "not an albert-keras manifest", overwrite=overwrite)
    assert tree_digest(tmp_path) == before


# Entries that once removed what lies outside the folder, or the whole folder.
ESCAPING = ["..", "../outside.txt", "", ".", "sub/../..", "model.keras/..", "/tmp", MANIFEST]


@pytest.mark.parametrize("entry", ESCAPING)
def test_overwrite_never_removes_an_entry_outside_the_folder(entry, tmp_path):
    entry = str(tmp_path / "outside.txt") if entry == "/tmp" else entry
    run = _layout(tmp_path, {**GOOD, "files": ["model.keras", entry]})
    before = tree_digest(tmp_path)
    _refused(run, "not an albert-keras manifest", overwrite=True)
    assert tree_digest(tmp_path) == before


def test_overwrite_removes_a_listed_link_itself_never_what_it_points_to(tmp_path):
    run = _layout(tmp_path, {**GOOD, "files": ["model.keras", "data"]})
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "book.txt").write_text("the user's corpus")
    os.symlink(tmp_path / "corpus", run / "data")
    with OutputFolder(run, COMMAND, {"seed": 2}, overwrite=True):
        pass
    assert sorted(os.listdir(run)) == [MANIFEST, "notes.txt"]
    assert (tmp_path / "corpus" / "book.txt").read_text() == "the user's corpus"
    assert (tmp_path / "outside.txt").exists()


def test_a_lock_that_is_a_link_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("not a lock: truncated and overwritten before")
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(target, run / LOCK)
    before = tree_digest(tmp_path)
    _refused(run, "symbolic link")
    with pytest.raises(OutputFolderError, match="symbolic link"):
        live_holder(str(run))
    with pytest.raises(OutputFolderError, match="symbolic link"):
        check_new_file(run / "out.keras", overwrite=False)  # a single-file output's check
    assert tree_digest(tmp_path) == before


def test_a_lock_that_is_a_fifo_is_refused_without_hanging(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / LOCK)
    errors = []

    def open_folder():
        try:
            OutputFolder(run, COMMAND, {"seed": 1}).open()
        except OutputFolderError as error:
            errors.append(str(error))

    thread = threading.Thread(target=open_folder, daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():  # the old `open` blocks on the FIFO: unblock it before failing
        os.open(run / LOCK, os.O_WRONLY | os.O_NONBLOCK)
        thread.join(timeout=5)
        pytest.fail("opening the folder blocked on a FIFO lock")
    assert len(errors) == 1 and "not a regular file" in errors[0], errors


def test_a_users_file_named_like_a_temporary_is_a_users_file(tmp_path):
    """`.notes.tmp-123.txt` made a folder count as ours (and was then deleted as stale)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / ".notes.tmp-123.txt").write_text("a user's file")
    before = tree_digest(tmp_path)
    _refused(run, "holds files albert-keras did not write (.notes.tmp-123.txt)")
    assert tree_digest(tmp_path) == before


def test_only_a_recorded_token_makes_a_temporary_ours(tmp_path):
    run = tmp_path / "run"
    with OutputFolder(run, COMMAND, {"seed": 1}) as first:
        tokens = first.temporary_tokens
        ours = os.path.basename(atomic_write.temporary_path(run / "model.keras"))
    assert tokens == (atomic_write.process_token(),)
    assert json.loads((run / MANIFEST).read_text())["temporary_tokens"] == list(tokens)
    assert atomic_write.temporary_writer(ours, tokens) == os.getpid()
    for lookalike in (".model.tmp-123.keras", ".model.tmp-123-0123456789abcdef.keras"):
        assert atomic_write.temporary_writer(lookalike, tokens) is None
    # A resume keeps the earlier runs' tokens (their killed temporaries are still ours).
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["temporary_tokens"] = ["0123456789abcdef"]
    (run / MANIFEST).write_text(json.dumps(manifest))
    with OutputFolder(run, COMMAND, {"seed": 1}) as again:
        assert again.resumed
        assert again.temporary_tokens == ("0123456789abcdef", atomic_write.process_token())
