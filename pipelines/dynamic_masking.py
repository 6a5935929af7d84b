"""Dynamic n-gram whole-word masking of a batch of pretraining examples, in TensorFlow ops.

`remask_batch` undoes the static masks a record was written with and draws new ones, so every
epoch sees different masked positions (RoBERTa's dynamic masking) while the records stay the
official google-research/albert ones. It follows the official `create_masked_lm_predictions`:

1. Words come from `token_boundary`: a candidate token (real, not [CLS]/[SEP]/padding) with
   boundary 1 starts a word, any other joins the word before it (the very first candidate always
   starts one, as `cand_indexes` does).
2. `num_to_predict = min(max_predictions_per_seq, max(1, round(num_tokens * masked_lm_prob)))`
   where `num_tokens` counts [CLS] and [SEP] (the official code uses `len(tokens)`).
3. Words are visited in a random order; at each, `n <= max_ngram` is drawn with p proportional to
   1/n and the span is the next `n` words (cut at the last word). A span that would overshoot the
   budget is shortened one word at a time; one that still does not fit, or touches a word masked
   already, is skipped. The visit stops once the budget is met exactly.
4. Each chosen token becomes [MASK] with p 0.8, stays itself with p 0.1, and becomes a random id
   with p 0.1.

The visit (3) is sequential by nature, so it is one `tf.while_loop` step per visited word, each
step vectorized over the whole batch and everything that does not depend on earlier steps computed
before the loop. The loop ends as soon as every example has met its budget, which takes a few
dozen steps whatever the sequence length; the random order comes from draws with replacement (see
`_first_draws`), so no example sorts T keys.

Speed (the reader's goal is 20,000 examples/s per core at seq 512): the parts without a random op
are compiled by XLA, which fuses their element-wise work and runs the loop without TF's per-step
executor cost; every draw is a TF stateless op outside them, keyed by the `seed` passed in, so a
batch and a seed give the same masks on every run and machine. Compiling is paid once, at the
first batch (`benchmarks/first_batch.py` times it).
"""

import tensorflow as tf

# ALBERT's ids (<pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4; replacements from 5 on).
from pipelines.special_tokens import CLS_ID, FIRST_NORMAL_ID, MASK_ID, PAD_ID, SEP_ID

__all__ = [
    "CLS_ID",
    "FIRST_NORMAL_ID",
    "MASK_ID",
    "PAD_ID",
    "SEP_ID",
    "mask_whole_word_ngrams",
    "remask_batch",
    "restore_original_tokens",
]

# Compiled by XLA, traced as written: the functions below branch and loop only on Python values
# (the loop on tensors is an explicit `tf.while_loop`), so AutoGraph has nothing to convert, yet
# converting them and every helper they call (parsing and rewriting their source) cost ~0.7
# CPU-s of the reader's time to its first dynamically masked batch (benchmarks/first_batch.py).
_xla = tf.function(jit_compile=True, autograph=False)


def _gather_rows(values: tf.Tensor, index: tf.Tensor) -> tf.Tensor:
    """`values[b, index[b, ...]]` for (B, W) values: one flat gather, cheaper than batch_dims."""
    width = values.shape[1]
    offsets = tf.reshape(tf.range(tf.shape(values)[0]) * width, [-1] + [1] * (index.shape.rank - 1))
    return tf.gather(tf.reshape(values, [-1]), index + offsets)


def _write_rows(values: tf.Tensor, positions: tf.Tensor, updates: tf.Tensor, use: tf.Tensor):
    """`values[b, positions[b, i]] = updates[b, i]` where `use[b, i]` (used positions distinct).

    Adds the differences, so an unused slot adds 0 wherever it points (with plain updates a
    duplicate index would leave the result undefined). Meant for XLA, which scatters in place.
    """
    positions = tf.cast(positions, tf.int32)
    delta = tf.where(use, tf.cast(updates, values.dtype) - _gather_rows(values, positions), 0)
    rows = tf.broadcast_to(tf.range(tf.shape(positions)[0])[:, None], tf.shape(positions))
    return tf.tensor_scatter_nd_add(values, tf.stack([rows, positions], axis=-1), delta)


