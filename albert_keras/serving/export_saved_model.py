"""A TensorFlow SavedModel that takes raw strings: what TF Serving and plain TF load.

The SavedModel folder is the export's own (`albert_keras_contracts.output_folder`): a folder holding a user's
files or another command's output is refused; an earlier export into it with other arguments
is replaced only with `overwrite=True`, and then only what that export wrote. The SavedModel is
written into a hidden temporary folder inside it and moved into place once complete: a failed
export (a full disk) leaves the folder as it was, or no folder when it made it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
import shutil

import keras
import tensorflow as tf

from albert_keras.serving.length_groups import classifier_logits, logits_by_length
from albert_keras.serving.warmup_requests import write_warmup_requests
from albert_keras_contracts import atomic_write
from albert_keras_contracts.output_folder import OutputFolder, OutputFolderError, os_error_line

TEXT = tf.TensorSpec([None], tf.string)
COMMAND = "albert-keras export"


def export_saved_model(
    model,
    output_dir: str | pathlib.Path,
    preprocessor=None,
    *,
    overwrite: bool = False,
    arguments: dict | None = None,
) -> dict:
    """Writes `model` (a classifier) with its preprocessor as a SavedModel over raw text.

    Signatures (each takes a batch, a 1-D string tensor per input):
    - `serving_default(text)`: one segment per example;
    - `pairs(text_a, text_b)`: two segments (`[CLS] a [SEP] b [SEP]`);
    - `tokenize(text)`: the packed `token_ids`, `segment_ids`, `padding_mask` (to check what
      the model sees).
    The classifying ones return `probabilities` (batch, classes), the softmax of the logits,
    or, for a regression model (`num_classes == 1`), `score` (batch,); a model with
    `label_names` also returns `label` (batch,), the most probable class's name. They run the model at
    the texts' own lengths, not the padded one (`length_groups`: the same outputs up to float
    round-off, less work for short texts). `assets.extra/tf_serving_warmup_requests` holds a
    request for every (rows, width) shape they can run (`warmup_requests`): TF Serving replays
    it at load, `warmup_requests.warm_up` does the same for `tf.saved_model.load`.

    The SavedModel needs TensorFlow and `tensorflow-text` (whose SentencePiece and
    normalization ops the graph uses: `import tensorflow_text` before loading), not
    albert_keras or keras-hub. TF Serving's model server builds in tf-text's ops; that was
    not tried here.

    Args:
        model: `AlbertClassifier`.
        output_dir: str or Path. The SavedModel folder: new, empty, or an earlier export's
            (see the module docstring).
        preprocessor: `AlbertPreprocessor`, default `model.preprocessor`.
        overwrite: bool. Replace an earlier export made with other `arguments`.
        arguments: dict or None. What makes this export this one (the command line's model
            path, vocabulary and length): an export with equal ones is simply redone.

    Raises:
        ValueError: no preprocessor, not a classifier; `OutputFolderError` (one line) for a
            folder not ours to write, a full disk or a folder we cannot write.

    Returns:
        `{signature name: output names}`.

    Example:
    >>> from albert_keras.convert import export_model
    >>> from albert_keras.models import AlbertClassifier
    >>> _ = export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/",
    ...                  sentencepiece="spm.model")
    >>> classifier = AlbertClassifier.from_preset("albert_hf/", num_classes=2)
    >>> export_saved_model(classifier, "served/")  # doctest: +NORMALIZE_WHITESPACE
    {'serving_default': ['probabilities'], 'pairs': ['probabilities'],
     'tokenize': ['token_ids', 'segment_ids', 'padding_mask']}
    >>> import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)
    >>> served = tf.saved_model.load("served/")
    >>> outputs = served.signatures["serving_default"](text=tf.constant(["a gem", "a mess"]))
    >>> outputs["probabilities"].numpy().shape
    (2, 2)
    """
    preprocessor = _text_preprocessor(model, preprocessor)
    num_classes = getattr(model, "num_classes", None)
    if num_classes is None:
        raise ValueError(f"cannot export a {type(model).__name__}: an AlbertClassifier is needed")
    archive = _archive(model, preprocessor, num_classes)

    def add_warmup_requests(saved_model_dir):
        write_warmup_requests(saved_model_dir, preprocessor, preprocessor.sequence_length)

    write_archive(archive, output_dir, arguments, overwrite=overwrite, extras=add_warmup_requests)
    output = ["score"] if num_classes == 1 else ["probabilities"]
    if num_classes > 1 and getattr(model, "label_names", None) is not None:
        output.append("label")
    return {
        "serving_default": output,
        "pairs": output,
        "tokenize": ["token_ids", "segment_ids", "padding_mask"],
    }


def _text_preprocessor(model, preprocessor):
    """`preprocessor`, else the model's own; an error saying how to give one without either."""
    preprocessor = (
        preprocessor if preprocessor is not None else getattr(model, "preprocessor", None)
    )
    if preprocessor is None:
        raise ValueError(
            "the model has no preprocessor, so a SavedModel over strings cannot be made; "
            "build the classifier with AlbertClassifier.from_preset(...) or "
            "preprocessor=AlbertPreprocessor(AlbertTokenizer('spm.model'))"
        )
    return preprocessor


