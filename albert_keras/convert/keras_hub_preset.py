"""keras-hub files: a preset folder (keras-hub's own saving API) or a `.keras` file.

The weights themselves are copied by `albert_keras.convert.keras_hub` (backbone only: keras-hub's
`AlbertBackbone` has no pretraining heads); this module finds, loads and writes the files, and
carries the SentencePiece model a preset keeps in `assets/tokenizer/vocabulary.spm`.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import zipfile

import keras
import keras_hub

from albert_keras.convert.official_format import CheckpointError, check_keras_file
from albert_keras_contracts import atomic_write

TOKENIZER_ASSET = pathlib.Path("assets") / "tokenizer" / "vocabulary.spm"


def read_keras_hub(path: str | pathlib.Path):
    """Loads a keras-hub ALBERT as our `AlbertBackbone`.

    Args:
        path: str or Path. A keras-hub preset folder (`config.json` + `model.weights.h5`) or a
            `.keras` file holding a `keras_hub.models.AlbertBackbone` (or a keras-hub ALBERT
            task, whose backbone is taken).

    Returns:
        `(backbone, sentencepiece_path or None, notes)`.

    Example:
    >>> backbone = keras.saving.load_model("albert.keras").backbone
    >>> write_keras_hub(backbone, "albert_keras_hub/", sentencepiece="spm.model")
    PosixPath('albert_keras_hub')
    >>> backbone, spm, notes = read_keras_hub("albert_keras_hub/")
    >>> backbone.num_layers, spm.name, notes
    (2, 'vocabulary.spm', [])
    """
    from albert_keras.convert.keras_hub import backbone_from_keras_hub

    path = pathlib.Path(path)
    notes = []
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.is_dir():
        config = _read_preset_config(path)
        if "registered_name" not in config:
            hint = " (a Hugging Face folder: use --from hf)" if "model_type" in config else ""
            raise CheckpointError(f"{path}: not a keras-hub preset folder{hint}")
        loaded = _load(path, lambda: keras_hub.models.Backbone.from_preset(str(path)))
    else:
        check_keras_file(path)
        loaded = _load(path, lambda: keras.saving.load_model(path, compile=False))
    kh_backbone = loaded
    if not isinstance(loaded, keras_hub.models.AlbertBackbone):
        kh_backbone = getattr(loaded, "backbone", None)
        if not isinstance(kh_backbone, keras_hub.models.AlbertBackbone):
            raise CheckpointError(
                f"{path}: holds a {type(loaded).__name__}, not a keras_hub AlbertBackbone"
            )
        notes.append(f"took the backbone of a keras-hub {type(loaded).__name__}; its head dropped")
    spm = path / TOKENIZER_ASSET if path.is_dir() else None
    return backbone_from_keras_hub(kh_backbone), spm if spm and spm.is_file() else None, notes


def write_keras_hub(
    backbone, path: str | pathlib.Path, sentencepiece: str | pathlib.Path | None = None
) -> pathlib.Path:
    """Writes `backbone` as a `keras_hub.models.AlbertBackbone`.

    Args:
        backbone: our `AlbertBackbone`.
        path: str or Path. A folder (a keras-hub preset, written by `save_to_preset`) or a
            file ending in `.keras`.
        sentencepiece: str or Path. A SentencePiece model saved as the preset's
            `AlbertTokenizer` (folders only), so `keras_hub.models.AlbertTokenizer.from_preset`
            works on the folder.
    """
    from albert_keras.convert.keras_hub import backbone_to_keras_hub

    kh_backbone = backbone_to_keras_hub(backbone)
    path = pathlib.Path(path)
    if path.suffix == ".keras":
        with atomic_write.atomic_path(path) as partial:
            kh_backbone.save(partial)
        return path
    path.mkdir(parents=True, exist_ok=True)
    # Written into a hidden temporary folder inside `path`, then moved in file by file: a
    # failure leaves no half preset, and nothing already in `path` is removed (a file of the
    # same name is replaced; the command line checks first that the folder is its own).
    staging = pathlib.Path(atomic_write.temporary_path(path / "preset"))
    try:
        kh_backbone.save_to_preset(str(staging))
        if sentencepiece is not None:
            keras_hub.models.AlbertTokenizer(proto=str(sentencepiece)).save_to_preset(str(staging))
        _move_into(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def _move_into(source: pathlib.Path, target: pathlib.Path) -> None:
    """Moves `source`'s tree into `target`, folder by folder, replacing files of equal names."""
    target.mkdir(exist_ok=True)
    for entry in sorted(source.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            _move_into(entry, target / entry.name)
        else:
            entry.replace(target / entry.name)


def _read_preset_config(folder: pathlib.Path) -> dict:
    config_path = folder / "config.json"
    try:
        return json.loads(config_path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{config_path}: no such file (not a keras-hub preset)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{config_path}: not valid JSON ({error})") from None


def _load(path: pathlib.Path, load):
    try:
        return load()
    except (ValueError, OSError, KeyError, TypeError, RuntimeError, zipfile.BadZipFile) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise CheckpointError(f"{path}: cannot load with keras-hub ({reason})") from None
