"""`from_preset` for every model: architecture names, released weights, hubs and local paths.

A preset is one of:
- an architecture name of `AlbertBackbone.presets` (`albert_base`, ...): random weights;
- an official release (`albert_base_v2`, ..., `albert_xxlarge_v1`): the tarball is downloaded
  once, converted once and cached (`preset_cache`);
- `hf://ORG/NAME`: a Hugging Face repository (`config.json`, `model.safetensors`,
  `spiece.model`), fetched and converted the same way;
- a keras-hub preset name (`albert_base_en_uncased`) or a Kaggle handle (`kaggle://...`):
  fetched by keras-hub's own downloader (`kagglehub`), converted and cached;
- a local path: our `.keras` file, a folder holding one (`pretrain`'s output), an official
  checkpoint folder or tarball, a Hugging Face folder or a keras-hub preset folder. Read in
  place each time (nothing is cached).
"""

from __future__ import annotations

import inspect
import json
import pathlib

from albert_keras.presets import preset_cache, release_presets
from albert_keras.presets.release_presets import HF_FILES, RELEASES

_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def load_pretrainer(preset: str):
    """The `AlbertPretrainer` (backbone and heads) of a preset with weights.

    Example:
    >>> pretrainer = load_pretrainer("albert.keras")  # or a release: "albert_base_v2"
    >>> pretrainer.backbone.num_layers
    2
    """
    return _resolve(preset)[0]()


def load_with_fresh_parts(preset: str):
    """`(model, fresh_parts)`: the preset's model as stored (an `AlbertPretrainer` for
    converted weights; a backbone or classifier for such `.keras` files) and the labels of the
    parts its source lacked, left at a fresh initialization (e.g. `["MLM head"]` for a Hugging
    Face `AlbertModel` folder, both heads for keras-hub)."""
    load_model, _, fresh_parts = _resolve(preset)
    return load_model(), list(fresh_parts)


def load_backbone(preset: str, **overrides):
    """The `AlbertBackbone` of a preset; `overrides` change config entries that leave the
    weights' shapes alone (e.g. `dropout=0.1`, `dtype="mixed_bfloat16"`)."""
    from albert_keras.models import AlbertBackbone

    model = _resolve(preset)[0]()
    backbone = getattr(model, "backbone", model)
    if not overrides:
        return backbone
    rebuilt = AlbertBackbone.from_config({**backbone.get_config(), **overrides})
    try:
        rebuilt.set_weights(backbone.get_weights())
    except ValueError as error:
        raise ValueError(
            f"{preset}: the overrides {sorted(overrides)} change the weights' shapes ({error})"
        ) from None
    return rebuilt


def load_sentencepiece(preset: str) -> bytes:
    """The SentencePiece model (bytes) that came with a preset's weights."""
    spm = _resolve(preset)[1]
    if spm is None:
        raise ValueError(
            f"{preset}: no SentencePiece model comes with these weights; build the "
            "preprocessor yourself: AlbertPreprocessor(AlbertTokenizer('path/to/spm.model'))"
        )
    return spm


def has_weights(preset: str) -> bool:
    """Whether `preset` names weights (not an architecture-only name such as `albert_base`)."""
    from albert_keras.models.albert_presets import BACKBONE_PRESETS

    return preset not in BACKBONE_PRESETS


def task_from_preset(cls, preset: str, sequence_length: int | None = None, **kwargs):
    """`cls(backbone=..., preprocessor=..., **kwargs)` for a task model class.

    A task adopts it with `from_preset = classmethod(task_from_preset)` or by calling it.

    The generic `from_preset` of our task models (classifier, question answerer, ...): the
    backbone from `preset` (random for an architecture name), and, when `cls` takes a
    `preprocessor` and the preset carries a vocabulary, an `AlbertPreprocessor` of
    `sequence_length` (default: the backbone's `max_sequence_length`). Backbone overrides go
    in `backbone_kwargs`; everything else goes to `cls`. A local Hugging Face task folder
    (`AlbertForSequenceClassification`, `...TokenClassification`, `...MultipleChoice`,
    `...QuestionAnswering`) brings its head too, into the matching class only
    (`albert_keras.convert.hf_task_heads`).

    Example:
    >>> from albert_keras.convert import export_model
    >>> from albert_keras.models import AlbertClassifier
    >>> _ = export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/",
    ...                  sentencepiece="spm.model")  # a folder with weights and a vocabulary
    >>> classifier = task_from_preset(AlbertClassifier, "albert_hf/", num_classes=2)
    >>> classifier.backbone.num_layers, type(classifier.preprocessor).__name__
    (2, 'AlbertPreprocessor')
    """
    from albert_keras.convert.hf_task_heads import load_task_head, task_kwargs
    from albert_keras.models import AlbertBackbone
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

    backbone_kwargs = kwargs.pop("backbone_kwargs", None) or {}
    head = _hf_task_head(preset)
    if head is not None:  # a Hugging Face task folder: its head comes too
        kwargs = task_kwargs(head, kwargs)
    if has_weights(preset):
        backbone = load_backbone(preset, **backbone_kwargs)
    else:
        backbone = AlbertBackbone.from_preset(preset, **backbone_kwargs)
    takes_preprocessor = "preprocessor" in inspect.signature(cls.__init__).parameters
    if takes_preprocessor and "preprocessor" not in kwargs:
        spm = _resolve(preset)[1] if has_weights(preset) else None
        if spm is None:
            if sequence_length is not None:
                raise ValueError(f"{preset}: no vocabulary, so no preprocessor to set up")
        else:
            length = sequence_length or backbone.max_sequence_length
            kwargs["preprocessor"] = AlbertPreprocessor(AlbertTokenizer(spm), length)
    task = cls(backbone=backbone, **kwargs)
    if head is not None:
        load_task_head(task, head)
    return task


