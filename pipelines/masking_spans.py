"""Which tokens the dynamic masking predicts: words, budgets and the greedy n-gram visit.

Steps 1 to 3 of `pipelines.dynamic_masking` (read its docstring first), without a random op:
the draws are made there and passed in, and everything here is compiled by XLA.
`word_structure` finds the words and budgets, `first_draws` turns uniform draws into a visiting
order, `greedy_visit` runs the official greedy over it, and `spans_to_ranks` lists the chosen
spans' tokens.
"""

import tensorflow as tf

from pipelines.masking_rows import gather_rows, running_counts, xla_compiled

__all__ = ["first_draws", "greedy_visit", "spans_to_ranks", "word_structure"]


@xla_compiled
def word_structure(input_ids, input_mask, token_boundary, special_ids, max_ngram, prob, slots):
    """Words and budgets (steps 1 and 2 of `pipelines.dynamic_masking`).

    Args:
        input_ids: int tensor (B, T). Unmasked token ids.
        input_mask: int tensor (B, T). 1 for real tokens.
        token_boundary: int tensor (B, T). 1 where a token starts a word.
        special_ids: tuple of int. Ids never masked ([PAD], [CLS], [SEP]).
        max_ngram: int. Longest span, in words.
        prob: float. `masked_lm_prob`.
        slots: int. P, `max_predictions_per_seq`.

    Returns:
        `candidates_so_far` (B, T): candidates up to and including each position;
        `words_cum` (B, T + max_ngram + 1): rank of each word's first token among the example's
        candidates, `num_candidates` past the last word (so an n-gram running past it is cut
        there, and no index into it clips); `num_words` (B,); `budget` (B,).

    Example:
    >>> ids = tf.constant([[2, 7, 8, 9, 10, 3, 0, 0]])  # words: 7 8 | 9 | 10
    >>> _, words_cum, num_words, budget = word_structure(
    ...     ids, tf.cast(ids > 0, tf.int32), tf.constant([[0, 1, 0, 1, 1, 0, 0, 0]]),
    ...     (0, 2, 3), max_ngram=2, prob=0.5, slots=4)
    >>> words_cum.numpy().tolist(), num_words.numpy().tolist(), budget.numpy().tolist()
    ([[0, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4]], [3], [3])
    """
    batch_size, seq_length = tf.shape(input_ids)[0], input_ids.shape[1]
    real = tf.cast(input_mask, tf.bool)
    candidate = real
    for special in special_ids:
        candidate &= tf.not_equal(input_ids, special)
    boundary_start = candidate & (tf.cast(token_boundary, tf.int32) > 0)
    candidates_so_far, starts_so_far = running_counts([candidate, boundary_start])
    # The first candidate starts a word even without a boundary (`cand_indexes` does so): then
    # every word id moves up by one.
    unmarked_first = tf.reduce_any(candidate & tf.equal(starts_so_far, 0), axis=1)
    word_id = starts_so_far - 1 + tf.cast(unmarked_first, tf.int32)[:, None]
    num_words, num_candidates = word_id[:, -1] + 1, candidates_so_far[:, -1]
    width = seq_length + max_ngram + 1
    rows = tf.range(batch_size)[:, None]
    words_cum = tf.math.unsorted_segment_min(
        candidates_so_far - 1,
        tf.where(candidate, rows * width + word_id, batch_size * width),
        batch_size * width + 1,
    )[:-1]
    words_cum = tf.where(
        tf.range(width)[None, :] < num_words[:, None],
        tf.reshape(words_cum, [batch_size, width]),
        num_candidates[:, None],
    )
    # Round half to even on float64, so budgets match Python's round() in the official code.
    num_tokens = tf.cast(tf.reduce_sum(tf.cast(real, tf.int32), axis=1), tf.float64)
    budget = tf.minimum(slots, tf.maximum(1, tf.cast(tf.round(num_tokens * prob), tf.int32)))
    return candidates_so_far, words_cum, num_words, budget


@xla_compiled
def first_draws(draws: tf.Tensor, num_words: tf.Tensor):
    """Words drawn uniformly with replacement, and which draws are a word's first.

    In order of first draw the words are the start of a uniformly random permutation, as the
    official `rng.shuffle`, without sorting T keys per example; a repeated draw is a no-op step.

    Args:
        draws: float (B, S). Uniform in [0, 1).
        num_words: int (B,).

    Returns:
        `(words, first)`: int (B, S) and bool (B, S).

    Example:
    >>> words, first = first_draws(tf.constant([[0.1, 0.9, 0.2, 0.5]]), tf.constant([3]))
    >>> words.numpy().tolist(), first.numpy().tolist()
    ([[0, 2, 0, 1]], [[True, True, False, True]])
    """
    num_draws = draws.shape[1]
    words = tf.minimum(
        tf.cast(draws * tf.cast(num_words[:, None], tf.float32), tf.int32),
        tf.maximum(num_words[:, None] - 1, 0),
    )
    earlier = tf.range(num_draws)[:, None] > tf.range(num_draws)[None, :]
    repeat = tf.reduce_any(tf.equal(words[:, :, None], words[:, None, :]) & earlier, axis=2)
    return words, ~repeat & (num_words[:, None] > 0)


