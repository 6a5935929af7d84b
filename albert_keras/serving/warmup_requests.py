"""Warm-up requests: the SavedModel's first calls at every shape it can run, made at load time.

`serving_default` runs the model on groups of 1, 2, 4, 8 or 16 rows, each cut to a multiple
of `WIDTH_MULTIPLE` positions (`length_groups.py`). The first call of the signature, and the
first at each new (rows, width) shape, build what they run (the function; oneDNN's kernels, on
CPUs that have it), so without warm-up the first users wait: on the L6 H256 classifier at seq
128 (CPU time per batch-1 request, a loaded 2-core machine), the first request took 1.38 s and
the first at each new width 62-80 ms, against a median of 14.9 ms; after `warm_up` (41
requests, 6.7 CPU-s) none of 200 requests took over 25 ms.

TF Serving's answer is the SavedModel warm-up file, `assets.extra/tf_serving_warmup_requests`:
a TFRecord of `tensorflow.serving.PredictionLog` protos that the model server replays when it
loads the model, before it takes traffic (at most 1000 records). `albert-keras export` writes
one request per shape that `serving_default` can run (`warmup_shapes`: `rows` copies of a text
whose packed length lands in `width`), then one `pairs` request; `warm_up` replays the same
file in a process that loaded the SavedModel with `tf.saved_model.load`. A question
answerer's export writes `question_answering_requests` (its model runs at one width, on as
many rows as a request has windows) through the same `write_requests`.

The records are TF Serving's own `PredictionLog` protos, from the `tensorflow-serving-api`
package (a dependency: its protos only, no server).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from google.protobuf.message import DecodeError
from tensorflow_serving.apis import prediction_log_pb2

from albert_keras.serving.length_groups import ROWS_PER_GROUP, WIDTH_MULTIPLE, row_counts

WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
MAX_RECORDS = 1000  # TF Serving's limit on warm-up records
FILLER_WORD = "a"  # one piece in most vocabularies; any word works, its count is measured


def warmup_shapes(
    sequence_length: int,
    rows_per_group: int = ROWS_PER_GROUP,
    width_multiple: int = WIDTH_MULTIPLE,
) -> list[tuple[int, int]]:
    """Every (rows, width) shape `length_groups.logits_by_length` can run the model at.

    A group runs at one of `length_groups.row_counts(rows_per_group)` rows (1, 2, 4, 8, 16);
    its width is its longest row rounded up to a multiple of `width_multiple`, at most
    `sequence_length`.

    Args:
        sequence_length: int. The preprocessor's packed length (the export's
            `--max_seq_length`).
        rows_per_group: int. `length_groups.ROWS_PER_GROUP`.
        width_multiple: int. `length_groups.WIDTH_MULTIPLE`.

    Returns:
        list of `(rows, width)`, by width, then rows.

    Example:
    >>> shapes = warmup_shapes(40)
    >>> len(shapes), shapes[:3], shapes[-1]
    (15, [(1, 16), (2, 16), (4, 16)], (16, 40))
    """
    rounded_up = range(width_multiple, sequence_length + width_multiple, width_multiple)
    widths = [min(width, sequence_length) for width in rounded_up]
    return [(rows, width) for width in widths for rows in row_counts(rows_per_group)]


def warmup_texts(preprocessor, shapes: list[tuple[int, int]], width_multiple=WIDTH_MULTIPLE):
    """One request per shape: `rows` copies of a text `preprocessor` packs into `width`.

    The text repeats `FILLER_WORD`; its packed length (with [CLS] and [SEP]) is measured with
    `preprocessor`, not assumed, so any vocabulary works.

    Args:
        preprocessor: `AlbertPreprocessor` (strings -> `padding_mask` among others).
        shapes: `(rows, width)` pairs, as `warmup_shapes` gives.
        width_multiple: int. A text lands in `width` when its length is in
            `(width - width_multiple, width]`.

    Returns:
        list of lists of str, one per shape.

    Raises:
        ValueError: the filler's lengths skip a whole width (a vocabulary splitting the
            filler word into more than `width_multiple` pieces).
    """
    longest = max(width for _, width in shapes)
    candidates = [" ".join([FILLER_WORD] * n) for n in range(longest + 1)]
    # In a function, so the layer is traced, not called eagerly (which caches a function on it).
    masks = tf.function(lambda text: preprocessor(text)["padding_mask"])(tf.constant(candidates))
    lengths = np.asarray(masks).sum(axis=1)
    requests = []
    for rows, width in shapes:
        fits = np.flatnonzero((lengths <= width) & (lengths > width - width_multiple))
        if fits.size == 0:
            raise ValueError(
                f"no text of repeated {FILLER_WORD!r} packs into a width of {width} "
                f"(packed lengths: {sorted(set(lengths.tolist()))})"
            )
        requests.append([candidates[fits[-1]]] * rows)
    return requests


def write_warmup_requests(saved_model_dir, preprocessor, sequence_length: int) -> int:
    """Writes `assets.extra/tf_serving_warmup_requests` into a SavedModel folder.

    One `serving_default(text)` request per shape of `warmup_shapes(sequence_length)`, then
    one `pairs(text_a, text_b)` request (its own function's first call).

    Args:
        saved_model_dir: str or Path. The SavedModel folder (`albert-keras export` calls this
            on its staging folder, before the move into place).
        preprocessor: `AlbertPreprocessor` the SavedModel holds.
        sequence_length: int. Its packed length.

    Returns:
        int. The number of records written.
    """
    texts = warmup_texts(preprocessor, warmup_shapes(sequence_length))
    requests = [("serving_default", {"text": batch}) for batch in texts]
    requests.append(("pairs", {"text_a": texts[-1][:1], "text_b": texts[0][:1]}))
    return write_requests(saved_model_dir, requests)


def question_answering_requests(
    count_pieces, sequence_length: int, max_query_length: int, doc_stride: int, windows=None
) -> list[tuple[str, dict]]:
    """Warm-up requests for a question answerer's `serving_default(question, context)`.

    Its graph runs the model once per request on all the request's windows, each padded to
    `sequence_length`: the width is fixed, the rows are the request's window count, any
    number (questions times windows each), so no file covers every shape. These cover the
    useful set: `windows` rows (1, 2, 4, 8, 16 by default: that many questions, each on a
    context filling one window), then one question on a context of two windows (the
    sliding windows' and max-context path, at 2 rows).

    Args:
        count_pieces: function of a list of str giving each text's pieces as the graph
            encodes a context (measured, not assumed, so any vocabulary works).
        sequence_length: int. The packed length.
        max_query_length: int. The answerer's longest question, in pieces.
        doc_stride: int. The answerer's `doc_stride`.
        windows: list of int, or None for `length_groups.row_counts()`.

    Returns:
        list of `("serving_default", {"question": [...], "context": [...]})`.

    Raises:
        ValueError: the filler's lengths skip the lengths needed (a vocabulary splitting the
            filler word into many pieces, or a tiny `doc_stride`).

    Example:
    >>> words = lambda texts: [len(text.split()) for text in texts]  # one piece a word
    >>> requests = question_answering_requests(words, 16, 4, 4, windows=[1, 3])
    >>> [(len(r["question"]), len(r["context"][0].split())) for _, r in requests]
    [(1, 12), (3, 12), (1, 13)]
    """
    question = FILLER_WORD
    query = min(int(count_pieces([question])[0]), max_query_length)
    room = sequence_length - query - 3  # [CLS] question [SEP] window [SEP]
    step = min(room, doc_stride)
    candidates = [" ".join([FILLER_WORD] * n) for n in range(room + step + 1)]
    pieces = np.asarray(count_pieces(candidates))
    one = np.flatnonzero((pieces >= 1) & (pieces <= room))
    two = np.flatnonzero((pieces > room) & (pieces <= room + step))
    if one.size == 0 or two.size == 0:
        raise ValueError(
            f"no context of repeated {FILLER_WORD!r} fills one window of {room} pieces, or "
            f"two at stride {step} (piece counts past {room}: {pieces[pieces > room][:3].tolist()})"
        )
    requests = [
        (
            "serving_default",
            {"question": [question] * rows, "context": [candidates[one[-1]]] * rows},
        )
        for rows in (windows if windows is not None else row_counts())
    ]
    requests.append(("serving_default", {"question": [question], "context": [candidates[two[0]]]}))
    return requests


def write_requests(saved_model_dir, requests: list[tuple[str, dict]]) -> int:
    """Writes requests into a SavedModel folder's `assets.extra/tf_serving_warmup_requests`.

    Args:
        saved_model_dir: str or Path. The SavedModel folder (the export's staging folder).
        requests: list of `(signature name, {input name: list of str})`, any string inputs.

    Returns:
        int. The number of records written.

    Raises:
        ValueError: more requests than TF Serving replays.

    Example:
    >>> write_requests("warm/", [("serving_default", {"question": ["who?"], "context": ["x"]})])
    1
    """
    if len(requests) > MAX_RECORDS:
        raise ValueError(
            f"{len(requests)} warm-up requests: TF Serving replays at most {MAX_RECORDS}"
        )
    path = os.path.join(saved_model_dir, WARMUP_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for signature, inputs in requests:
            writer.write(_prediction_log(signature, inputs).SerializeToString())
    return len(requests)


def read_warmup_requests(saved_model_dir) -> list[tuple[str, dict]]:
    """The requests of a SavedModel's warm-up file.

    Args:
        saved_model_dir: str or Path. A SavedModel folder `albert-keras export` wrote.

    Returns:
        list of `(signature name, {input name: NumPy array})`, in the file's order.

    Raises:
        ValueError: one line naming the file (and record) when the folder is no SavedModel,
            has no warm-up file, or a record is damaged or holds no Predict request.
    """
    path = os.path.join(saved_model_dir, WARMUP_FILE)
    if not os.path.isfile(os.path.join(saved_model_dir, "saved_model.pb")):
        raise ValueError(f"{saved_model_dir}: not a SavedModel folder (no saved_model.pb)")
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file; export the model again with albert-keras export")
    requests = []
    try:
        for number, record in enumerate(tf.data.TFRecordDataset(path).as_numpy_iterator(), 1):
            requests.append(_request_of(record, f"{path}: record {number}"))
    except tf.errors.OpError as error:
        line = str(error.message).splitlines()[0]
        raise ValueError(f"{path}: record {len(requests) + 1} is damaged ({line})") from None
    if not requests:
        raise ValueError(f"{path}: holds no requests")
    return requests


def warm_up(loaded, saved_model_dir) -> int:
    """Replays a SavedModel's warm-up requests on it, as TF Serving does at load.

    For a process that serves the model itself: the first request at each shape then costs
    what later ones do (the kernel builds happen here, once per process).

    Args:
        loaded: what `tf.saved_model.load(saved_model_dir)` returned.
        saved_model_dir: str or Path. The SavedModel folder (its warm-up file is read).

    Returns:
        int. The number of requests replayed.

    Raises:
        ValueError: one line, as `read_warmup_requests`, or naming a signature the loaded
            model lacks.

    Example:
    >>> from albert_keras.convert import export_model
    >>> from albert_keras.models import AlbertClassifier
    >>> from albert_keras.serving import export_saved_model
    >>> _ = export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/",
    ...                  sentencepiece="spm.model")
    >>> classifier = AlbertClassifier.from_preset("albert_hf/", num_classes=2, sequence_length=16)
    >>> _ = export_saved_model(classifier, "served/")
    >>> import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)
    >>> served = tf.saved_model.load("served/")
    >>> warm_up(served, "served/")  # serving_default at 1, 2, 4, 8, 16 rows of width 16; pairs
    6
    """
    requests = read_warmup_requests(saved_model_dir)
    for number, (signature, inputs) in enumerate(requests, 1):
        if signature not in loaded.signatures:
            raise ValueError(
                f"{os.path.join(saved_model_dir, WARMUP_FILE)}: record {number} calls "
                f"signature {signature!r}, which the loaded model lacks "
                f"(it has {sorted(loaded.signatures)})"
            )
        loaded.signatures[signature](**{k: tf.constant(v) for k, v in inputs.items()})
    return len(requests)


def _prediction_log(signature: str, inputs: dict):
    log = prediction_log_pb2.PredictionLog()
    request = log.predict_log.request
    request.model_spec.signature_name = signature
    for name, values in inputs.items():
        request.inputs[name].CopyFrom(tf.make_tensor_proto(np.asarray(values, dtype=object)))
    return log


def _request_of(record: bytes, where: str) -> tuple[str, dict]:
    log = prediction_log_pb2.PredictionLog()
    try:
        log.ParseFromString(record)
    except DecodeError as error:
        raise ValueError(f"{where} is not a PredictionLog ({error})") from None
    if log.WhichOneof("log_type") != "predict_log":
        raise ValueError(f"{where} holds no Predict request")
    request = log.predict_log.request
    inputs = {name: tf.make_ndarray(tensor) for name, tensor in request.inputs.items()}
    return request.model_spec.signature_name or "serving_default", inputs