def _hf_task_head(preset: str) -> dict | None:
    """The head of a local Hugging Face task folder (`AlbertForTokenClassification`, ...)."""
    from albert_keras.convert.hf_task_heads import hf_task_architecture, read_hf_task_head

    path = pathlib.Path(str(preset)).expanduser()
    if not path.is_dir() or hf_task_architecture(path) is None:
        return None
    return read_hf_task_head(path)


# === Resolution ===


def _resolve(preset: str):
    """`(load_model, sentencepiece bytes or None)` for a preset with weights; `load_model()`
    returns the model (the SentencePiece model alone is read without loading the weights)."""
    from albert_keras.convert import load_any_model

    preset = str(preset)
    path = pathlib.Path(preset).expanduser()
    if path.exists():
        model, spm, fresh_parts = _load_local(path)
        return (lambda: model), spm, fresh_parts
    if preset in RELEASES or preset.startswith(("hf://", "kaggle://")) or _is_keras_hub(preset):
        folder = preset_cache.converted_preset(preset) or _fetch_and_convert(preset)
        record = json.loads((folder / preset_cache.PRESET_RECORD).read_text())
        spm_name = record.get("sentencepiece")
        spm = (folder / spm_name).read_bytes() if spm_name else None
        load_model = lambda: load_any_model(folder / preset_cache.PRETRAINER_FILE)
        return load_model, spm, record.get("fresh_parts", [])
    from albert_keras.models.albert_presets import BACKBONE_PRESETS

    raise ValueError(
        f"unknown preset {preset!r}; choose one of: an architecture "
        f"({', '.join(BACKBONE_PRESETS)}), a release ({', '.join(RELEASES)}), hf://ORG/NAME, "
        "a keras-hub name or kaggle:// handle, or a local file or folder"
    )


def _fetch_and_convert(preset: str) -> pathlib.Path:
    from albert_keras.convert import import_checkpoint

    if preset in RELEASES:
        release = RELEASES[preset]
        url = release["url"]
        downloads = [preset_cache.fetch(preset, url, url.rsplit("/", 1)[1], release["md5"])]
        source, where = release["source"], downloads[0]
    elif preset.startswith("hf://"):
        repository = preset[len("hf://") :].strip("/")
        base = f"{release_presets.HF_BASE_URL}/{repository}/resolve/main"
        downloads = [preset_cache.fetch(preset, f"{base}/{name}", name) for name in HF_FILES]
        source, where = "hf", downloads[0].parent
    else:
        downloads, source, where = [], "keras-hub", _keras_hub_download(preset)
    urls = {str(path): _url_of(preset, path) for path in downloads}
    try:
        imported = import_checkpoint(source, where)
    except (ValueError, OSError) as error:
        for path in downloads:  # it did not convert: never reuse it
            preset_cache.forget_download(path)
        if not downloads:
            raise
        raise preset_cache.PresetFetchError(
            f"{', '.join(urls.values())}: the download for preset {preset!r} does not convert "
            f"({error}); deleted it, so the next call fetches it again"
        ) from None
    records = [preset_cache.record_download(path, urls[str(path)]) for path in downloads]
    origin = {"source": source, "downloads": records}
    if not downloads:
        origin["fetched_by"] = f"keras-hub ({where})"
    return preset_cache.save_converted(preset, imported, origin)


def _url_of(preset: str, path: pathlib.Path) -> str:
    if preset in RELEASES:
        return RELEASES[preset]["url"]
    return f"{release_presets.HF_BASE_URL}/{preset[len('hf://') :].strip('/')}/resolve/main/{path.name}"


def _is_keras_hub(preset: str) -> bool:
    import keras_hub

    return preset in keras_hub.models.AlbertBackbone.presets


def _keras_hub_download(preset: str) -> pathlib.Path:
    """A keras-hub preset folder, downloaded by keras-hub's own client (`kagglehub`)."""
    import keras_hub

    handle = preset
    if _is_keras_hub(preset):
        handle = keras_hub.models.AlbertBackbone.presets[preset]["kaggle_handle"]
    try:
        import kagglehub

        return pathlib.Path(kagglehub.model_download(handle.removeprefix("kaggle://")))
    except Exception as error:  # noqa: BLE001 (kagglehub raises its own and requests' errors)
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise preset_cache.PresetFetchError(
            f"could not fetch {handle} for preset {preset!r} ({reason}); without network, "
            f"download the keras-hub preset folder elsewhere and pass it instead of {preset!r}"
        ) from None


def _load_local(path: pathlib.Path):
    from albert_keras.convert import import_checkpoint, load_any_model

    if path.is_file() and path.suffix == ".keras":
        return load_any_model(path), _sentencepiece_beside(path.parent), []
    if path.is_dir() and (path / "model.keras").is_file():  # `albert-keras pretrain`'s output
        return load_any_model(path / "model.keras"), _sentencepiece_beside(path), []
    if path.name.endswith(_ARCHIVES) or (path.is_dir() and any(path.glob("*.index"))):
        source = "tf1"
    elif path.is_dir() and (path / "config.json").is_file():
        config = json.loads((path / "config.json").read_text())
        source = "keras-hub" if "registered_name" in config else "hf"
    else:
        raise ValueError(
            f"{path}: not a preset: expected a .keras file, a folder holding model.keras, an "
            "official checkpoint (folder or tarball), a Hugging Face or a keras-hub folder"
        )
    imported = import_checkpoint(source, path)
    return imported.pretrainer, imported.sentencepiece, imported.fresh_parts


def _sentencepiece_beside(folder: pathlib.Path) -> bytes | None:
    models = sorted(folder.glob("*.model"))
    return models[0].read_bytes() if len(models) == 1 else None