def _running_counts(flags: list[tf.Tensor], block: int = 16) -> list[tf.Tensor]:
    """Inclusive cumulative sums along axis 1 of (B, T) bool tensors, as int32.

    Two small matmuls with triangular ones (within blocks of `block`, then across blocks), which
    run faster than a `cumsum` on a CPU, in TF or XLA alike. Exact: float32 holds every count up
    to 2**24.
    """
    batch_size, width = tf.shape(flags[0])[0], flags[0].shape[1]
    padding = -width % block
    num_blocks = (width + padding) // block
    stacked = tf.pad(tf.cast(tf.stack(flags), tf.float32), [[0, 0], [0, 0], [0, padding]])
    within = tf.linalg.band_part(tf.ones([block, block]), 0, -1)
    counts = tf.matmul(tf.reshape(stacked, [-1, block]), within)
    counts = tf.reshape(counts, [len(flags) * batch_size, num_blocks, block])
    earlier_blocks = tf.linalg.band_part(tf.ones([num_blocks, num_blocks]), 0, -1)
    offsets = tf.matmul(counts[:, :, -1], earlier_blocks - tf.eye(num_blocks))
    counts = tf.reshape(counts + offsets[:, :, None], [len(flags), batch_size, -1])
    return tf.unstack(tf.cast(counts[:, :, :width], tf.int32))


@_xla
def _restore(input_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights):
    return _write_rows(input_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights > 0)


def restore_original_tokens(
    input_ids: tf.Tensor,
    masked_lm_positions: tf.Tensor,
    masked_lm_ids: tf.Tensor,
    masked_lm_weights: tf.Tensor,
) -> tf.Tensor:
    """Writes `masked_lm_ids` back at `masked_lm_positions` where the weight is positive.

    Args:
        input_ids: int tensor (B, T). Token ids with the static masks applied.
        masked_lm_positions: int tensor (B, P). Masked positions (padding has weight 0).
        masked_lm_ids: int tensor (B, P). The original ids at those positions.
        masked_lm_weights: float tensor (B, P). 1.0 for a real prediction, 0.0 for padding.

    Returns:
        An int tensor (B, T) of the unmasked token ids.

    Example:
    >>> ids = restore_original_tokens([[2, 4, 3]], [[1, 0]], [[57, 0]], [[1.0, 0.0]])
    >>> ids.numpy().tolist()
    [[2, 57, 3]]
    """
    input_ids = tf.convert_to_tensor(input_ids)
    return _restore(
        input_ids,
        tf.cast(masked_lm_positions, tf.int32),
        tf.cast(masked_lm_ids, input_ids.dtype),
        tf.cast(masked_lm_weights, tf.float32),
    )


def _ngram_lengths(shape, seed: tf.Tensor, max_ngram: int) -> tf.Tensor:
    """Draws n in [1, max_ngram] with p proportional to 1/n (the official `pvals`)."""
    weights = [1.0 / n for n in range(1, max_ngram + 1)]
    cdf = tf.constant([sum(weights[: i + 1]) / sum(weights) for i in range(max_ngram - 1)])
    draws = tf.random.stateless_uniform(shape, seed=seed)
    return 1 + tf.reduce_sum(tf.cast(draws[..., None] >= cdf, tf.int32), axis=-1)


# === Compiled by XLA (no random op inside) ===


@_xla
def _word_structure(input_ids, input_mask, token_boundary, special_ids, max_ngram, prob, slots):
    """Words and budgets (steps 1 and 2 of the module docstring).

    Returns:
        `candidates_so_far` (B, T): candidates up to and including each position;
        `words_cum` (B, T + max_ngram + 1): rank of each word's first token among the example's
        candidates, `num_candidates` past the last word (so an n-gram running past it is cut
        there, and no index into it clips); `num_words` (B,); `budget` (B,).
    """
    batch_size, seq_length = tf.shape(input_ids)[0], input_ids.shape[1]
    real = tf.cast(input_mask, tf.bool)
    candidate = real
    for special in special_ids:
        candidate &= tf.not_equal(input_ids, special)
    boundary_start = candidate & (tf.cast(token_boundary, tf.int32) > 0)
    candidates_so_far, starts_so_far = _running_counts([candidate, boundary_start])
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


