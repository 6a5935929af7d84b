"""A fine-tuning job's model files: the `.keras` it starts from, the SentencePiece model beside
it, and the `.keras` it writes (`load_model_file`, `load_keras_file`, `find_spm_model`,
`save_keras`)."""

import pathlib
import zipfile

import keras

from albert_keras.models import AlbertBackbone
from pipelines import atomic_write


def load_model_file(model) -> tuple[keras.Model, AlbertBackbone, str]:
    """Loads a saved ALBERT and finds its backbone.

    Args:
        model: a `.keras` path (an `AlbertBackbone`, or any of our models holding one: an
            `AlbertPretrainer`, `AlbertClassifier`, `AlbertQuestionAnswerer`), or such a model.

    Returns:
        `(loaded, backbone, name)`: the model as loaded, its backbone, and how errors name it.

    Raises:
        FileNotFoundError, ValueError: one line naming the file.

    Example:
    >>> loaded, backbone, name = load_model_file("albert.keras")
    >>> type(loaded).__name__, type(backbone).__name__, name
    ('AlbertPretrainer', 'AlbertBackbone', 'albert.keras')
    """
    if isinstance(model, keras.Model):
        loaded, name = model, type(model).__name__
    else:
        path = pathlib.Path(model)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: --model not found")
        loaded, name = load_keras_file(path), str(path)
    backbone = loaded if isinstance(loaded, AlbertBackbone) else getattr(loaded, "backbone", None)
    if not isinstance(backbone, AlbertBackbone):
        # ValueError, not TypeError: the CLI reports ValueErrors as one-line errors.
        raise ValueError(  # noqa: TRY004
            f"{name}: a {type(loaded).__name__}, not an AlbertBackbone, "
            "AlbertPretrainer or AlbertClassifier"
        )
    return loaded, backbone, name


def load_keras_file(path, flag: str = "") -> keras.Model:
    """`keras.saving.load_model(path, compile=False)`, with one line naming the file (after
    `flag`, e.g. `"--teacher "`) when it is not a `.keras` archive of known classes.

    Example:
    >>> type(load_keras_file("albert.keras")).__name__
    'AlbertPretrainer'
    """
    try:
        return keras.saving.load_model(path, compile=False)
    # Keras raises any of these for a file that is not a .keras archive of known classes.
    except (ValueError, TypeError, KeyError, OSError, RuntimeError, zipfile.BadZipFile) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ValueError(
            f"{flag}{path}: not a loadable .keras model ({type(error).__name__}: {reason[:200]})"
        ) from None


def find_spm_model(model, spm_model) -> pathlib.Path:
    """`spm_model` if given (it must exist), else the SentencePiece model beside `model`:
    `spm.model`, or the only `*.model` file there.

    Example:
    >>> find_spm_model("albert.keras", None).name
    'spm.model'
    """
    if spm_model is not None:
        path = pathlib.Path(spm_model)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: --spm_model not found")
        return path
    if isinstance(model, keras.Model):
        raise ValueError("spm_model is required with an in-memory model")  # noqa: TRY004
    folder = pathlib.Path(model).parent
    if (folder / "spm.model").is_file():
        return folder / "spm.model"
    candidates = sorted(folder.glob("*.model"))
    if len(candidates) == 1:
        return candidates[0]
    found = f" (found {len(candidates)} *.model files)" if candidates else ""
    raise ValueError(f"no SentencePiece model beside {model}{found}: pass --spm_model")


def save_keras(model: keras.Model, path) -> None:
    """Saves `model` under a temporary name, then renames it: `path` is never half-written."""
    with atomic_write.atomic_path(path) as temporary:
        model.save(temporary)
