"""A fine-tuning job's model files: the `.keras` it starts from, the SentencePiece model beside
it, and the `.keras` it writes (`load_model_file`, `load_keras_file`, `find_spm_model`,
`save_keras`); `check_outside`: an input never lies in the folder a job writes; and
`one_line_os_errors` / `writing`: a full disk is one line naming the file."""

import contextlib
import os
import pathlib
import zipfile

import keras

from albert_keras.models import AlbertBackbone
from albert_keras_contracts import atomic_write
from albert_keras_contracts.output_folder import OutputFolderError, check_apart, os_error_line


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
    # Keras says "File not found" of a truncated archive: said as it is, before Keras reads it.
    if os.path.isfile(path) and not zipfile.is_zipfile(path):
        raise ValueError(
            f"{flag}{path}: not a .keras file: not a whole zip archive (truncated, or another "
            "format)"
        )
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
    its own `MODEL.spiece.model` (what `convert --output MODEL.keras` writes), `spm.model`, or
    the only `*.model` file there.

    Example:
    >>> find_spm_model("albert.keras", None).name
    'spm.model'
    """
    if spm_model is not None:
        path = pathlib.Path(spm_model)
        if path.is_dir():
            raise ValueError(f"{path}: --spm_model is a folder; give the SentencePiece .model file")
        if not path.is_file():
            raise FileNotFoundError(f"{path}: --spm_model not found")
        return path
    if isinstance(model, keras.Model):
        raise ValueError("spm_model is required with an in-memory model")  # noqa: TRY004
    folder = pathlib.Path(model).parent
    own = folder / f"{pathlib.Path(model).stem}.spiece.model"  # `convert --output`'s
    if own.is_file():
        return own
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


def check_outside(flag: str, path, output_dir) -> None:
    """Refuses, in one line, an input file or folder that lies inside `output_dir` (or is it,
    or holds it): `albert_keras_contracts.output_folder.check_apart` for one input.

    A job's `--overwrite` removes what it wrote before in its output folder, and a rerun
    replaces its outputs: the model it starts from must not be one of them (`finetune-glue
    --model run/model.keras --output_dir run/` used to overwrite the pretrained model).

    Args:
        flag: str. The input's flag, for the message (`"--model"`).
        path: the input (a local path; release names and URLs, which are not, pass), or None.
        output_dir: the job's output folder.

    Example:
    >>> os.makedirs("run", exist_ok=True)
    >>> _ = open("run/model.keras", "w").write("a pretrained model")
    >>> check_outside("--model", "run/model.keras", "finetuned/")
    >>> check_outside("--model", "run/model.keras", "run")
    Traceback (most recent call last):
    ...
    albert_keras_contracts.output_folder.OutputFolderError: --model run/model.keras lies inside --output_dir run: ...
    """
    if path is None or isinstance(path, keras.Model):
        return
    check_apart("--output_dir", output_dir, {flag: path})  # the output is no input, nor in one


@contextlib.contextmanager
def one_line_os_errors(path):
    """Turns an `OSError` met while writing `path` (a full disk, no permission) into an
    `OutputFolderError`: one line naming the path, which the command line prints (exit 2).

    Example:
    >>> import errno
    >>> with one_line_os_errors("run/model.keras"):
    ...     raise OSError(errno.ENOSPC, "No space left on device")
    Traceback (most recent call last):
    ...
    albert_keras_contracts.output_folder.OutputFolderError: run/model.keras: no space left on the device; ...
    """
    try:
        yield
    except OSError as error:
        name = getattr(error, "filename", None)
        if name and atomic_write.is_temporary_name(os.path.basename(os.fsdecode(name))):
            # The atomic writer's temporary is gone already: name the file the user asked for.
            error = OSError(error.errno, error.strerror)
        raise OutputFolderError(os_error_line(error, path)) from None


@contextlib.contextmanager
def writing(folder, *names: str):
    """Claims `names` in the `OutputFolder` `folder` and yields their path; an `OSError` in the
    block (or in the claim's manifest update) is one line naming that path.

    Example:
    >>> import tempfile
    >>> from albert_keras_contracts.output_folder import OutputFolder
    >>> with OutputFolder(tempfile.mkdtemp(), "albert-keras demo") as folder:
    ...     with writing(folder, "metrics.json") as path:
    ...         atomic_write.write_json(path, {})
    ...     folder.owns("metrics.json")
    True
    """
    path = os.path.join(folder.path, *names)
    with one_line_os_errors(path):
        yield folder.claim(*names)
