"""A fine-tuned question answerer as a TensorFlow SavedModel over (question, context) strings.

The graph does what `albert_keras.squad.answer_questions` does in Python: it reads both texts
through the answerer's own vocabulary keeping each piece's original characters
(`squad_text_graph`, the graph twin of `squad.context_pieces`), slides the official windows
over each context with the answerer's own `doc_stride` and `max_query_length`
(`squad_windows_graph`), packs `[CLS] question [SEP] window [SEP]`, runs the model on every
window, and picks the best span as `squad_predictions` does (the `n_best_size` best starts
times ends of the simple head, or the v2 head's beam; spans outside the window's context,
ending before they start, longer than `max_answer_length` or starting on a piece another
window sees with more context dropped; ties to the first, as its stable sort), then cuts the
answer from the original context. The answers and no-answer scores are `answer_questions`'
own (tests/serving/test_question_answering_export.py, both heads, short and long contexts).

Its limits: only the best answer is returned (no n-best list), and no no-answer threshold is
applied (`null_odds` is returned for the caller to threshold, as `answer_questions` does
without `null_threshold`).
"""

from __future__ import annotations

import pathlib

import keras
import tensorflow as tf

from albert_keras.serving.export_saved_model import TEXT, write_archive
from albert_keras.serving.squad_text_graph import encode_with_offsets, piece_tables
from albert_keras.serving.squad_windows_graph import max_context, sliding_windows
from albert_keras.serving.warmup_requests import question_answering_requests, write_requests

OUTPUTS = ["answer", "start_char", "end_char", "score", "null_odds"]


def export_question_answerer(
    model,
    output_dir: str | pathlib.Path,
    preprocessor=None,
    *,
    overwrite: bool = False,
    arguments: dict | None = None,
    n_best_size: int = 20,
    max_answer_length: int = 30,
) -> dict:
    """Writes an `AlbertQuestionAnswerer` as a SavedModel answering questions on raw text.

    Signature `serving_default(question, context)` (1-D string tensors, one pair per row):
    - `answer`: the answer's text, cut from the context (as `answer_questions`' `"answer"`;
      the official "empty" for the simple head, "" for the v2 head, when no span is valid, and
      "" for an empty context);
    - `start_char`, `end_char`: int64, `answer == context[start_char:end_char]` (characters);
    - `score`: float64, the best span's start + end score;
    - `null_odds`: float64, the no-answer score (`answer_questions`' `"null_odds"`; SQuAD 2.0
      answers "" where it is above a threshold of yours).

    `assets.extra/tf_serving_warmup_requests` holds warm-up requests (TF Serving replays them
    at load, `warmup_requests.warm_up` after `tf.saved_model.load`): 1, 2, 4, 8 and 16
    windows of `sequence_length`, then one context of two windows
    (`warmup_requests.question_answering_requests`; other window counts are new shapes).

    Long contexts get the official sliding windows (the model's `doc_stride`). The best
    answer only, no threshold: see the module docstring. The SavedModel needs TensorFlow and
    `tensorflow-text` (`import tensorflow_text` before `tf.saved_model.load`), not
    albert_keras.

    Args:
        model: `AlbertQuestionAnswerer` (`finetune-squad`'s `model.keras`).
        output_dir: str or Path. The SavedModel folder (as `export_saved_model`'s).
        preprocessor: `AlbertPreprocessor`, default `model.preprocessor`.
        overwrite: bool. Replace an earlier export made with other `arguments`.
        arguments: dict or None. What makes this export this one (see `export_saved_model`).
        n_best_size: int. Starts and ends tried per question (official 20).
        max_answer_length: int. Longest answer in pieces (official 30).

    Returns:
        `{"serving_default": OUTPUTS}`.

    Example:
    >>> from albert_keras.models import AlbertQuestionAnswerer
    >>> from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    >>> answerer = AlbertQuestionAnswerer(  # untrained: the answer is some span of the context
    ...     keras.saving.load_model("albert.keras").backbone,
    ...     preprocessor=AlbertPreprocessor(AlbertTokenizer("spm.model"), sequence_length=32),
    ...     max_query_length=8)
    >>> export_question_answerer(answerer, "served_qa/")  # doctest: +NORMALIZE_WHITESPACE
    {'serving_default': ['answer', 'start_char', 'end_char', 'score', 'null_odds']}
    >>> import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)
    >>> served = tf.saved_model.load("served_qa/").signatures["serving_default"]
    >>> out = served(question=tf.constant(["who sat?"]), context=tf.constant(["the cat sat"]))
    >>> out["answer"].numpy()[0].decode() in "the cat sat"
    True
    """
    preprocessor = _exportable_preprocessor(model, preprocessor)
    answer = _AnswerGraph(model, preprocessor, n_best_size, max_answer_length)
    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.track(answer.sentencepiece)
    archive.add_endpoint("serving_default", answer.answer, input_signature=[TEXT, TEXT])

    def add_warmup_requests(saved_model_dir):  # after write_out: nothing traced here is saved
        requests = question_answering_requests(
            answer.count_pieces, answer.length, answer.max_query_length, answer.doc_stride
        )
        write_requests(saved_model_dir, requests)

    write_archive(archive, output_dir, arguments, overwrite=overwrite, extras=add_warmup_requests)
    return {"serving_default": list(OUTPUTS)}