def _archive(model, preprocessor, num_classes: int) -> keras.export.ExportArchive:
    """The endpoints over raw text: `serving_default` (one text), `pairs` and `tokenize`."""

    logits_of = classifier_logits(model)
    names = getattr(model, "label_names", None)

    def outputs(inputs):
        # The padded inputs `tokenize` returns, computed at the texts' own lengths: equal
        # outputs (length_groups.py says why), less work for the short texts requests hold.
        logits = logits_by_length(logits_of, inputs, num_classes)
        if num_classes == 1:
            return {"score": logits[:, 0]}
        probabilities = tf.nn.softmax(logits, axis=-1)
        if names is None:
            return {"probabilities": probabilities}
        label = tf.gather(tf.constant(names), tf.argmax(probabilities, axis=-1))
        return {"probabilities": probabilities, "label": label}

    def classify(text):
        return outputs(preprocessor(text))

    def classify_pairs(text_a, text_b):
        return outputs(preprocessor((text_a, text_b)))

    def tokenize(text):
        return preprocessor(text)

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.track(preprocessor)
    archive.add_endpoint("serving_default", classify, input_signature=[TEXT])
    archive.add_endpoint("pairs", classify_pairs, input_signature=[TEXT, TEXT])
    archive.add_endpoint("tokenize", tokenize, input_signature=[TEXT])
    return archive


def write_archive(
    archive, output_dir: str, arguments: dict | None, *, overwrite=False, extras=None
) -> None:
    """Writes a `keras.export.ExportArchive` into `output_dir` as `albert-keras export` owns it.

    The folder is opened through `OutputFolder` (refused when another command's or a user's;
    locked while writing), the SavedModel staged and moved into place by `_write_into`, and a
    folder this call created is removed again when writing fails.

    Args:
        archive: the `keras.export.ExportArchive` to write.
        output_dir: the export's folder.
        arguments: what the export was made from, recorded in the folder's manifest.
        overwrite: replace an earlier export made with other arguments.
        extras: None, or a function of the staging SavedModel folder that adds files to it
            (the warm-up requests) before it moves into place.
    """
    folder = OutputFolder(output_dir, COMMAND, arguments or {}, overwrite=overwrite).open()
    try:
        _write_into(folder, archive, extras)
    except BaseException:
        folder.close()
        folder.discard_if_unused()
        raise
    folder.close()


def _write_into(folder: OutputFolder, archive, extras=None) -> None:
    """Writes the SavedModel into a hidden staging folder inside `folder`, then moves its
    entries into place, replacing only entries this command wrote before."""
    staging = atomic_write.temporary_path(os.path.join(folder.path, "saved_model"))
    try:
        try:
            archive.write_out(staging, verbose=False)
            if extras is not None:
                extras(staging)
        except tf.errors.OpError as error:
            raise _as_os_error(error, folder.path) from None
        entries = sorted(os.listdir(staging))
        for name in entries:
            target = os.path.join(folder.path, name)
            if os.path.lexists(target) and not folder.owns(name):
                raise OutputFolderError(
                    f"{target} exists and is not an earlier export's: move it away and rerun"
                )
        for name in entries:  # an earlier export's (same arguments, or `overwrite`)
            _remove(os.path.join(folder.path, name))
        for name in entries:
            os.replace(os.path.join(staging, name), folder.claim(name))
    except OSError as error:
        raise OutputFolderError(os_error_line(error, folder.path)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _as_os_error(error: tf.errors.OpError, path: str) -> OSError:
    """TensorFlow's file errors as the OSError they stand for (a full disk, no permission)."""
    message = str(error.message if hasattr(error, "message") else error)
    if isinstance(error, tf.errors.ResourceExhaustedError) or "No space left" in message:
        return OSError(errno.ENOSPC, "No space left on device", path)
    if isinstance(error, tf.errors.PermissionDeniedError) or "Read-only" in message:
        return OSError(errno.EACCES, "Permission denied", path)
    return OSError(errno.EIO, message.splitlines()[0] if message else type(error).__name__, path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