@_xla
def _first_draws(draws: tf.Tensor, num_words: tf.Tensor):
    """Words drawn uniformly with replacement, and which draws are a word's first.

    In order of first draw the words are the start of a uniformly random permutation, as the
    official `rng.shuffle`, without sorting T keys per example; a repeated draw is a no-op step.

    Args:
        draws: float (B, S). Uniform in [0, 1).
        num_words: int (B,).

    Returns:
        `(words, first)`: int (B, S) and bool (B, S).
    """
    num_draws = draws.shape[1]
    words = tf.minimum(
        tf.cast(draws * tf.cast(num_words[:, None], tf.float32), tf.int32),
        tf.maximum(num_words[:, None] - 1, 0),
    )
    earlier = tf.range(num_draws)[:, None] > tf.range(num_draws)[None, :]
    repeat = tf.reduce_any(tf.equal(words[:, :, None], words[:, None, :]) & earlier, axis=2)
    return words, ~repeat & (num_words[:, None] > 0)


@_xla
def _greedy_visit(words, first, ngram, max_ngram, words_cum, budget, spans):
    """Runs the official greedy over `words` where `first`, one visited word per loop step.

    Spans are kept as ranges of candidate ranks (the i-th candidate token of an example has rank
    i), which words partition, so touching a masked word is overlapping a taken range. At most P
    spans are taken, so the loop state is a few (B, P) tensors, not a (B, T) map that every
    step would copy.

    Args:
        words: int (B, S). Words in visiting order; steps where `first` (B, S) is False are
            skipped (a word visited already, or past the row's words).
        ngram: int (B, S). The n drawn at each step, at most `max_ngram`.
        words_cum: int (B, C). See `_word_structure`.
        budget: int (B,). Tokens to mask.
        spans: `(lo, hi, num_spans, num_masked)`: the rank ranges [lo, hi) taken so far, (B, P)
            each, how many (B,) and the tokens in them (B,).

    Returns:
        The new `spans`.
    """
    num_slots = spans[0].shape[1]
    num_steps = words.shape[1]
    # Everything that does not depend on earlier steps, time-major (one row read per step):
    # bounds[..., 0] is where the anchor word starts, bounds[..., n] where its n-gram ends.
    bounds = _gather_rows(words_cum, words[:, :, None] + tf.range(max_ngram + 1))
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


