"""Which SentencePiece vocabulary made something, and a one-line refusal when two disagree.

A vocabulary is known by the sha256 of its `.model` file's bytes and its number of pieces. The
writer records both in `stats.json` (`vocabulary_sha256`, `vocabulary_size`); `pretrain` and
`distill` compare the `--spm_model` they are given (and the model's size) with the stats beside
the records before any model is built, and record the vocabulary in their run's summary
(`vocabulary_sha256` in `summary.json`, beside the `model.keras` and `backbone.keras` they save:
fine-tuning from those reads it there, as their configs carry none). Token ids alone cannot tell two vocabularies apart: records of a 2,000-piece vocabulary fit a
30,000-piece model, which then trains on ids that mean other pieces.

The hashing and the comparison live here and nowhere else; no TensorFlow.
"""

from __future__ import annotations

import hashlib
import json
import os

SHORT = 12  # hex digits shown in messages (48 bits: no accidental match between two files)
RUN_SUMMARY = "summary.json"  # what pretrain and distill write beside the models they save


def file_sha256(path: str) -> str:
    """The sha256 of a file's bytes, as 64 hex digits.

    Args:
        path: str. A local file (a SentencePiece `.model`).

    Example:
    >>> len(file_sha256("spm.model"))
    64
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe(spm_model: str | None) -> dict | None:
    """`{"file", "sha256", "pieces"}` of a SentencePiece model (None without one): what a run's
    summary records as its vocabulary.

    Args:
        spm_model: str or None. The `.model` file.

    Example:
    >>> vocabulary = describe("spm.model")
    >>> vocabulary["file"], vocabulary["pieces"], len(vocabulary["sha256"])
    ('spm.model', 50, 64)
    """
    if not spm_model:
        return None
    import sentencepiece

    pieces = sentencepiece.SentencePieceProcessor(model_file=spm_model).get_piece_size()
    return {"file": os.path.basename(spm_model), "sha256": file_sha256(spm_model), "pieces": pieces}


def check_same_vocabulary(
    stats: dict,
    stats_name: str,
    *,
    vocabulary: dict | None = None,
    vocabulary_name: str = "--spm_model",
    model_vocabulary_size: int | None = None,
    model_name: str = "the model",
) -> None:
    """Refuses a vocabulary, or a model's vocabulary size, that is not the records' one.

    Args:
        stats: dict. A writer's `stats.json` (`vocabulary_size`; `vocabulary_sha256` since it
            was recorded: older stats are compared by size alone).
        stats_name: str. How the message names the stats (its path).
        vocabulary: dict or None. `describe(spm_model)` of the given vocabulary.
        vocabulary_name: str. How the message names it (e.g. `"--spm_model big.model"`).
        model_vocabulary_size: int or None. The embedding rows of the model to train: fewer
            than the records' pieces is refused (more is allowed: a size padded for speed).
        model_name: str. How the message names the model's size.

    Raises:
        ValueError: one line naming both sides.

    Example:
    >>> stats = {"vocabulary_size": 50, "vocabulary_sha256": describe("spm.model")["sha256"]}
    >>> check_same_vocabulary(stats, "records/stats.json", vocabulary=describe("spm.model"))
    >>> other = {"file": "big.model", "sha256": "ab" * 32, "pieces": 30000}
    >>> check_same_vocabulary(stats, "records/stats.json", vocabulary=other,
    ...                       vocabulary_name="--spm_model big.model")
    Traceback (most recent call last):
    ValueError: --spm_model big.model (30000 pieces, sha256 abababababab) is not the vocabulary ...
    """
    size, sha256 = stats.get("vocabulary_size"), stats.get("vocabulary_sha256")
    if size is None:
        return  # not a writer's stats: nothing to compare
    recorded = f"{size} pieces" + (f", sha256 {sha256[:SHORT]}" if sha256 else "")
    if vocabulary is not None:
        same_size = vocabulary["pieces"] == size
        if not same_size or (sha256 and vocabulary["sha256"] != sha256):
            raise ValueError(
                f"{vocabulary_name} ({vocabulary['pieces']} pieces, sha256 "
                f"{vocabulary['sha256'][:SHORT]}) is not the vocabulary the records were written "
                f"with ({stats_name}: {recorded}): give that one"
            )
    if model_vocabulary_size is not None and model_vocabulary_size < size:
        raise ValueError(
            f"{model_name} has {model_vocabulary_size} ids, but the records were written with a "
            f"{size}-piece vocabulary ({stats_name}: {recorded})"
        )


def run_vocabulary_sha256(vocabulary: dict | None, record_files) -> str | None:
    """The sha256 of the vocabulary a pretraining-style run trained with, for its summary: the
    given one's (`describe(spm_model)`), else the one every writer's `stats.json` beside the
    records agrees on; None when neither says (or two stats disagree).

    Args:
        vocabulary: dict or None. `describe(spm_model)` of `--spm_model`.
        record_files: the record files read (their folders' `stats.json` are consulted).

    Example:
    >>> run_vocabulary_sha256(None, ["records/x.tfrecord"]) == file_sha256("spm.model")
    True
    """
    if vocabulary is not None:
        return vocabulary["sha256"]
    from albert_keras_contracts.writer_stats import read_writer_stats

    folders = sorted({os.path.dirname(path) for path in record_files})
    found = {(read_writer_stats(folder) or {}).get("vocabulary_sha256") for folder in folders}
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def model_vocabulary_sha256(model) -> str | None:
    """The vocabulary sha256 a loaded model carries (its preprocessor's tokenizer records it in
    the `.keras` config), or None for a model saved without one.

    Args:
        model: a loaded Keras model (or anything: no attribute, no hash).

    Example:
    >>> model_vocabulary_sha256(object()) is None
    True
    """
    tokenizer = getattr(getattr(model, "preprocessor", None), "tokenizer", None)
    return getattr(tokenizer, "vocabulary_sha256", None)


def saved_vocabulary_sha256(model, model_path: str) -> tuple[str | None, str]:
    """`(sha256, where)`: the vocabulary hash the model carries, else the one its run recorded
    in the `summary.json` beside it (pretrain's and distill's `model.keras` and
    `backbone.keras` carry none); `(None, model_path)` when neither has one.

    Args:
        model: the loaded model.
        model_path: str. Its `.keras` file (a name that is not a file has no summary beside it).

    Example:
    >>> saved_vocabulary_sha256(object(), "old.keras")
    (None, 'old.keras')
    """
    carried = model_vocabulary_sha256(model)
    if carried is not None or not os.path.isfile(model_path):
        return carried, model_path
    summary = os.path.join(os.path.dirname(model_path), RUN_SUMMARY)
    try:
        with open(summary) as file:
            recorded = json.load(file).get("vocabulary_sha256")
    except (OSError, ValueError, AttributeError):
        return None, model_path  # no run summary (or not one): nothing recorded
    return (recorded, summary) if isinstance(recorded, str) else (None, model_path)


def check_model_vocabulary(
    model, model_name: str, spm_model: str, vocabulary_name: str = "--spm_model"
) -> str | None:
    """Refuses a SentencePiece model that is not the one a saved model was trained with: the
    hash the model carries, or its run's `summary.json` beside it (`saved_vocabulary_sha256`).

    Args:
        model: the loaded model.
        model_name: str. How the message names it (its path).
        spm_model: str. The `.model` file given with it.
        vocabulary_name: str. How the message names the flag.

    Returns:
        None when the hashes agree; for a model that carries no hash (saved before models
        carried one, or with no preprocessor) the one line to print: nothing was checked.

    Raises:
        ValueError: one line naming both files and both hashes.

    Example:
    >>> check_model_vocabulary(object(), "old.keras", "spm.model")
    'old.keras carries no vocabulary sha256 (saved without one): --spm_model spm.model is not checked against it'
    """
    recorded, where = saved_vocabulary_sha256(model, model_name)
    given = f"{vocabulary_name} {spm_model}"
    if recorded is None:
        return f"{model_name} carries no vocabulary sha256 (saved without one): {given} is not checked against it"  # fmt: skip
    sha256 = file_sha256(spm_model)
    if sha256 != recorded:
        source = "" if where == model_name else f"{where}: "
        raise ValueError(
            f"{given} (sha256 {sha256[:SHORT]}) is not the vocabulary {model_name} was trained "
            f"with ({source}sha256 {recorded[:SHORT]}): give that one"
        )
    return None
