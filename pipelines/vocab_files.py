"""Writes a trained vocabulary's files: `PREFIX.model`, `PREFIX.vocab`, `PREFIX.summary.json`.

Each file is written under a temporary name first, then renamed (`atomic_write`), so a crash
never leaves a half-written file under the final name, and a failed write (a full disk, no
permission) is an OSError naming the final file, not the temporary one. The folder is made when
missing, and removed again when the write fails.
"""

from __future__ import annotations

import contextlib
import os

from albert_keras_contracts import atomic_write


def write_vocab_files(output_prefix: str, model) -> None:
    """`PREFIX.model` and `PREFIX.vocab` of the SentencePiece `ModelProto` `model`, its folder
    and missing parents made first (and removed again, empty, when the write fails)."""
    made = _make_folders(os.path.dirname(os.path.abspath(output_prefix)))
    try:
        _write_outputs(output_prefix, model)
    except BaseException:
        _remove_if_empty(made)  # a full disk, Ctrl-C: no empty folder of ours is left
        raise


def write_json_atomically(path: str, data: dict) -> None:
    """Writes `data` to `path` as JSON, atomically (the summary)."""
    try:
        atomic_write.write_json(path, data, indent=1, ensure_ascii=False)
    except OSError as error:  # named by its final name, not the temporary one
        raise OSError(error.errno, error.strerror, path) from None


def _write_outputs(output_prefix: str, model) -> None:
    """`PREFIX.model` and `PREFIX.vocab` (SentencePiece's layout: piece, tab, score), both
    under temporary names first and renamed together; an OSError names the final file."""
    model_path, vocab_path = f"{output_prefix}.model", f"{output_prefix}.vocab"
    # `{score:g}` is C++'s `ostream << float` (6 significant digits), as spm_train writes it.
    vocab = "".join(f"{piece.piece}\t{piece.score:g}\n" for piece in model.pieces)
    try:
        with (
            atomic_write.atomic_path(model_path) as temporary_model,
            atomic_write.atomic_path(vocab_path) as temporary_vocab,
        ):
            _write_file(temporary_model, model_path, model.SerializeToString())
            _write_file(temporary_vocab, vocab_path, vocab.encode("utf-8"))
    except OSError as error:
        if error.filename not in (model_path, vocab_path):  # a rename, or the folder
            raise OSError(error.errno, error.strerror, model_path) from None
        raise


def _make_folders(folder: str) -> list[str]:
    """Makes `folder` and its missing parents; returns those made, the outermost first
    (`os.makedirs` does not say which it made)."""
    missing = []
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    missing.reverse()
    for path in missing:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path)
    return missing


def _remove_if_empty(folders: list[str]) -> None:
    """Removes `folders` (as `_make_folders` returned them) that are empty, innermost first."""
    for path in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _write_file(temporary: str, final: str, data: bytes) -> None:
    try:
        with open(temporary, "wb") as file:
            file.write(data)
    except OSError as error:  # a failed write() names no file: name the one we make
        raise OSError(error.errno, error.strerror, final) from None