@_xla
def _spans_to_ranks(lo, hi, num_spans):
    """Lists the ranks inside the spans in ascending order, padded with 0.

    (B, P, P) comparisons rather than a sort: XLA fuses them, and its sort costs more.

    Returns:
        `(ranks, used)`: int (B, P) and bool (B, P).
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


@_xla
def _apply_masks(input_ids, positions, used, first_draw, second_draw, random_ids, mask_id):
    """Labels, and [MASK] (first_draw < 0.8) / kept / random ids written at the positions."""
    labels = tf.where(used, _gather_rows(input_ids, positions), 0)
    replacement = tf.where(
        first_draw < 0.8,
        tf.cast(mask_id, input_ids.dtype),
        tf.where(second_draw < 0.5, labels, tf.cast(random_ids, input_ids.dtype)),
    )
    return _write_rows(input_ids, positions, replacement, used), labels


# === Public ===


def mask_whole_word_ngrams(
    input_ids: tf.Tensor,
    input_mask: tf.Tensor,
    token_boundary: tf.Tensor,
    seed: tf.Tensor,
    *,
    vocabulary_size: int,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    max_ngram: int = 3,
    cls_id: int = CLS_ID,
    sep_id: int = SEP_ID,
    pad_id: int = PAD_ID,
    mask_id: int = MASK_ID,
    first_random_id: int = FIRST_NORMAL_ID,
    return_span_words: bool = False,
) -> dict[str, tf.Tensor]:
    """Draws n-gram whole-word masks for a batch of unmasked examples (see the module docstring).

    Args:
        input_ids: int tensor (B, T), T static. Unmasked token ids.
        input_mask: int tensor (B, T). 1 for real tokens, 0 for padding.
        token_boundary: int tensor (B, T). 1 where a token starts a word.
        seed: int tensor of shape (2,). The stateless seed; vary it per batch and epoch.
        vocabulary_size: int. Random replacements are drawn from [first_random_id, this).
        max_predictions_per_seq: int. P, the number of prediction slots.
        masked_lm_prob: float. Share of tokens to predict.
        max_ngram: int. Longest span, in words.
        cls_id, sep_id, pad_id, mask_id: int. Special ids; the first three are never masked.
        first_random_id: int. Smallest id a random replacement may take.
        return_span_words: bool. Also return `masked_span_words` (B, P): the length in words of
            each chosen span, 0-padded (for statistics: adjacent spans merge in the output).

    Returns:
        A dict with `input_ids` (B, T), `masked_lm_positions` (B, P) sorted ascending,
        `masked_lm_ids` (B, P) and `masked_lm_weights` (B, P) float32, padded with weight 0.

    Example:
    >>> ids = tf.constant([[2, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 3, 0, 0, 0]])
    >>> mask = tf.constant([[1] * 13 + [0] * 3])
    >>> boundary = tf.constant([[0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0]])
    >>> out = mask_whole_word_ngrams(ids, mask, boundary, tf.constant([1, 2]), vocabulary_size=30,
    ...                              max_predictions_per_seq=4, masked_lm_prob=0.3)
    >>> out["masked_lm_positions"].numpy().tolist(), out["masked_lm_weights"].numpy().tolist()
    ([[7, 8, 9, 10]], [[1.0, 1.0, 1.0, 1.0]])
    """
    if not first_random_id < vocabulary_size:
        raise ValueError(
            f"vocabulary_size={vocabulary_size} leaves no id to draw random replacements from "
            f"(they are drawn from [{first_random_id}, vocabulary_size))"
        )
    input_ids = tf.convert_to_tensor(input_ids)
    dtype = input_ids.dtype
    seq_length, num_slots = input_ids.shape[1], max_predictions_per_seq
    batch_size = tf.shape(input_ids)[0]
    seeds = tf.unstack(tf.random.experimental.stateless_split(seed, num=6))

    candidates_so_far, words_cum, num_words, budget = _word_structure(
        input_ids,
        input_mask,
        token_boundary,
        (pad_id, cls_id, sep_id),
        max_ngram,
        masked_lm_prob,
        num_slots,
    )

    # === The greedy visit ===
    # 2P + 8 draws give nearly every example enough distinct words to meet its budget (about 20
    # are visited at P=20); the rare rest go on over a random order of the words not visited.
    num_draws = 2 * num_slots + 8
    draws = tf.random.stateless_uniform([batch_size, num_draws], seed=seeds[0])
    words, first = _first_draws(draws, num_words)
    ngram = _ngram_lengths([batch_size, num_draws], seeds[1], max_ngram)
    no_spans = tf.zeros([batch_size, num_slots], tf.int32)
    no_masks = tf.zeros([batch_size], tf.int32)
    spans = _greedy_visit(
        words, first, ngram, max_ngram, words_cum, budget, (no_spans, no_spans, no_masks, no_masks)
    )
    num_visited = tf.reduce_sum(tf.cast(first, tf.int32), axis=1)

    def visit_the_rest():
        positions = tf.range(seq_length)[None, :]
        visited = _write_rows(tf.zeros_like(candidates_so_far), words, tf.ones_like(words), first)
        keys = tf.random.stateless_uniform([batch_size, seq_length], seed=seeds[2])
        keys = tf.where((visited > 0) | (positions >= num_words[:, None]), 2.0, keys)
        rest = tf.argsort(keys, axis=1)
        rest_first = positions < (num_words - num_visited)[:, None]
        rest_ngram = _ngram_lengths([batch_size, seq_length], seeds[3], max_ngram)
        return _greedy_visit(rest, rest_first, rest_ngram, max_ngram, words_cum, budget, spans)

    unfinished = tf.reduce_any((spans[3] < budget) & (num_visited < num_words))
    lo, hi, num_spans, _ = tf.cond(unfinished, visit_the_rest, lambda: spans)

    # === Prediction slots, sorted by position ===
    ranks, slot_used = _spans_to_ranks(lo, hi, num_spans)
    # Rank r sits at the first position where more than r candidates have been seen.
    slot_positions = tf.where(slot_used, tf.searchsorted(candidates_so_far, ranks, side="right"), 0)

    # 80% [MASK], 10% kept, 10% random, drawn per slot (two draws, as the official code).
    first_draw = tf.random.stateless_uniform([batch_size, num_slots], seed=seeds[4])
    second_draw = tf.random.stateless_uniform([batch_size, num_slots], seed=seeds[5])
    random_ids = tf.random.stateless_uniform(
        [batch_size, num_slots],
        seed=tf.random.experimental.stateless_fold_in(seeds[5], 1),
        minval=first_random_id,
        maxval=vocabulary_size,
        dtype=tf.int32,
    )
    masked_ids, labels = _apply_masks(
        input_ids, slot_positions, slot_used, first_draw, second_draw, random_ids, mask_id
    )
    masks = {
        "input_ids": masked_ids,
        "masked_lm_positions": tf.cast(slot_positions, dtype),
        "masked_lm_ids": labels,
        "masked_lm_weights": tf.cast(slot_used, tf.float32),
    }
    if return_span_words:
        # Words whose first rank lies in [lo, hi); words_cum is sorted along each row.
        first_ranks = words_cum[:, :seq_length]
        masks["masked_span_words"] = tf.where(
            tf.range(num_slots)[None, :] < num_spans[:, None],
            tf.searchsorted(first_ranks, hi) - tf.searchsorted(first_ranks, lo),
            0,
        )
    return masks


def remask_batch(
    features: dict[str, tf.Tensor], seed: tf.Tensor, **masking
) -> dict[str, tf.Tensor]:
    """Replaces a parsed batch's static masks with fresh dynamic ones.

    Args:
        features: dict of (B, ...) tensors with the TFRecord feature names.
        seed: int tensor of shape (2,). Vary it per batch and epoch.
        **masking: keyword arguments of `mask_whole_word_ngrams` (`vocabulary_size`, ...) but
            `max_predictions_per_seq`, which is the batch's own P.

    Returns:
        The same dict, with new `input_ids` and `masked_lm_*` features.

    Example:
    >>> import pipelines
    >>> batch = next(iter(pipelines.read_pretraining_records(
    ...     "records/*.tfrecord", 2, max_seq_length=32, max_predictions_per_seq=5, seed=1)))
    >>> remasked = remask_batch(batch, tf.constant([12345, 7]), vocabulary_size=50)
    >>> sorted(remasked) == sorted(batch), tuple(remasked["masked_lm_ids"].shape)
    (True, (2, 5))
    """
    if "max_predictions_per_seq" in masking:
        raise TypeError(
            "remask_batch takes no max_predictions_per_seq: the batch's masked_lm_positions "
            "width is used"
        )
    original = restore_original_tokens(
        features["input_ids"],
        features["masked_lm_positions"],
        features["masked_lm_ids"],
        features["masked_lm_weights"],
    )
    fresh = mask_whole_word_ngrams(
        original,
        features["input_mask"],
        features["token_boundary"],
        seed,
        max_predictions_per_seq=features["masked_lm_positions"].shape[1],
        **masking,
    )
    return {**features, **fresh}
