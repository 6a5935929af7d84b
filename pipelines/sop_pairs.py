"""Sentence pairs for sentence-order prediction (and NSP, or single segments), as token spans.

`create_pairs` follows the official `create_instances_from_document`: per document a target
length (`max_seq_length - 3`, or with `short_seq_prob` a random one), sentences gathered into a
chunk until it reaches the target, a random split point `a_end`, then `truncate_seq_pair`
(the longer side loses a token from the front or the back at random). Where we differ, on
purpose (docs/design.md): with `sop` a negative is always the same two segments swapped, and a chunk
holding one sentence is split inside it at a random point (one token long: skipped, counted).

A pair is kept as spans into the group's flat token array (every segment is a contiguous run of
it), so `pack_pairs` builds `[CLS] A [SEP] B [SEP]` for thousands of pairs with a few NumPy ops.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from albert_keras_settings.choices import SENTENCE_OBJECTIVES


class SentencePairs(NamedTuple):
    """Token spans of the pairs of one group (int64 arrays, one entry per pair).

    `a_start`/`a_length` and `b_start`/`b_length` index the group's flat token array
    (`b_length` is 0 with the `none` objective); `label` is `next_sentence_labels`.
    """

    a_start: np.ndarray
    a_length: np.ndarray
    b_start: np.ndarray
    b_length: np.ndarray
    label: np.ndarray


class PackedPairs(NamedTuple):
    """Padded (N, max_seq_length) features of packed pairs, before masking: `input_ids` int32,
    the 0/1 features uint8."""

    input_ids: np.ndarray
    input_mask: np.ndarray
    segment_ids: np.ndarray
    token_boundary: np.ndarray


def create_pairs(
    documents: Sequence[Sequence[int]],
    *,
    max_seq_length: int,
    short_seq_prob: float,
    sentence_objective: str,
    rng: random.Random,
    counters: dict[str, int] | None = None,
) -> SentencePairs:
    """Cuts documents into sentence pairs, one pass over every document.

    Args:
        documents: list of documents, each a list of its sentences' token lengths (all > 0).
            The sentences of all documents follow each other in one flat token array.
        max_seq_length: int. Length of a packed example, [CLS]/[SEP] included.
        short_seq_prob: float. Chance that a document gets a random, shorter target length.
        sentence_objective: str. `"sop"`, `"nsp"` (B from another document of `documents`)
            or `"none"` (one segment).
        rng: `random.Random`. Every draw comes from it.
        counters: dict or None. Adds `single_segment_splits` and `single_segment_too_short`.

    Returns:
        A `SentencePairs`.

    Example:
    >>> pairs = create_pairs([[5, 7, 4]], max_seq_length=16, short_seq_prob=0.0,
    ...                      sentence_objective="sop", rng=random.Random(1))
    >>> int(pairs.a_length[0] + pairs.b_length[0])
    13
    """
    if sentence_objective not in SENTENCE_OBJECTIVES:
        raise ValueError(
            f"sentence_objective={sentence_objective!r}; expected one of {SENTENCE_OBJECTIVES}"
        )
    max_num_tokens = max_seq_length - (2 if sentence_objective == "none" else 3)
    if max_num_tokens < 2:
        raise ValueError(f"max_seq_length={max_seq_length} leaves no room for two segments")
    counters = counters if counters is not None else {}
    counters.setdefault("single_segment_splits", 0)
    counters.setdefault("single_segment_too_short", 0)
    # Token offset of every sentence start (and each document's end), in the flat array.
    offsets, position = [], 0
    for lengths in documents:
        starts = list(itertools.accumulate(lengths, initial=position))
        position = starts[-1]
        offsets.append(starts)
    spans: list[tuple[int, int, int, int, int]] = []
    for index in range(len(documents)):
        _document_pairs(
            index, offsets, max_num_tokens, short_seq_prob, sentence_objective, rng, spans, counters
        )
    columns = np.array(spans, dtype=np.int64).reshape(-1, 5).T
    return SentencePairs(*columns)


def _document_pairs(index, offsets, max_num_tokens, short_seq_prob, objective, rng, spans, counts):
    starts = offsets[index]
    num_sentences = len(starts) - 1
    # As the official code: one target per document (and dupe round).
    target = max_num_tokens
    if rng.random() < short_seq_prob:
        target = _randint(rng, 2, max_num_tokens)
    first = 0
    while first < num_sentences:
        # The chunk ends at the first sentence that brings it to the target (or the document's
        # last): the official loop adds a sentence at a time; bisect finds the same one in C.
        last = min(bisect.bisect_left(starts, starts[first] + target, first + 1), num_sentences) - 1
        size = last - first + 1
        if objective == "none":
            a, b, label = (starts[first], starts[last + 1]), (0, 0), 0
        elif objective == "nsp":
            a_end = _randint(rng, 1, size - 1) if size >= 2 else 1
            a = (starts[first], starts[first + a_end])
            if size == 1 or rng.random() < 0.5:
                b, label = _random_next(index, offsets, target - (a[1] - a[0]), rng), 1
                # As the official code: the chunk's unused sentences start the next chunk.
                last = first + a_end - 1
            else:
                b, label = (starts[first + a_end], starts[last + 1]), 0
        elif size >= 2:
            middle = starts[first + _randint(rng, 1, size - 1)]
            a, b = (starts[first], middle), (middle, starts[last + 1])
            a, b, label = (b, a, 1) if rng.random() < 0.5 else (a, b, 0)
        else:
            # Our sop rule: split the lone sentence so the label still means order only.
            begin, end = starts[first], starts[last + 1]
            first = last + 1
            if end - begin < 2:
                counts["single_segment_too_short"] += 1
                continue
            counts["single_segment_splits"] += 1
            cut = begin + _randint(rng, 1, end - begin - 1)
            a, b = (begin, cut), (cut, end)
            a, b, label = (b, a, 1) if rng.random() < 0.5 else (a, b, 0)
        spans.append(_truncated(a, b, max_num_tokens, rng) + (label,))
        first = last + 1


def _randint(rng, low, high):
    """A uniform integer in [low, high] from one `random()` (5x cheaper than `randint`)."""
    return low + int(rng.random() * (high - low + 1))


def _random_next(index, offsets, target_length, rng):
    """Segment B from another document, as the official code (10 tries to avoid this one)."""
    for _ in range(10):
        other = _randint(rng, 0, len(offsets) - 1)
        if other != index:
            break
    starts = offsets[other]
    first = _randint(rng, 0, len(starts) - 2)
    # Whole sentences until the target is reached (at least one).
    last = bisect.bisect_left(starts, starts[first] + target_length, first + 1)
    return starts[first], starts[min(last, len(starts) - 1)]


def _truncated(a, b, max_num_tokens, rng):
    """The official `truncate_seq_pair`, in closed form; returns `(a_start, a_len, b_start, b_len)`.

    The official loop drops one token at a time from the longer segment (B on a tie), from the
    front or the back with p 0.5. So the counts dropped from each side follow from the lengths,
    and the number dropped from a side's front is Binomial(dropped, 0.5): a popcount of random bits.
    """
    a_length, b_length = a[1] - a[0], b[1] - b[0]
    excess = a_length + b_length - max_num_tokens
    if excess > 0:
        shorter = min(a_length, b_length)
        gap = abs(a_length - b_length)
        if excess <= gap:
            a_cut, b_cut = (excess, 0) if a_length > b_length else (0, excess)
        else:
            rest = excess - gap
            a_cut = a_length - shorter + rest // 2
            b_cut = b_length - shorter + (rest + 1) // 2
        a_front = rng.getrandbits(a_cut).bit_count() if a_cut else 0
        b_front = rng.getrandbits(b_cut).bit_count() if b_cut else 0
        return a[0] + a_front, a_length - a_cut, b[0] + b_front, b_length - b_cut
    return a[0], a_length, b[0], b_length


def pack_pairs(
    tokens: np.ndarray,
    pairs: SentencePairs,
    *,
    max_seq_length: int,
    cls_id: int,
    sep_id: int,
    word_starts: np.ndarray,
) -> PackedPairs:
    """Builds `[CLS] A [SEP] B [SEP]` (or `[CLS] A [SEP]` when every B is empty), padded with 0.

    Args:
        tokens: int array. The group's flat token array that `pairs` indexes.
        pairs: `SentencePairs`.
        max_seq_length: int. The padded length T.
        cls_id, sep_id: int. Ids of `[CLS]` and `[SEP]`.
        word_starts: bool array (vocabulary_size,). Which ids start a word.

    Returns:
        A `PackedPairs`. `token_boundary` is 1 at [CLS]/[SEP] and at word starts, as the
        official code, and also at the first token of each segment: truncation can leave a
        word's tail there, and it must not join the last word before the [SEP].
    """
    a_length = pairs.a_length.astype(np.int32)[:, None]
    b_length = pairs.b_length.astype(np.int32)[:, None]
    two_segments = bool(pairs.b_length.size) and bool(pairs.b_length.min() > 0)
    length = a_length + b_length + (3 if two_segments else 2)
    if length.size and length.max() > max_seq_length:
        raise ValueError(f"a pair of {length.max()} tokens exceeds max_seq_length={max_seq_length}")
    j = np.arange(max_seq_length, dtype=np.int32)[None, :]
    in_a = (j >= 1) & (j <= a_length)
    b_first = a_length + 2
    in_b = (j >= b_first) & (j < b_first + b_length)
    a_source = pairs.a_start.astype(np.int32)[:, None] + (j - 1)
    source = np.where(in_b, pairs.b_start.astype(np.int32)[:, None] + (j - b_first), a_source)
    real = in_a | in_b
    input_ids = np.where(real, np.take(tokens, source, mode="clip") if tokens.size else 0, 0)
    input_ids = input_ids.astype(np.int32, copy=False)
    token_boundary = word_starts[input_ids] & real
    # A [SEP] inside a segment (RoBERTa's between documents, `sentence_packing`) is a word
    # boundary, and so is the token after it, as at a segment's edges.
    inner_sep = (input_ids == sep_id) & real
    if inner_sep.any():
        token_boundary |= inner_sep
        token_boundary[:, 1:] |= inner_sep[:, :-1] & real[:, 1:]
    token_boundary = token_boundary.view(np.uint8)
    # [CLS], the [SEP]s, and each segment's first token: set per row, not by full-width masks.
    rows = np.arange(len(input_ids))
    first_of_b = b_first[:, 0] if two_segments else np.zeros(0, np.int32)
    for column, value in [(0, cls_id), (a_length[:, 0] + 1, sep_id), (length[:, 0] - 1, sep_id)]:
        input_ids[rows, column] = value
        token_boundary[rows, column] = 1
    token_boundary[:, 1] = 1
    token_boundary[rows[: first_of_b.size], first_of_b] = 1
    input_mask = (j < length).view(np.uint8)
    if two_segments:
        segment_ids = ((j >= b_first) & (j < length)).view(np.uint8)
    else:
        segment_ids = np.zeros(input_ids.shape, np.uint8)
    return PackedPairs(input_ids, input_mask, segment_ids, token_boundary)