def _exportable_preprocessor(model, preprocessor):
    """The preprocessor to export `model` with; one line for a model that cannot be."""
    preprocessor = preprocessor if preprocessor is not None else model.preprocessor
    if getattr(model, "head", None) not in ("simple", "v2") or preprocessor is None:
        raise ValueError(
            f"cannot export a {type(model).__name__} as a question answerer: an "
            "AlbertQuestionAnswerer with a preprocessor (finetune-squad's model.keras) is needed"
        )
    max_query_length = getattr(model, "max_query_length", 64)
    if preprocessor.sequence_length < max_query_length + 4:
        raise ValueError(
            f"sequence_length={preprocessor.sequence_length} leaves no room for a context "
            f"after a {max_query_length}-piece question and [CLS] [SEP] [SEP]"
        )
    return preprocessor


class _AnswerGraph:
    """`(question, context) -> answers` in TensorFlow ops, for one model and vocabulary."""

    def __init__(self, model, preprocessor, n_best_size: int, max_answer_length: int):
        import tensorflow_text as tf_text

        tokenizer = preprocessor.tokenizer
        self.model = model
        self.sentencepiece = tf_text.SentencepieceTokenizer(model=tokenizer.proto)
        self.tables = piece_tables(tokenizer)
        self.lower_case = tokenizer.lowercases
        self.special = (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)
        self.length = preprocessor.sequence_length
        self.max_query_length = getattr(model, "max_query_length", 64)
        self.doc_stride = getattr(model, "doc_stride", 128)
        self.n_best_size = min(n_best_size, self.length)
        self.max_answer_length = max_answer_length
        self._count_pieces = None

    def answer(self, question, context):
        """The signature's function: (batch,) strings in, the outputs `OUTPUTS` out."""
        query = self._encode(question)[0][:, : self.max_query_length]
        pieces, char_starts, char_ends, is_space = self._encode(context)
        batch = tf.shape(pieces.row_lengths(), out_type=tf.int64)[0]
        windows = sliding_windows(
            pieces.row_lengths(), self.length - query.row_lengths() - 3, self.doc_stride
        )
        doc = tf.gather(
            pieces.flat_values,
            tf.ragged.range(windows.start, windows.start + windows.length)
            + tf.gather(pieces.row_starts(), windows.example)[:, None],
        )
        window_query = tf.gather(query, windows.example)
        outputs = self.model(self._pack(window_query, doc), training=False)
        beam = "cls_logits" in outputs
        if beam:
            starts, ends, scores, null = _beam_candidates(outputs)
        else:
            starts, ends, scores, null = _top_candidates(outputs, self.n_best_size)
        offset = window_query.row_lengths()[:, None, None] + 2  # the context's first position
        first, last = starts - offset, ends - offset
        length = windows.length[:, None, None]
        valid = (first >= 0) & (first < length) & (last < length) & (ends >= starts)
        valid &= ends - starts + 1 <= self.max_answer_length
        best_context = max_context(windows, self.length)
        valid &= tf.gather(best_context, tf.clip_by_value(first, 0, self.length - 1), batch_dims=1)
        # The first best span in the official order (windows, starts, ends): its stable sort.
        count = tf.shape(windows.example, out_type=tf.int64)[0]
        flat = tf.reshape(tf.where(valid, scores, -float("inf")), [count, -1])
        window_best = tf.reduce_max(flat, axis=1)
        order = tf.range(tf.shape(flat, out_type=tf.int64)[1])[None, :]
        within = tf.reduce_min(tf.where(flat == window_best[:, None], order, order[:, -1:]), 1)
        best = tf.math.unsorted_segment_max(window_best, windows.example, batch)
        is_best = tf.equal(window_best, tf.gather(best, windows.example))
        position = tf.range(count)
        chosen = tf.math.unsorted_segment_min(
            tf.where(is_best, position, count), windows.example, batch
        )
        chosen = tf.minimum(chosen, tf.maximum(count - 1, 0))
        found = (
            tf.math.unsorted_segment_max(
                tf.cast(tf.reduce_any(valid, axis=[1, 2]), tf.int32), windows.example, batch
            )
            > 0
        )
        pick = lambda t: tf.gather(tf.reshape(t, [count, -1]), within, batch_dims=1)
        first = _at(pick(first) + windows.start, chosen)
        last = _at(pick(last) + windows.start, chosen)
        start_char, end_char = _strip(
            is_space, _piece_value(char_starts, first), _piece_value(char_ends, last)
        )
        start_char = tf.where(found, start_char, 0)
        end_char = tf.where(found, end_char, 0)
        text = tf.strings.substr(context, start_char, end_char - start_char, unit="UTF8_CHAR")
        # No valid span: the official nonce entry, ("empty", 0, 0) or, for the beam, ("", -1e6,
        # -1e6); no window (an empty context): "" (as `answer_questions` answers it) and
        # no-answer odds 1e6.
        nothing, nothing_score = ("", -2e6) if beam else ("empty", 0.0)
        score = tf.where(found, best, nothing_score)
        null = tf.math.unsorted_segment_min(null, windows.example, batch)  # the lowest
        if not beam:
            null = null - score  # BERT's: the [CLS] span's score less the best span's
        return {
            "answer": tf.where(found, text, tf.where(pieces.row_lengths() > 0, nothing, "")),
            "start_char": start_char,
            "end_char": end_char,
            "score": score,
            "null_odds": tf.where(windows.count > 0, null, tf.constant(1e6, tf.float64)),
        }

    def count_pieces(self, texts: list[str]):
        """Each text's pieces as `answer` encodes a context (for the warm-up requests)."""
        if self._count_pieces is None:  # one trace for every call: the encoding is big
            self._count_pieces = tf.function(
                lambda t: self._encode(t)[0].row_lengths(),
                input_signature=[tf.TensorSpec([None], tf.string)],
            )
        return self._count_pieces(tf.constant(texts, tf.string)).numpy()

    def _encode(self, texts):
        return encode_with_offsets(texts, self.sentencepiece, self.tables, self.lower_case)

    def _pack(self, query, doc):
        """`[CLS] question [SEP] context [SEP]` padded to the sequence length, as
        `squad_features._add_window` packs it, with its segments, padding and `p_mask`."""
        cls, sep, pad = self.special
        rows = query.nrows()
        one = tf.ones([rows, 1], tf.int64)
        ragged = lambda t: tf.RaggedTensor.from_tensor(t)
        tokens = tf.concat([ragged(one * cls), query, ragged(one * sep), doc, ragged(one * sep)], 1)
        ones_q, ones_d = tf.ones_like(query), tf.ones_like(doc)
        segments = tf.concat([ragged(0 * one), 0 * ones_q, ragged(0 * one), ones_d, ragged(one)], 1)
        p_mask = tf.concat([ragged(0 * one), ones_q, ragged(one), 0 * ones_d, ragged(one)], 1)
        shape = [None, self.length]
        return {
            "token_ids": tf.cast(tokens.to_tensor(pad, shape=shape), tf.int32),
            "segment_ids": tf.cast(segments.to_tensor(0, shape=shape), tf.int32),
            "padding_mask": tf.cast(tf.ones_like(tokens).to_tensor(0, shape=shape), tf.int32),
            "p_mask": tf.cast(p_mask.to_tensor(1, shape=shape), tf.int32),
        }


