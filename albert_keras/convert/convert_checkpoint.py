"""The Python functions behind `albert-keras convert`: import any source, export to any target."""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
import tempfile
import zipfile

import keras

from albert_keras.convert.hf_checkpoint import read_hf_folder, write_hf_folder
from albert_keras.convert.imported_model import ImportedModel
from albert_keras.convert.keras_hub_preset import read_keras_hub, write_keras_hub
from albert_keras.convert.keras_weights import official_from_model, pretrainer_from_official
from albert_keras.convert.official_format import (
    MLM_HEAD,
    POOLER,
    SENTENCE_HEAD,
    SQUAD_HEAD,
    CheckpointError,
    check_keras_file,
)
from albert_keras.convert.safe_tar import safe_extract_tar
from albert_keras.convert.tf1_checkpoint import find_tf1_checkpoint, read_tf1_checkpoint
from albert_keras_contracts import atomic_write
from albert_keras_contracts.catalogue import CONVERSION_SOURCES, CONVERSION_TARGETS
from albert_keras_contracts.output_folder import OutputFolderError, check_new_file, os_error_line

SOURCES = tuple(CONVERSION_SOURCES)  # the catalogue's formats
TARGETS = tuple(CONVERSION_TARGETS)
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
# Where each source keeps its SentencePiece model, best first (any other *.model comes after).
SENTENCEPIECE_NAMES = ("spiece.model", "30k-clean.model", "vocabulary.spm")


def import_checkpoint(
    source: str, path: str | pathlib.Path, config_path: str | pathlib.Path | None = None
) -> ImportedModel:
    """Reads a checkpoint as an `AlbertPretrainer` (SOP head), with an account of the mapping.

    Args:
        source: str. `"tf1"` (official release: checkpoint + `albert_config.json`), `"hf"`
            (`config.json` + `model.safetensors`), `"keras-hub"` (preset folder or `.keras`
            file of a `keras_hub.models.AlbertBackbone`) or `"keras"` (our own `.keras` file).
        path: str or Path. A folder, a checkpoint prefix or file, or a `.tar.gz` of a folder
            (unpacked safely into a temporary folder).
        config_path: str or Path. The config, when it is not beside the weights (tf1, hf).

    Example:
    >>> export_model(keras.saving.load_model("albert.keras"), "tf1", "albert_tf1/")
    []
    >>> imported = import_checkpoint("tf1", "albert_tf1/")
    >>> imported.pretrainer.backbone.num_layers, imported.fresh_parts
    (2, [])
    """
    if source not in SOURCES:
        raise ValueError(f"source={source!r} is not one of {SOURCES}")
    path = pathlib.Path(path)
    with contextlib.ExitStack() as stack:
        if path.name.endswith(ARCHIVE_SUFFIXES):
            unpacked = stack.enter_context(tempfile.TemporaryDirectory(prefix="albert-convert-"))
            safe_extract_tar(path, unpacked)
            path = _checkpoint_root(pathlib.Path(unpacked), source, archive=path)
        imported = _IMPORTERS[source](path, config_path)
        if imported.sentencepiece is None:
            _attach_sentencepiece(imported, path)
        return imported


def vocabulary_path(output: str | pathlib.Path) -> pathlib.Path:
    """Where `save_imported` puts the SentencePiece model of `output`: named after it, so that
    two conversions into one folder keep their own (`x.keras` -> `x.spiece.model`).

    Example:
    >>> vocabulary_path("run/albert_base.keras")
    PosixPath('run/albert_base.spiece.model')
    """
    output = pathlib.Path(output)
    return output.with_name(f"{output.stem}.spiece.model")


def check_outputs(output: str | pathlib.Path, *, overwrite: bool = False) -> None:
    """Refuses (one line) an `output` not ending in `.keras`, or an existing `output` or
    vocabulary file unless `overwrite`: what `save_imported` checks, for a caller to check first.
    """
    output = pathlib.Path(output)
    if output.suffix != ".keras":
        raise ValueError(f"--output {output}: the file name must end in .keras")
    check_new_file(output, overwrite=overwrite)
    check_new_file(vocabulary_path(output), overwrite=overwrite)


def save_imported(
    imported: ImportedModel, output: str | pathlib.Path, *, overwrite: bool = False
) -> list[pathlib.Path]:
    """Saves the pretrainer as `output` (a `.keras` file) and its SentencePiece model beside it
    as `vocabulary_path(output)`.

    Files are written under temporary names and renamed into place; existing ones are refused
    unless `overwrite`. Returns the paths written.
    """
    check_outputs(output, overwrite=overwrite)
    output = pathlib.Path(output)
    with writing(output):
        output.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write.atomic_path(output) as partial:
            imported.pretrainer.save(partial)
    written = [output]
    if imported.sentencepiece is not None:
        with writing(vocabulary_path(output)):
            written.append(_write_bytes(vocabulary_path(output), imported.sentencepiece))
    return written