@xla_compiled
def greedy_visit(words, first, ngram, max_ngram, words_cum, budget, spans):
    """Runs the official greedy over `words` where `first`, one visited word per loop step.

    Spans are kept as ranges of candidate ranks (the i-th candidate token of an example has rank
    i), which words partition, so touching a masked word is overlapping a taken range. At most P
    spans are taken, so the loop state is a few (B, P) tensors, not a (B, T) map that every
    step would copy.

    Args:
        words: int (B, S). Words in visiting order; steps where `first` (B, S) is False are
            skipped (a word visited already, or past the row's words).
        ngram: int (B, S). The n drawn at each step, at most `max_ngram`.
        words_cum: int (B, C). See `word_structure`.
        budget: int (B,). Tokens to mask.
        spans: `(lo, hi, num_spans, num_masked)`: the rank ranges [lo, hi) taken so far, (B, P)
            each, how many (B,) and the tokens in them (B,).

    Returns:
        The new `spans`.

    Example:
    Words 7 8 | 9 | 10 as in `word_structure`'s example, a budget of 3 tokens: word 2 (rank 3)
    is taken, then word 0's bigram (ranks 0-2) overshoots by one, so its unigram is taken.
    >>> no_spans, none = tf.zeros([1, 4], tf.int32), tf.zeros([1], tf.int32)
    >>> spans = greedy_visit(
    ...     tf.constant([[2, 0, 1]]), tf.constant([[True, True, True]]), tf.constant([[1, 2, 1]]),
    ...     2, tf.constant([[0, 2, 3] + [4] * 8]), tf.constant([3]),
    ...     (no_spans, no_spans, none, none))
    >>> [s.numpy().tolist() for s in spans]
    [[[3, 0, 0, 0]], [[4, 2, 0, 0]], [2], [3]]
    """
    num_slots = spans[0].shape[1]
    num_steps = words.shape[1]
    # Everything that does not depend on earlier steps, time-major (one row read per step):
    # bounds[..., 0] is where the anchor word starts, bounds[..., n] where its n-gram ends.
    bounds = gather_rows(words_cum, words[:, :, None] + tf.range(max_ngram + 1))
    drawn = (tf.range(max_ngram) < ngram[:, :, None]) & first[:, :, None]
    bounds, drawn = tf.transpose(bounds, [1, 0, 2]), tf.transpose(drawn, [1, 0, 2])
    last_step = tf.reduce_max(tf.where(first, tf.range(1, num_steps + 1), 0), axis=1)
    slot = tf.range(num_slots)[None, :]

    def keep_visiting(step, lo, hi, num_spans, num_masked):
        return (step < num_steps) & tf.reduce_any((num_masked < budget) & (step < last_step))

    def visit(step, lo, hi, num_spans, num_masked):
        start, ends = bounds[step][:, 0], bounds[step][:, 1:]
        # The official loop shortens the drawn n-gram until it fits what is left of the budget;
        # ends grow with n, so the n that fit are a prefix and the longest is their max.
        fits = drawn[step] & (ends - start[:, None] <= (budget - num_masked)[:, None])
        end = tf.reduce_max(tf.where(fits, ends, 0), axis=1)
        overlaps = tf.reduce_any((lo < end[:, None]) & (start[:, None] < hi), axis=1)
        take = fits[:, 0] & ~overlaps
        into = tf.equal(slot, num_spans[:, None]) & take[:, None]
        return (
            step + 1,
            tf.where(into, start[:, None], lo),
            tf.where(into, end[:, None], hi),
            num_spans + tf.cast(take, tf.int32),
            num_masked + tf.where(take, end - start, 0),
        )

    return tf.while_loop(keep_visiting, visit, (tf.constant(0), *spans))[1:]


@xla_compiled
def spans_to_ranks(lo, hi, num_spans):
    """Lists the ranks inside the spans in ascending order, padded with 0.

    (B, P, P) comparisons rather than a sort: XLA fuses them, and its sort costs more.

    Args:
        lo, hi: int (B, P). The rank ranges [lo, hi) of the spans, in the order taken.
        num_spans: int (B,). How many of the P slots hold a span.

    Returns:
        `(ranks, used)`: int (B, P) and bool (B, P).

    Example:
    >>> ranks, used = spans_to_ranks(tf.constant([[5, 1, 0]]), tf.constant([[7, 2, 0]]),
    ...                              tf.constant([2]))
    >>> ranks.numpy().tolist(), used.numpy().tolist()
    ([[1, 5, 6]], [[True, True, True]])
    """
    num_slots = lo.shape[1]
    slot = tf.range(num_slots)
    length = tf.where(slot[None, :] < num_spans[:, None], hi - lo, 0)
    # Tokens in the spans that start before each span: where its ranks go in the slot list.
    before = tf.reduce_sum(tf.where(lo[:, None, :] < lo[:, :, None], length[:, None, :], 0), axis=2)
    # inside[b, i, j]: slot i holds a rank of span j.
    offset = slot[None, :, None] - before[:, None, :]
    inside = (offset >= 0) & (offset < length[:, None, :])
    ranks = tf.reduce_sum(tf.where(inside, lo[:, None, :] + offset, 0), axis=2)
    return ranks, tf.reduce_any(inside, axis=2)
