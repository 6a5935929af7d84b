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
`_visit_order`) so no example sorts T keys.

Every draw is a stateless op keyed by the `seed` passed in, so a batch and a seed give the same
masks on every run and machine.
"""

import tensorflow as tf

# The ALBERT SentencePiece ids (DESIGN.md): <pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4.
PAD_ID = 0
CLS_ID = 2
SEP_ID = 3
MASK_ID = 4
# Random replacements are drawn from [5, vocabulary_size): the official code draws from the whole
# vocabulary, but a random [CLS]/[SEP]/<pad> inside a sentence would fake structure the model is
# told to rely on, and <unk> teaches nothing.
FIRST_NORMAL_ID = 5


def _gather_rows(values: tf.Tensor, index: tf.Tensor) -> tf.Tensor:
    """`values[b, index[b, ...]]` for (B, W) values: one flat gather, cheaper than batch_dims."""
    width = values.shape[1]
    offsets = tf.reshape(tf.range(tf.shape(values)[0]) * width, [-1] + [1] * (index.shape.rank - 1))
    return tf.gather(tf.reshape(values, [-1]), index + offsets)


def _write_rows(values: tf.Tensor, positions: tf.Tensor, updates: tf.Tensor, use: tf.Tensor):
    """`values[b, positions[b, i]] = updates[b, i]` where `use[b, i]` (positions distinct).

    A segment sum of the differences: unlike `tensor_scatter_nd_update` it never copies `values`
    (measured several times slower here), and unused slots add 0 wherever they point.
    """
    batch_size, width = tf.shape(values)[0], values.shape[1]
    positions = tf.cast(positions, tf.int32)
    delta = tf.where(use, tf.cast(updates, values.dtype) - _gather_rows(values, positions), 0)
    flat = tf.math.unsorted_segment_sum(
        delta, positions + tf.range(batch_size)[:, None] * width, batch_size * width
    )
    return values + tf.reshape(flat, [batch_size, width])


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
    real = tf.convert_to_tensor(masked_lm_weights) > 0
    return _write_rows(input_ids, masked_lm_positions, masked_lm_ids, real)


def _ngram_lengths(shape, seed: tf.Tensor, max_ngram: int) -> tf.Tensor:
    """Draws n in [1, max_ngram] with p proportional to 1/n (the official `pvals`)."""
    weights = [1.0 / n for n in range(1, max_ngram + 1)]
    cdf = tf.constant([sum(weights[: i + 1]) / sum(weights) for i in range(max_ngram - 1)])
    draws = tf.random.stateless_uniform(shape, seed=seed)
    return 1 + tf.reduce_sum(tf.cast(draws[..., None] >= cdf, tf.int32), axis=-1)


def _visit_order(num_words: tf.Tensor, num_draws: int, seed: tf.Tensor):
    """The first distinct words of a uniformly random order of each example's words.

    Draws `num_draws` words uniformly with replacement and keeps each one's first draw: in order
    of first draw they are the start of a uniformly random permutation, as the official
    `rng.shuffle`, without sorting T keys per example.

    Returns:
        `(words, count)`: int tensors (B, num_draws) with the distinct words first, and (B,).
    """
    draws = tf.random.stateless_uniform([tf.shape(num_words)[0], num_draws], seed=seed)
    words = tf.minimum(
        tf.cast(draws * tf.cast(num_words[:, None], tf.float32), tf.int32),
        tf.maximum(num_words[:, None] - 1, 0),
    )
    earlier = tf.range(num_draws)[:, None] > tf.range(num_draws)[None, :]
    repeat = tf.reduce_any(tf.equal(words[:, :, None], words[:, None, :]) & earlier, axis=2)
    # Distinct words first, each group in draw order: top_k of a key that demotes repeats.
    step = tf.range(num_draws)[None, :]
    _, order = tf.math.top_k(-(step + num_draws * tf.cast(repeat, tf.int32)), k=num_draws)
    count = tf.reduce_sum(1 - tf.cast(repeat, tf.int32), axis=1)
    return _gather_rows(words, order), tf.minimum(count, num_words)


def _greedy_visit(words, count, ngram, max_ngram, words_cum, budget, spans):
    """Runs the official greedy over `words[:, :count]`, one loop step per visited word.

    Spans are kept as ranges of candidate ranks (the i-th candidate token of an example has rank
    i), which words partition, so touching a masked word is overlapping a taken range. At most P
    spans are taken, so the loop state is a few (B, P) tensors, not a (B, T) map that every
    step would copy.

    Args:
        words: int (B, S). Words in visiting order; `count` (B,) of them are real.
        ngram: int (B, S). The n drawn at each step, at most `max_ngram`.
        words_cum: int (B, C). Rank of each word's first token (see `mask_whole_word_ngrams`).
        budget: int (B,). Tokens to mask.
        spans: `(lo, hi, num_spans, num_masked)`: the rank ranges [lo, hi) taken so far, (B, P)
            each, how many (B,) and the tokens in them (B,).

    Returns:
        The new `spans`.
    """
    num_steps, num_slots = tf.shape(words)[1], spans[0].shape[1]
    # Everything that does not depend on earlier steps, time-major (one row read per step):
    # bounds[..., 0] is where the anchor word starts, bounds[..., n] where its n-gram ends.
    bounds = _gather_rows(words_cum, words[:, :, None] + tf.range(max_ngram + 1))
    drawn = (tf.range(max_ngram) < ngram[:, :, None]) & (
        tf.range(num_steps)[None, :, None] < count[:, None, None]
    )
    bounds, drawn = tf.transpose(bounds, [1, 0, 2]), tf.transpose(drawn, [1, 0, 2])
    slot = tf.range(num_slots)[None, :]

    def keep_visiting(step, lo, hi, num_spans, num_masked):
        return (step < num_steps) & tf.reduce_any((num_masked < budget) & (step < count))

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


def _spans_to_ranks(lo, hi, num_spans):
    """Lists the ranks inside the spans in ascending order, padded with 0.

    Returns:
        `(ranks, used)`: int (B, P) and bool (B, P).
    """
    num_slots = lo.shape[1]
    slot = tf.range(num_slots)[None, :]
    key = tf.where(slot < num_spans[:, None], -lo, -(2**30))
    sorted_key, order = tf.math.top_k(key, k=num_slots)
    lo, hi = _gather_rows(lo, order), _gather_rows(hi, order)
    length = tf.where(sorted_key > -(2**30), hi - lo, 0)
    ends = tf.cumsum(length, axis=1)
    # Slot i falls in the first span whose running end passes i.
    span = tf.reduce_sum(tf.cast(ends[:, None, :] <= slot[:, :, None], tf.int32), axis=2)
    span = tf.minimum(span, num_slots - 1)
    offset = slot - _gather_rows(ends - length, span)
    used = slot < ends[:, -1:]
    return tf.where(used, _gather_rows(lo, span) + offset, 0), used


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
    >>> out = mask_whole_word_ngrams(ids, mask, boundary, tf.constant([1, 2]),
    ...                              vocabulary_size=30000)
    >>> out["masked_lm_positions"].shape == (ids.shape[0], 20)
    True
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
    positions = tf.range(seq_length)[None, :]
    rows = tf.range(batch_size)[:, None]

    # === Words from token_boundary ===
    real = tf.cast(input_mask, tf.bool)
    candidate = real & (input_ids > pad_id) & tf.not_equal(input_ids, cls_id)
    candidate &= tf.not_equal(input_ids, sep_id)
    first_candidate = tf.argmax(tf.cast(candidate, tf.int32), axis=1, output_type=tf.int32)
    word_start = candidate & (
        (tf.cast(token_boundary, tf.int32) > 0) | tf.equal(positions, first_candidate[:, None])
    )
    # One cumsum gives both running counts (each < 4096): a CPU scan costs as much as a sort.
    packed = tf.cumsum(tf.cast(word_start, tf.int32) + 4096 * tf.cast(candidate, tf.int32), 1)
    word_id = packed % 4096 - 1
    rank = packed // 4096 - 1  # of a candidate among its example's candidates
    num_words, num_candidates = word_id[:, -1] + 1, rank[:, -1] + 1
    # float64 and round-half-to-even, so budgets match Python's round() in the official code.
    num_tokens = tf.reduce_sum(tf.cast(real, tf.float64), axis=1)
    budget = tf.minimum(
        num_slots, tf.maximum(1, tf.cast(tf.round(num_tokens * masked_lm_prob), tf.int32))
    )
    # words_cum[b, w]: rank of word w's first token; num_candidates for w >= num_words, so an
    # n-gram running past the last word is cut there. Width T + max_ngram + 1: no index clips.
    cum_width = seq_length + max_ngram + 1
    words_cum = tf.math.unsorted_segment_sum(
        rank,
        tf.where(word_start, rows * cum_width + word_id, batch_size * cum_width),
        batch_size * cum_width + 1,
    )[:-1]
    words_cum = tf.where(
        tf.range(cum_width)[None, :] < num_words[:, None],
        tf.reshape(words_cum, [batch_size, cum_width]),
        num_candidates[:, None],
    )

    # === The greedy visit ===
    # 2P + 8 draws give nearly every example enough distinct words to meet its budget (about 20
    # are visited at P=20); the rare rest go on over a random order of the words not visited.
    num_draws = 2 * num_slots + 8
    words, count = _visit_order(num_words, num_draws, seeds[0])
    ngram = _ngram_lengths([batch_size, num_draws], seeds[1], max_ngram)
    no_spans = tf.zeros([batch_size, num_slots], tf.int32)
    no_masks = tf.zeros([batch_size], tf.int32)
    spans = _greedy_visit(
        words, count, ngram, max_ngram, words_cum, budget, (no_spans, no_spans, no_masks, no_masks)
    )

    def visit_the_rest():
        visited = _write_rows(
            tf.zeros_like(word_id), words, tf.ones_like(words), tf.range(num_draws) < count[:, None]
        )
        keys = tf.random.stateless_uniform([batch_size, seq_length], seed=seeds[2])
        keys = tf.where((visited > 0) | (positions >= num_words[:, None]), 2.0, keys)
        rest = tf.argsort(keys, axis=1)
        rest_ngram = _ngram_lengths([batch_size, seq_length], seeds[3], max_ngram)
        return _greedy_visit(
            rest, num_words - count, rest_ngram, max_ngram, words_cum, budget, spans
        )

    unfinished = tf.reduce_any((spans[3] < budget) & (count < num_words))
    lo, hi, num_spans, _ = tf.cond(unfinished, visit_the_rest, lambda: spans)

    # === Prediction slots, sorted by position ===
    ranks, slot_used = _spans_to_ranks(lo, hi, num_spans)
    # Position of each rank: where the candidates are, in rank order.
    candidate_position = tf.math.unsorted_segment_sum(
        tf.broadcast_to(positions, tf.shape(rank)),
        tf.where(candidate, rows * seq_length + rank, batch_size * seq_length),
        batch_size * seq_length + 1,
    )[:-1]
    slot_positions = _gather_rows(tf.reshape(candidate_position, [batch_size, seq_length]), ranks)
    slot_positions = tf.where(slot_used, slot_positions, 0)
    labels = tf.where(slot_used, _gather_rows(input_ids, slot_positions), 0)

    # 80% [MASK], 10% kept, 10% random, drawn per slot (two draws, as the official code).
    first = tf.random.stateless_uniform([batch_size, num_slots], seed=seeds[4])
    second = tf.random.stateless_uniform([batch_size, num_slots], seed=seeds[5])
    random_ids = tf.random.stateless_uniform(
        [batch_size, num_slots],
        seed=tf.random.experimental.stateless_fold_in(seeds[5], 1),
        minval=first_random_id,
        maxval=vocabulary_size,
        dtype=tf.int32,
    )
    replacement = tf.where(
        first < 0.8,
        tf.cast(mask_id, dtype),
        tf.where(second < 0.5, labels, tf.cast(random_ids, dtype)),
    )
    masks = {
        "input_ids": _write_rows(input_ids, slot_positions, replacement, slot_used),
        "masked_lm_positions": tf.cast(slot_positions, dtype),
        "masked_lm_ids": tf.cast(labels, dtype),
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
        **masking: keyword arguments of `mask_whole_word_ngrams` (`vocabulary_size`, ...).

    Returns:
        The same dict, with new `input_ids` and `masked_lm_*` features.

    Example:
    >>> batch = remask_batch(batch, tf.constant([12345, 7]), vocabulary_size=30000)
    """
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
