"""Where the Colab notebooks keep their work (`colab/*.ipynb`): on Google Drive when it is
mounted, so that a runtime's end loses nothing and each notebook finds the one before it.

Colab's disk goes with the runtime. With `SAVE_TO = "auto"` (the notebooks' default) a
notebook copies what it made to `MyDrive/albert-keras/<notebook>/` when Drive is mounted; the
fine-tuning notebooks' `PRETRAINED = "auto"` reads this runtime's pretraining output, else the
pretraining notebook's copy there. Free of TensorFlow: the notebooks call it before they train.
"""

from __future__ import annotations

import os
import pathlib

DRIVE_ROOT = "/content/drive/MyDrive"  # where Colab mounts "My Drive"
DRIVE_FOLDER = "albert-keras"
LOCAL_PRETRAINED = "albert_pretrain/pretrain/model.keras"  # pretrain_albert.ipynb's own


def save_folder(save_to: str, notebook: str, drive_root: str = DRIVE_ROOT) -> str:
    """The folder a notebook copies its results to: `save_to` as set (a Drive folder, a gs://
    path, or "" for none), or for "auto" `drive_root/albert-keras/<notebook>` when Drive is
    mounted (`drive_root` is a folder), else "".

    Example:
    >>> save_folder("gs://bucket/run", "pretrain"), save_folder("auto", "pretrain", "/no/drive")
    ('gs://bucket/run', '')
    """
    if save_to != "auto":
        return save_to
    if os.path.isdir(drive_root):
        return f"{drive_root.rstrip('/')}/{DRIVE_FOLDER}/{notebook}"
    return ""


def lost_with_the_runtime(save_to: str, in_colab: bool) -> str | None:
    """The line a training cell prints before it starts when nothing will be kept: on Colab
    with no folder to copy to, the model goes with the runtime (None otherwise).

    Example:
    >>> lost_with_the_runtime("", in_colab=False) is None
    True
    >>> lost_with_the_runtime("", in_colab=True)[:44]
    'NOT SAVED: Drive is not mounted and SAVE_TO '
    """
    if save_to or not in_colab:
        return None
    return (
        "NOT SAVED: Drive is not mounted and SAVE_TO is empty, so what this notebook trains "
        "is lost with the runtime. To keep it, stop here, mount Drive (drive.mount"
        '("/content/drive")) or set SAVE_TO, and run all again.'
    )


def pretrained_model(pretrained: str, drive_root: str = DRIVE_ROOT) -> str:
    """The model a fine-tuning notebook starts from: `pretrained` as set, or for "auto" this
    runtime's pretraining output (`albert_pretrain/pretrain/model.keras`), else the pretraining
    notebook's copy on Drive (`MyDrive/albert-keras/pretrain/model.keras`).

    Raises:
        FileNotFoundError: "auto" and neither is there, naming both places.

    Example:
    >>> pretrained_model("gs://bucket/model.keras")
    'gs://bucket/model.keras'
    """
    if pretrained != "auto":
        return pretrained
    on_drive = f"{drive_root.rstrip('/')}/{DRIVE_FOLDER}/pretrain/model.keras"
    for candidate in (LOCAL_PRETRAINED, on_drive):
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(
        f"PRETRAINED = 'auto': no pretrained model at {LOCAL_PRETRAINED} (this runtime) nor at "
        f"{on_drive} (pretrain_albert.ipynb's copy with Drive mounted): mount Drive, or set "
        "PRETRAINED"
    )


def sentencepiece_beside(model_path) -> str:
    """The SentencePiece model saved beside `model_path`: `<stem>.spiece.model` (what `convert`
    writes), `spm.model` (what the notebooks and `pretrain` write), or the only `*.model` there.

    Raises:
        FileNotFoundError: none there, or several with none of those names (listed: set
            SPM_MODEL to one).

    Example:
    >>> import tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("spm.model", "other.model"):
    ...     _ = (folder / name).write_bytes(b"")
    >>> pathlib.Path(sentencepiece_beside(folder / "model.keras")).name
    'spm.model'
    """
    folder = pathlib.Path(model_path).parent
    for name in (f"{pathlib.Path(model_path).stem}.spiece.model", "spm.model"):
        if (folder / name).is_file():
            return str(folder / name)
    found = sorted(folder.glob("*.model"))
    if len(found) == 1:
        return str(found[0])
    if not found:
        raise FileNotFoundError(f"no SentencePiece .model beside {model_path}: set SPM_MODEL")
    names = ", ".join(path.name for path in found)
    raise FileNotFoundError(
        f"{len(found)} .model files beside {model_path} ({names}) and none is spm.model: "
        "set SPM_MODEL to the one it was trained with"
    )
