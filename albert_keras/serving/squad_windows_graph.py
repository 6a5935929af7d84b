"""SQuAD's sliding windows in TensorFlow ops: `squad_features._windows` and
`_is_max_context` for a batch of contexts, for the exported question answerer's graph."""

from __future__ import annotations

import dataclasses

import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class Windows:
    """The windows of a batch of contexts, all of them in one flat list, example by example.

    Args:
        example: int64 (windows,). The context (batch row) each window belongs to.
        start: int64 (windows,). The index of its first piece in its context.
        length: int64 (windows,). Its context pieces.
        first: int64 (batch,). The index of each context's first window in the list.
        count: int64 (batch,). Each context's windows (0 for a context without pieces).
    """

    example: tf.Tensor
    start: tf.Tensor
    length: tf.Tensor
    first: tf.Tensor
    count: tf.Tensor


def sliding_windows(num_pieces, room, stride: int) -> Windows:
    """The official sliding windows: each starts `min(room, stride)` after the one before, and
    the last reaches the context's end (as `squad_features._windows`).

    Args:
        num_pieces: int64 (batch,). Each context's pieces.
        room: int64 (batch,). The context pieces a window holds (after its question).
        stride: int. The official `doc_stride`.

    Example:
    >>> w = sliding_windows(tf.constant([0, 3, 10], tf.int64), tf.constant([4, 4, 4], tf.int64), 3)
    >>> w.example.numpy().tolist(), w.start.numpy().tolist(), w.length.numpy().tolist()
    ([1, 2, 2, 2], [0, 0, 3, 6], [3, 4, 4, 4])
    """
    step = tf.minimum(room, stride)
    count = tf.where(
        num_pieces <= room,
        tf.minimum(num_pieces, 1),
        (num_pieces - room + step - 1) // step + 1,
    )
    example = tf.repeat(tf.range(tf.size(count, out_type=tf.int64)), count)
    index = tf.ragged.range(count).flat_values
    start = index * tf.gather(step, example)
    length = tf.minimum(tf.gather(num_pieces, example) - start, tf.gather(room, example))
    first = tf.cumsum(count, exclusive=True)
    return Windows(example, start, length, first, count)


def max_context(windows: Windows, width: int):
    """For each window and each of its first `width` positions: whether this window gives the
    piece there its most context, the score being min(left, right context) + 0.01 * window
    length, the first window winning ties (the official `_check_is_max_context`).

    Args:
        windows: Windows.
        width: int. Positions per window (at least the longest window).

    Returns:
        bool (windows, width); False past a window's end.
    """
    widest = tf.reduce_max(tf.concat([windows.count, [1]], 0))
    other = tf.range(widest)[None, :]  # the k-th window of the same context
    exists = other < tf.gather(windows.count, windows.example)[:, None]
    index = tf.gather(windows.first, windows.example)[:, None] + tf.minimum(
        other, tf.maximum(tf.gather(windows.count, windows.example)[:, None] - 1, 0)
    )
    other_start = tf.gather(windows.start, index)[:, None, :]  # (windows, 1, widest)
    other_length = tf.gather(windows.length, index)[:, None, :]
    piece = windows.start[:, None, None] + tf.range(width, dtype=tf.int64)[None, :, None]
    other_end = other_start + other_length - 1
    inside = exists[:, None, :] & (piece >= other_start) & (piece <= other_end)
    score = tf.cast(tf.minimum(piece - other_start, other_end - piece), tf.float64)
    score += 0.01 * tf.cast(other_length, tf.float64)
    score = tf.where(inside, score, -float("inf"))
    best = tf.reduce_max(score, axis=2, keepdims=True)
    winner = tf.reduce_min(tf.where(score == best, other[:, None, :], widest), axis=2)
    own = (tf.range(tf.size(windows.example, out_type=tf.int64)) - tf.gather(
        windows.first, windows.example))[:, None]  # fmt: skip
    within = tf.range(width, dtype=tf.int64)[None, :] < windows.length[:, None]
    return within & tf.equal(winner, own)