@contextlib.contextmanager
def writing(path: str | pathlib.Path):
    """Turns an OSError met while writing `path` (a full disk, a read-only folder) into one
    line naming `path`, not the temporary name it was written under."""
    try:
        yield
    except Exception as error:
        code = _disk_errno(error)
        if code is None:
            raise
        plain = OSError(code, os.strerror(code))  # without the temporary file's name
        raise OutputFolderError(os_error_line(plain, path)) from None


# What TensorFlow's file errors (SaveV2 of a TF1 checkpoint) say, as the errno they stand for.
_DISK_MESSAGES = {
    "No space left": errno.ENOSPC,
    "Read-only file system": errno.EROFS,
    "Permission denied": errno.EACCES,
}


def _disk_errno(error: Exception) -> int | None:
    if isinstance(error, OSError) and error.errno in (*_DISK_MESSAGES.values(), errno.EDQUOT):
        return error.errno
    if type(error).__module__.startswith("tensorflow"):
        return next((code for text, code in _DISK_MESSAGES.items() if text in str(error)), None)
    return None


def export_model(
    model,
    target: str,
    path: str | pathlib.Path,
    sentencepiece: str | pathlib.Path | None = None,
) -> list[str]:
    """Writes an `AlbertPretrainer` or `AlbertBackbone` in another format; returns notes.

    Args:
        model: `AlbertPretrainer` or `AlbertBackbone`; for `"hf"` also a task model
            (`AlbertClassifier`, `AlbertTokenClassifier`, `AlbertMultipleChoice`, simple-head
            `AlbertQuestionAnswerer`), written as its Hugging Face class
            (`AlbertForSequenceClassification`, ...; `hf_task_heads.write_hf_task`).
        target: str. `"hf"` (`config.json` + `model.safetensors` for `AlbertForPreTraining`),
            `"keras-hub"` (a preset folder, or a `.keras` file when `path` ends in `.keras`) or
            `"tf1"` (`albert_config.json` + `model.ckpt`, the official layout).
        path: str or Path. The folder (or `.keras` file) to write.
        sentencepiece: str or Path. A SentencePiece model to put with the weights.

    Example:
    >>> export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/")
    []
    >>> sorted(os.listdir("albert_hf"))
    ['config.json', 'model.safetensors']
    """
    if target not in TARGETS:
        raise ValueError(f"target={target!r} is not one of {TARGETS}")
    with writing(path):
        return _export(model, target, pathlib.Path(path), sentencepiece)


def _export(model, target: str, path: pathlib.Path, sentencepiece) -> list[str]:
    backbone = getattr(model, "backbone", model)
    notes = []
    if target == "keras-hub":
        if model is not backbone:
            notes.append("keras-hub's AlbertBackbone has no pretraining heads: heads not written")
        write_keras_hub(backbone, path, sentencepiece if path.suffix != ".keras" else None)
        return notes
    if target == "hf":
        if _is_task(model):  # as its Hugging Face task class (AlbertForTokenClassification, ...)
            from albert_keras.convert.hf_task_heads import write_hf_task

            write_hf_task(model, path)
        else:
            write_hf_folder(*official_from_model(model), path)
        spm_name = "spiece.model"  # the name transformers' AlbertTokenizer looks for
    else:
        from albert_keras.convert.tf1_checkpoint import write_tf1_checkpoint

        write_tf1_checkpoint(*official_from_model(model), path)
        spm_name = "30k-clean.model"  # the release's name
    if sentencepiece is not None:
        _write_bytes(path / spm_name, pathlib.Path(sentencepiece).read_bytes())
    return notes


def _is_task(model) -> bool:
    from albert_keras.convert.hf_task_heads import HF_TASKS

    return type(model).__name__ in HF_TASKS.values()


def load_any_model(path: str | pathlib.Path):
    """Loads our own `.keras` file (`AlbertPretrainer`, `AlbertBackbone` or `AlbertClassifier`)."""
    # Our classes are registered for deserialization: importing this module ran
    # `albert_keras/__init__.py` first, which imports the model library.
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    check_keras_file(path)
    try:
        return keras.saving.load_model(path, compile=False)
    except (ValueError, OSError, KeyError, TypeError, zipfile.BadZipFile) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise CheckpointError(f"{path}: cannot load as a Keras model ({reason})") from None


def _import_tf1(path, config_path):
    prefix = find_tf1_checkpoint(path)
    config, weights, skipped = read_tf1_checkpoint(prefix, config_path)
    pretrainer, fresh = pretrainer_from_official(config, weights)
    return ImportedModel(
        pretrainer,
        "tf1",
        prefix,
        mapped=_describe(config, weights),
        skipped=skipped,
        fresh_parts=fresh,
    )


def _import_hf(path, config_path):
    config, weights, notes = read_hf_folder(path, config_path)
    if any(name.startswith(SQUAD_HEAD) for name in weights):
        # The pretrainer has no span head (AlbertQuestionAnswerer.from_preset keeps it).
        weights = {n: a for n, a in weights.items() if not n.startswith(SQUAD_HEAD)}
        notes.append("qa_outputs: the question-answering head, not read into a pretrainer")
    pretrainer, fresh = pretrainer_from_official(config, weights)
    return ImportedModel(
        pretrainer, "hf", path, mapped=_describe(config, weights), fresh_parts=fresh, notes=notes
    )