def _top_candidates(outputs, n_best_size: int):
    """The simple head's spans: the `n_best_size` best starts times the best ends (top_k puts
    equal logits in position order, as the official stable sort), scored in float64 as the
    Python post-processing adds them; and each row's [CLS] span score."""
    start_logits = tf.cast(outputs["start_logits"], tf.float32)
    end_logits = tf.cast(outputs["end_logits"], tf.float32)
    start_scores, starts = tf.math.top_k(start_logits, n_best_size)
    end_scores, ends = tf.math.top_k(end_logits, n_best_size)
    scores = (
        tf.cast(start_scores, tf.float64)[:, :, None] + tf.cast(end_scores, tf.float64)[:, None, :]
    )
    starts = tf.broadcast_to(tf.cast(starts, tf.int64)[:, :, None], tf.shape(scores))
    ends = tf.broadcast_to(tf.cast(ends, tf.int64)[:, None, :], tf.shape(scores))
    null = tf.cast(start_logits[:, 0] + end_logits[:, 0], tf.float64)
    return starts, ends, scores, null


def _beam_candidates(outputs):
    """The v2 head's beam: `start_n_top` starts times `end_n_top` ends each; its
    answerability logit is the no-answer score."""
    start_index = tf.cast(outputs["start_top_index"], tf.int64)
    start_scores = tf.cast(outputs["start_top_log_probs"], tf.float64)
    batch, top = tf.shape(start_index)[0], tf.shape(start_index)[1]
    end_index = tf.reshape(tf.cast(outputs["end_top_index"], tf.int64), [batch, top, -1])
    end_scores = tf.reshape(tf.cast(outputs["end_top_log_probs"], tf.float64), [batch, top, -1])
    scores = start_scores[:, :, None] + end_scores
    starts = tf.broadcast_to(start_index[:, :, None], tf.shape(end_index))
    return starts, end_index, scores, tf.cast(outputs["cls_logits"], tf.float64)


