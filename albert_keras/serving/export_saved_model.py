"""A TensorFlow SavedModel that takes raw strings: what TF Serving and plain TF load."""

from __future__ import annotations

import pathlib
import shutil
import tempfile

import keras
import tensorflow as tf

TEXT = tf.TensorSpec([None], tf.string)


def export_saved_model(model, output_dir: str | pathlib.Path, preprocessor=None) -> dict:
    """Writes `model` (a classifier) with its preprocessor as a SavedModel over raw text.

    Signatures (each takes a batch, a 1-D string tensor per input):
    - `serving_default(text)`: one segment per example;
    - `pairs(text_a, text_b)`: two segments (`[CLS] a [SEP] b [SEP]`);
    - `tokenize(text)`: the packed `token_ids`, `segment_ids`, `padding_mask` (to check what
      the model sees).
    The classifying ones return `probabilities` (batch, classes), the softmax of the logits,
    or, for a regression model (`num_classes == 1`), `score` (batch,).

    The SavedModel needs TensorFlow and `tensorflow-text` (whose SentencePiece and
    normalization ops the graph uses: `import tensorflow_text` before loading), not
    albert_keras or keras-hub. TF Serving's model server builds in tf-text's ops; that was
    not tried here.

    Args:
        model: `AlbertClassifier`.
        output_dir: str or Path. The SavedModel folder; written beside it under a temporary
            name, then renamed into place.
        preprocessor: `AlbertPreprocessor`, default `model.preprocessor`.

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
    preprocessor = (
        preprocessor if preprocessor is not None else getattr(model, "preprocessor", None)
    )
    if preprocessor is None:
        raise ValueError(
            "the model has no preprocessor, so a SavedModel over strings cannot be made; "
            "build the classifier with AlbertClassifier.from_preset(...) or "
            "preprocessor=AlbertPreprocessor(AlbertTokenizer('spm.model'))"
        )
    num_classes = getattr(model, "num_classes", None)
    if num_classes is None:
        raise ValueError(f"cannot export a {type(model).__name__}: an AlbertClassifier is needed")

    def outputs(inputs):
        logits = tf.cast(model(inputs, training=False), tf.float32)
        if num_classes == 1:
            return {"score": logits[:, 0]}
        return {"probabilities": tf.nn.softmax(logits, axis=-1)}

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

    output_dir = pathlib.Path(output_dir)
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(dir=output_dir.parent, prefix=f".{output_dir.name}."))
    try:
        archive.write_out(str(staging / "saved_model"), verbose=False)
        if output_dir.exists():
            shutil.rmtree(output_dir)
        (staging / "saved_model").replace(output_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    output = ["score"] if num_classes == 1 else ["probabilities"]
    return {
        "serving_default": output,
        "pairs": output,
        "tokenize": ["token_ids", "segment_ids", "padding_mask"],
    }