def _import_keras_hub(path, config_path):
    from albert_keras.models import AlbertPretrainer

    backbone, spm, notes = read_keras_hub(path)
    pretrainer = AlbertPretrainer(backbone, sentence_objective="sop")
    pretrainer.build()
    config, weights = official_from_model(backbone)
    imported = ImportedModel(
        pretrainer,
        "keras-hub",
        path,
        mapped=_describe(config, weights),
        fresh_parts=["MLM head", "sentence-order head"],  # keras-hub's backbone has no heads
        notes=notes,
    )
    if spm is not None:
        imported.sentencepiece, imported.sentencepiece_name = spm.read_bytes(), spm.name
        _check_vocabulary_size(imported)
    return imported


def _import_keras(path, config_path):
    from albert_keras.models import AlbertBackbone, AlbertPretrainer

    model = load_any_model(path)
    fresh, notes = [], []
    if not isinstance(model, AlbertPretrainer):
        backbone = getattr(model, "backbone", model)
        if not isinstance(backbone, AlbertBackbone):
            raise CheckpointError(f"{path}: holds a {type(model).__name__}, not an ALBERT model")
        if model is not backbone:
            notes.append(f"took the backbone of a {type(model).__name__}; its head dropped")
        model = AlbertPretrainer(backbone, sentence_objective="sop")
        model.build()
        fresh = ["MLM head", "sentence-order head"]
    mapped = [f"{type(model).__name__}: {len(model.weights)} variables (no renaming)"]
    return ImportedModel(model, "keras", path, mapped=mapped, fresh_parts=fresh, notes=notes)


_IMPORTERS = {
    "tf1": _import_tf1,
    "hf": _import_hf,
    "keras-hub": _import_keras_hub,
    "keras": _import_keras,
}


def _describe(config: dict, weights: dict) -> list[str]:
    """One line per part: what was mapped."""

    def count(*prefixes):
        return sum(name.startswith(prefixes) for name in weights)

    lines = [f"embeddings: {count('bert/embeddings/')} variables"]
    if count("bert/encoder/embedding_hidden_mapping_in/"):
        lines.append("embedding projection E->H: 2 variables")
    lines.append(
        f"encoder: {config['num_hidden_groups']} group(s) x {config['inner_group_num']} inner "
        f"block(s) for {config['num_hidden_layers']} layers: "
        f"{count('bert/encoder/transformer/')} variables (query/key/value fused)"
    )
    for prefix, label in (
        (POOLER, "pooler"),
        (MLM_HEAD, "MLM head"),
        (SENTENCE_HEAD, "sentence-order head"),
    ):
        if count(prefix):
            lines.append(f"{label}: {count(prefix)} variables")
    return lines


def _checkpoint_root(folder: pathlib.Path, source: str, archive: pathlib.Path) -> pathlib.Path:
    """The one folder of an unpacked archive that holds the checkpoint."""
    marker = "*.index" if source == "tf1" else "config.json"
    if source == "keras":
        marker = "*.keras"
    found = sorted({p.parent for p in folder.rglob(marker)})
    if not found:
        raise FileNotFoundError(f"{archive}: no {marker} inside; is this a {source} checkpoint?")
    if len(found) > 1:
        names = ", ".join(str(p.relative_to(folder)) for p in found)
        raise CheckpointError(
            f"{archive}: several checkpoints inside ({names}); unpack it and pick one"
        )
    if source == "keras":
        return next(found[0].glob("*.keras"))
    return found[0]


def _attach_sentencepiece(imported: ImportedModel, path: pathlib.Path) -> None:
    """Finds a SentencePiece model beside the weights; keeps it if sentencepiece can load it."""
    import sentencepiece

    folder = path if path.is_dir() else path.parent
    names = SENTENCEPIECE_NAMES
    if not path.is_dir():  # `x.keras`: its own `x.spiece.model` first (`save_imported`)
        names = (vocabulary_path(path).name, *names)
    candidates = [folder / name for name in names if (folder / name).is_file()]
    candidates += sorted(p for p in folder.glob("*.model") if p not in candidates)
    for candidate in candidates:
        try:
            sentencepiece.SentencePieceProcessor(model_file=str(candidate))
        except (RuntimeError, OSError):
            imported.notes.append(f"{candidate.name}: not a SentencePiece model; not copied")
            continue
        imported.sentencepiece = candidate.read_bytes()
        imported.sentencepiece_name = candidate.name
        _check_vocabulary_size(imported)
        return


def _check_vocabulary_size(imported: ImportedModel) -> None:
    import sentencepiece

    pieces = sentencepiece.SentencePieceProcessor(
        model_proto=imported.sentencepiece
    ).get_piece_size()
    vocabulary_size = imported.pretrainer.backbone.vocabulary_size
    if pieces != vocabulary_size:
        imported.notes.append(
            f"{imported.sentencepiece_name} has {pieces} pieces but the model's vocabulary is "
            f"{vocabulary_size}: check they belong together"
        )


def _write_bytes(path: pathlib.Path, data: bytes) -> pathlib.Path:
    atomic_write.write_bytes(path, data)
    return path
