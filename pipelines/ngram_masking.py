"""N-gram whole-word masking of a batch of packed examples, in NumPy.

`mask_ngrams` makes the same choices as the official `create_masked_lm_predictions`:

1. Words come from `token_boundary`: a candidate token (real, not [CLS]/[SEP]/padding) with
   boundary 1 starts a word, any other joins the word before it.
2. `num_to_predict = min(max_predictions_per_seq, max(1, round(num_tokens * masked_lm_prob)))`,
   `num_tokens` counting [CLS] and [SEP] (the official code uses `len(tokens)`).
3. Words are visited in a random order; at each, `n <= ngram` is drawn with p proportional to
   1/n and the span is the next `n` words (cut at the last word). A span that would overshoot the
   budget is shortened one word at a time; one that still does not fit, or touches a word masked
   already, is skipped. The visit stops once the budget is met.
4. Each chosen token becomes [MASK] with p 0.8, stays with p 0.1, and becomes a random id with
   p 0.1.

The visit (3) is sequential by nature, so each step visits one word of every example at once:
a few dozen NumPy steps mask thousands of examples. Every draw comes from the generator passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np


class MaskedBatch(NamedTuple):
    """The masked-LM features of a batch, and counts for the statistics.

    `input_ids` (N, T) has the replacements applied; `masked_lm_positions`, `masked_lm_ids`
    (int32) and `masked_lm_weights` (float32) are (N, P), sorted by position, zero-padded.
    `drawn_ngrams` counts the n drawn at each visited word (index n); `span_words` counts the
    chosen spans by length in words (index n); `merged_span_words` counts
    runs of masked words once adjacent spans merge (last index: longer than `ngram`), as the
    reference statistics measure them; `replacements` counts `[MASK]`, kept and random tokens;
    `num_to_predict` is each example's budget.
    """

    input_ids: np.ndarray
    masked_lm_positions: np.ndarray
    masked_lm_ids: np.ndarray
    masked_lm_weights: np.ndarray
    num_to_predict: np.ndarray
    drawn_ngrams: np.ndarray
    span_words: np.ndarray
    merged_span_words: np.ndarray
    replacements: np.ndarray


def ngram_probabilities(ngram: int) -> np.ndarray:
    """p(n) proportional to 1/n for n = 1..ngram (the paper's n-gram masking, section 4.1)."""
    weights = 1.0 / np.arange(1, ngram + 1)
    return weights / weights.sum()


def mask_ngrams(
    input_ids: np.ndarray,
    token_boundary: np.ndarray,
    input_mask: np.ndarray,
    *,
    rng: np.random.Generator | Sequence[np.random.Generator],
    rows_per_rng: Sequence[int] | None = None,
    max_predictions_per_seq: int,
    masked_lm_prob: float = 0.15,
    ngram: int = 3,
    vocabulary_size: int,
    special_ids: tuple[int, ...] = (2, 3),
    mask_id: int = 4,
    first_normal_id: int = 5,
) -> MaskedBatch:
    """Chooses and replaces n-gram whole-word masks for every example of a batch.

    Args:
        input_ids: int array (N, T). Packed examples (`[CLS] A [SEP] B [SEP]`, padded).
        token_boundary: int array (N, T). 1 where a token starts a word.
        input_mask: int array (N, T). 1 on real tokens, 0 on padding.
        rng: `np.random.Generator`, or one per run of rows (then `rows_per_rng` says how many
            rows each takes). Every draw comes from it; with several, a run's draws come from its
            own generator exactly as if the run were masked alone, so the statistics of the
            result (`drawn_ngrams`, `span_words`, `merged_span_words`, `replacements`) get a
            leading axis, one row per generator.
        rows_per_rng: list of int, summing to N, with a list of generators; else None.
        max_predictions_per_seq: int. P, the most masked tokens per example.
        masked_lm_prob: float. Share of the tokens to mask (before the cap P).
        ngram: int. Longest span in words.
        vocabulary_size: int. Random replacements are drawn from [first_normal_id, this).
        special_ids: ids never masked besides padding ([CLS], [SEP]).
        mask_id: int. Id of `[MASK]`.
        first_normal_id: int. The first id a random replacement may take.

    Returns:
        A `MaskedBatch`.

    Example:
    >>> ids = np.array([[2, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 3, 0, 0, 0]])
    >>> mask = np.array([[1] * 13 + [0] * 3])
    >>> boundary = np.array([[0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0]])
    >>> batch = mask_ngrams(ids, boundary, mask, rng=np.random.default_rng(0),
    ...                     max_predictions_per_seq=4, masked_lm_prob=0.3, vocabulary_size=30)
    >>> batch.masked_lm_weights.sum(axis=1)  # the tokens masked in each row, at most P
    array([4.], dtype=float32)
    """
    num_examples, seq_length = input_ids.shape
    rngs, row_rng = _generator_runs(rng, rows_per_rng, num_examples)
    words = _find_words(input_ids, token_boundary, input_mask, special_ids)
    num_tokens = (input_mask != 0).sum(axis=1)
    budget = np.minimum(
        max_predictions_per_seq, np.maximum(1, np.round(num_tokens * masked_lm_prob))
    ).astype(np.int64)
    draws = _StepDraws(rngs, row_rng, words.num_words)
    covered, span_words, drawn_ngrams = _choose_spans(
        draws, words.num_words, words.first_word, words.word_end, budget, ngram
    )
    # Token level: a candidate token is masked when its word is; in row-major order the
    # positions come out sorted, as the official code sorts its masked_lms.
    masked = words.flat_token[covered[words.token_word]]
    row = masked // seq_length
    slots = _prediction_slots(input_ids, masked, max_predictions_per_seq)
    output_ids, replacements = _replace(
        input_ids, masked, row_rng[row], rngs, mask_id, first_normal_id, vocabulary_size
    )
    merged_span_words = _run_lengths(covered, words.word_row, ngram, row_rng, len(rngs))
    if len(rngs) == 1 and not isinstance(rng, Sequence):
        drawn_ngrams, span_words = drawn_ngrams[0], span_words[0]
        merged_span_words, replacements = merged_span_words[0], replacements[0]
    return MaskedBatch(output_ids, *slots, budget, drawn_ngrams, span_words, merged_span_words,
                       replacements)  # fmt: skip


def _generator_runs(rng, rows_per_rng, num_examples: int):
    """`(rngs, row_rng)`: the generators as a list, and the index of each row's generator."""
    rngs = [rng] if rows_per_rng is None else list(rng)
    rows_per_rng = [num_examples] if rows_per_rng is None else list(rows_per_rng)
    if len(rngs) != len(rows_per_rng) or sum(rows_per_rng) != num_examples:
        raise ValueError(
            f"{len(rngs)} generators for runs of {rows_per_rng} rows; expected one per run, "
            f"{num_examples} rows in all"
        )
    return rngs, np.repeat(np.arange(len(rngs)), rows_per_rng)


class _Words(NamedTuple):
    """Step 1, on the candidate tokens only, by flat index in row-major order (1-D gathers and
    scatters cost a fraction of 2-D fancy indexing). Words are numbered across rows (row r's
    are `first_word[r]` onwards); `word_end[w]` counts the candidate tokens before word w, so a
    span's size is a difference."""

    flat_token: np.ndarray  # (C,) the candidates' flat indices
    token_word: np.ndarray  # (C,) each candidate's word
    word_end: np.ndarray  # (W + 1,)
    word_row: np.ndarray  # (W,)
    num_words: np.ndarray  # (N,)
    first_word: np.ndarray  # (N,)


def _find_words(input_ids, token_boundary, input_mask, special_ids) -> _Words:
    num_examples = input_ids.shape[0]
    candidate = input_mask != 0
    for special in special_ids:
        candidate &= input_ids != special
    # A word starts at a candidate with boundary 1, and at a row's first candidate whatever it
    # is: marked on the (N, T) grid, whose rows give each row's words without dividing flat
    # indices by T.
    word_start = candidate & (token_boundary != 0)
    rows = np.flatnonzero(candidate.any(axis=1))
    word_start[rows, candidate[rows].argmax(axis=1)] = True
    num_words = np.count_nonzero(word_start, axis=1)
    flat_token = np.flatnonzero(candidate)
    starts = word_start.reshape(-1)[flat_token]
    word_end = np.append(np.flatnonzero(starts), flat_token.size)
    word_row = np.repeat(np.arange(num_examples), num_words)
    first_word = np.cumsum(num_words) - num_words
    return _Words(flat_token, np.cumsum(starts) - 1, word_end, word_row, num_words, first_word)


def _prediction_slots(input_ids, masked, max_predictions_per_seq: int):
    """`masked_lm_positions`, `masked_lm_ids`, `masked_lm_weights` (N, P) of the masked tokens
    (flat indices, sorted), zero-padded."""
    num_examples, seq_length = input_ids.shape
    row, position = np.divmod(masked, seq_length)
    counts = np.bincount(row, minlength=num_examples)
    slot = row * max_predictions_per_seq + (
        np.arange(row.size) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    shape = (num_examples, max_predictions_per_seq)
    masked_lm_positions = np.zeros(shape, np.int32)
    masked_lm_ids = np.zeros(shape, np.int32)
    masked_lm_weights = np.zeros(shape, np.float32)
    masked_lm_positions.reshape(-1)[slot] = position
    masked_lm_ids.reshape(-1)[slot] = input_ids.reshape(-1)[masked]
    masked_lm_weights.reshape(-1)[slot] = 1.0
    return masked_lm_positions, masked_lm_ids, masked_lm_weights


def _replace(input_ids, masked, token_rng, rngs, mask_id, first_normal_id, vocabulary_size):
    """Step 4: the input ids with the masked tokens replaced, and per generator the counts of
    `[MASK]`, kept and random replacements."""
    # One uniform per masked token: [0, 0.8) -> [MASK], [0.8, 0.9) kept, [0.9, 1) random.
    # Masked tokens come in row order, so each generator's are a contiguous run.
    per_rng = np.bincount(token_rng, minlength=len(rngs)).tolist()
    draw = np.concatenate([g.random(n) for g, n in zip(rngs, per_rng)])
    random_ids = np.concatenate(
        [g.integers(first_normal_id, vocabulary_size, size=n) for g, n in zip(rngs, per_rng)]
    )
    output_ids = input_ids.copy()
    to_mask, to_random = draw < 0.8, draw >= 0.9
    output_ids.reshape(-1)[masked[to_mask]] = mask_id
    output_ids.reshape(-1)[masked[to_random]] = random_ids[to_random]
    kind = np.where(to_mask, 0, np.where(to_random, 2, 1))
    return output_ids, _per_rng_bincount(token_rng, kind, len(rngs), 3)


def _choose_spans(draws, num_words, first_word, word_end, budget, ngram):
    """Step 3: the greedy visit, one word per example per step. Returns which words are covered
    and, per generator, the span lengths kept and the n drawn."""
    total_words = word_end.size - 1
    cumulative = np.cumsum(ngram_probabilities(ngram))[:-1]
    # The visit order is an incremental Fisher-Yates shuffle of each row's words: step k swaps
    # a random unvisited word into place k, so only visited places cost a draw (a full shuffle
    # or a sort of every row would cost far more, as most rows stop after a few dozen words).
    # order[first_word[r] + k] is a word of row r, numbered within the row.
    order = np.arange(total_words, dtype=np.int64) - np.repeat(first_word, num_words)
    # `covered` is padded by `ngram` words so a span's cells never run past the array (cells
    # past a row's last word are masked out by `in_span`).
    covered = np.zeros(total_words + ngram, bool)
    offsets = np.arange(ngram + 1)
    # The rows still visiting, and their state, kept compact: one step costs a few dozen NumPy
    # calls on arrays of that size.
    rows = np.flatnonzero(num_words > 0)
    room, words, base = budget[rows], num_words[rows], first_word[rows]
    drawn, drawn_rows, kept, kept_rows = [], [], [], []
    for step in range(int(num_words.max(initial=0))):
        going = (room > 0) & (words > step)
        if not going.all():
            rows, room, words, base = rows[going], room[going], words[going], base[going]
        if rows.size == 0:
            break
        pick_draw, n_draw = draws.step(rows)
        here = base + step
        pick = here + (pick_draw * (words - step)).astype(np.int64)
        start = order[pick]
        order[pick] = order[here]
        # As the official code, n is drawn at every visited word, kept or not (here n - 1).
        n_less_one = np.searchsorted(cumulative, n_draw, side="right")
        drawn.append(n_less_one)
        drawn_rows.append(rows)
        # Tokens in spans of 1..ngram words from `start` (cut at the row's last word). Sizes grow
        # with m, so the m that fit (m <= n and size <= room) are 1..chosen: the official code's
        # "shorten until it fits" picks the longest of them. Arrays are (m, rows): NumPy's inner
        # loops then run along the rows, not along a few m (~2x faster on this loop).
        ends = np.minimum(start + offsets[:, None], words)
        bounds = word_end[base + ends]
        fits = (bounds[1:] - bounds[0]) <= room
        chosen = np.minimum(_count_rows(fits), n_less_one + 1)
        # Column r's entry `chosen` of `ends` / `bounds`, by flat index (no take_along_axis).
        at = chosen * rows.size + np.arange(rows.size)
        length = ends.reshape(-1)[at] - start
        in_span = offsets[:-1, None] < length
        cells = (base + start) + offsets[:-1, None]
        take = (length > 0) & (_count_rows(covered[cells] & in_span) == 0)
        covered[cells[in_span & take]] = True
        room = room - np.where(take, bounds.reshape(-1)[at] - bounds[0], 0)
        kept.append(length[take])
        kept_rows.append(rows[take])
    draws.finish()
    row_rng, num_rngs = draws.row_rng, len(draws.rngs)
    drawn = _per_rng_bincount(
        row_rng[_concatenate(drawn_rows)], 1 + _concatenate(drawn), num_rngs, ngram + 1
    )
    kept = _per_rng_bincount(
        row_rng[_concatenate(kept_rows)], _concatenate(kept), num_rngs, ngram + 1
    )
    return covered[:total_words], kept, drawn


def _count_rows(flags):
    """`flags.sum(axis=0)` of a (few, rows) bool array, as int64 row adds (the reduction's casts
    cost more than these few adds)."""
    count = flags[0].astype(np.int64)
    for row in flags[1:]:
        count += row
    return count


def _concatenate(arrays):
    return np.concatenate(arrays).astype(np.int64) if arrays else np.zeros(0, np.int64)


def _per_rng_bincount(rng_index, values, num_rngs, size):
    """Histograms (num_rngs, size) of `values` (< size), one per generator."""
    flat = np.bincount(rng_index * size + values, minlength=num_rngs * size)
    return flat.reshape(num_rngs, size)


class _StepDraws:
    """The two uniforms per visiting row of each step of `_choose_spans`.

    With one generator, a step draws `(2, rows)` from it. With several, each generator's rows
    need the same stream as alone (a step: its rows' pick draws, then their n draws), but one call
    per generator per step would cost what batching saves; so each generator pre-draws a buffer
    (grown if a run needs more), steps gather from it, and `finish` rewinds every generator to
    just past what was used (the draws are a fixed sequence of doubles, so re-drawing that many
    from the saved state lands on the same state).
    """

    _STEPS_AHEAD = 32

    def __init__(self, rngs, row_rng, num_words):
        self.rngs, self.row_rng = rngs, row_rng
        if len(rngs) == 1:
            return
        self.states = [g.bit_generator.state for g in rngs]
        # A row visits at most all its words; most stop well before `_STEPS_AHEAD`.
        steps = np.minimum(num_words, self._STEPS_AHEAD)
        need = np.bincount(row_rng, weights=steps, minlength=len(rngs)).astype(np.int64)
        self.buffers = [g.random(2 * n) for g, n in zip(rngs, need.tolist())]
        self.used = np.zeros(len(rngs), np.int64)
        self._join()

    def _join(self):
        sizes = np.array([b.size for b in self.buffers], np.int64)
        self.size, self.start = sizes, np.cumsum(sizes) - sizes
        self.buffer = np.concatenate(self.buffers)

    def step(self, rows):
        if len(self.rngs) == 1:
            return self.rngs[0].random((2, rows.size))
        # `rows` is sorted, so each generator's rows are a contiguous run of it.
        owner = self.row_rng[rows]
        counts = np.bincount(owner, minlength=len(self.rngs))
        short = np.flatnonzero(self.used + 2 * counts > self.size)
        if short.size:
            for g in short.tolist():
                more = self.rngs[g].random(2 * self._STEPS_AHEAD * int(counts[g]))
                self.buffers[g] = np.concatenate([self.buffers[g], more])
            self._join()
        first = np.cumsum(counts) - counts
        pick = (self.start + self.used - first)[owner] + np.arange(rows.size)
        self.used += 2 * counts
        return self.buffer[pick], self.buffer[pick + counts[owner]]

    def finish(self):
        if len(self.rngs) == 1:
            return
        for g, state, used in zip(self.rngs, self.states, self.used.tolist()):
            g.bit_generator.state = state
            g.random(used)


def _run_lengths(covered, word_row, ngram, row_rng, num_rngs):
    """Counts runs of consecutive masked words of a row by length (last bin: longer than
    `ngram`), per generator: (num_rngs, ngram + 2)."""
    words = np.flatnonzero(covered)
    row = word_row[words]
    # A run ends at a gap or at a row's end.
    breaks = np.flatnonzero((np.diff(words) != 1) | (row[1:] != row[:-1])) + 1
    starts = np.concatenate([[0], breaks]).astype(np.int64) if words.size else words
    lengths = np.diff(np.append(starts, words.size)) if words.size else words
    return _per_rng_bincount(
        row_rng[row[starts]], np.minimum(lengths, ngram + 1), num_rngs, ngram + 2
    )