def _at(values, index):
    """`values[index]`, 0 where `values` is empty (a batch of empty contexts)."""
    padded = tf.concat([values, tf.zeros([1], values.dtype)], 0)
    return tf.gather(padded, tf.minimum(index, tf.size(values, tf.int64)))


def _piece_value(values, index):
    """`values[row][index[row]]` of a ragged (batch, (pieces)) tensor; 0 for an empty row."""
    padded = tf.concat([values.flat_values, tf.zeros([1], values.dtype)], 0)
    inside = index < values.row_lengths()
    where = tf.where(
        inside, values.row_starts() + tf.maximum(index, 0), tf.size(padded, tf.int64) - 1
    )
    return tf.gather(padded, where)


def _strip(is_space, begin, end):
    """`[start, stop)` of the original characters `begin..end` (inclusive) less leading and
    trailing whitespace, as `str.strip()` (empty where all are whitespace)."""
    dense = is_space.to_tensor(True)
    position = tf.range(tf.shape(dense, out_type=tf.int64)[1])[None, :]
    inside = (position >= begin[:, None]) & (position <= end[:, None]) & ~dense
    big = tf.shape(dense, out_type=tf.int64)[1]
    start = tf.reduce_min(tf.where(inside, position, big), axis=1)
    stop = tf.reduce_max(tf.where(inside, position + 1, 0), axis=1)
    return tf.minimum(start, stop), stop
