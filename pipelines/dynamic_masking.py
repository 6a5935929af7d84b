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
`pipelines.masking_spans.first_draws`), so no example sorts T keys.

Speed (the reader's goal is 20,000 examples/s per core at seq 512): the parts without a random op
are compiled by XLA, which fuses their element-wise work and runs the loop without TF's per-step
executor cost; every draw is a TF stateless op outside them, keyed by the `seed` passed in, so a
batch and a seed give the same masks on every run and machine. Compiling is paid once, at the
first batch (`benchmarks/first_batch.py` times it).

Here: the draws and the steps in order; steps 1 to 3 without their draws are in
`pipelines.masking_spans`, the per-row tensor steps they share in `pipelines.masking_rows`.
"""

import tensorflow as tf

from albert_keras_contracts.record_format import (
    INPUT_IDS,
    INPUT_MASK,
    MASKED_LM_IDS,
    MASKED_LM_POSITIONS,
    MASKED_LM_WEIGHTS,
    TOKEN_BOUNDARY,
)
from pipelines.masking_rows import gather_rows, write_rows, xla_compiled
from pipelines.masking_settings import MaskingSettings
from pipelines.masking_spans import first_draws, greedy_visit, spans_to_ranks, word_structure

__all__ = [
    "MaskingSettings",
    "mask_whole_word_ngrams",
    "remask_batch",
    "restore_original_tokens",
]


@xla_compiled
def _restore(input_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights):
    return write_rows(input_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights > 0)


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


# === Steps 3 and 4: the draws, and the compiled steps run on them ===


def _ngram_lengths(shape, seed: tf.Tensor, max_ngram: int) -> tf.Tensor:
    """Draws n in [1, max_ngram] with p proportional to 1/n (the official `pvals`)."""
    weights = [1.0 / n for n in range(1, max_ngram + 1)]
    cdf = tf.constant([sum(weights[: i + 1]) / sum(weights) for i in range(max_ngram - 1)])
    draws = tf.random.stateless_uniform(shape, seed=seed)
    return 1 + tf.reduce_sum(tf.cast(draws[..., None] >= cdf, tf.int32), axis=-1)


def _choose_spans(shape, num_slots, max_ngram, seeds, candidates_so_far, words_cum, num_words,
                  budget):  # fmt: skip
    """Step 3: the greedy visit over words in a random order; returns `(lo, hi, num_spans)`.

    `shape` is (B, T); `seeds` four stateless seeds; the rest as `word_structure` returns them.
    """
    batch_size, seq_length = shape
    # 2P + 8 draws give nearly every example enough distinct words to meet its budget (about 20
    # are visited at P=20); the rare rest go on over a random order of the words not visited.
    num_draws = 2 * num_slots + 8
    draws = tf.random.stateless_uniform([batch_size, num_draws], seed=seeds[0])
    words, first = first_draws(draws, num_words)
    ngram = _ngram_lengths([batch_size, num_draws], seeds[1], max_ngram)
    no_spans = tf.zeros([batch_size, num_slots], tf.int32)
    no_masks = tf.zeros([batch_size], tf.int32)
    spans = greedy_visit(
        words, first, ngram, max_ngram, words_cum, budget, (no_spans, no_spans, no_masks, no_masks)
    )
    num_visited = tf.reduce_sum(tf.cast(first, tf.int32), axis=1)

    def visit_the_rest():
        positions = tf.range(seq_length)[None, :]
        visited = write_rows(tf.zeros_like(candidates_so_far), words, tf.ones_like(words), first)
        keys = tf.random.stateless_uniform([batch_size, seq_length], seed=seeds[2])
        keys = tf.where((visited > 0) | (positions >= num_words[:, None]), 2.0, keys)
        rest = tf.argsort(keys, axis=1)
        rest_first = positions < (num_words - num_visited)[:, None]
        rest_ngram = _ngram_lengths([batch_size, seq_length], seeds[3], max_ngram)
        return greedy_visit(rest, rest_first, rest_ngram, max_ngram, words_cum, budget, spans)

    unfinished = tf.reduce_any((spans[3] < budget) & (num_visited < num_words))
    lo, hi, num_spans, _ = tf.cond(unfinished, visit_the_rest, lambda: spans)
    return lo, hi, num_spans


def _replacement_draws(shape, seeds, first_random_id: int, vocabulary_size: int):
    """Step 4's draws for (B, P) slots: two uniforms (as the official code) and random ids."""
    first_draw = tf.random.stateless_uniform(shape, seed=seeds[0])
    second_draw = tf.random.stateless_uniform(shape, seed=seeds[1])
    random_ids = tf.random.stateless_uniform(
        shape,
        seed=tf.random.experimental.stateless_fold_in(seeds[1], 1),
        minval=first_random_id,
        maxval=vocabulary_size,
        dtype=tf.int32,
    )
    return first_draw, second_draw, random_ids


@xla_compiled
def _apply_masks(input_ids, positions, used, first_draw, second_draw, random_ids, mask_id):
    """Labels, and [MASK] (first_draw < 0.8) / kept / random ids written at the positions."""
    labels = tf.where(used, gather_rows(input_ids, positions), 0)
    replacement = tf.where(
        first_draw < 0.8,
        tf.cast(mask_id, input_ids.dtype),
        tf.where(second_draw < 0.5, labels, tf.cast(random_ids, input_ids.dtype)),
    )
    return write_rows(input_ids, positions, replacement, used), labels


def _predictions(input_ids, candidates_so_far, spans, seeds, *, mask_id: int,
                 first_random_id: int, vocabulary_size: int) -> dict[str, tf.Tensor]:  # fmt: skip
    """Step 4: the tokens of `spans` as prediction slots sorted by position, and the masked ids.

    `seeds` are two stateless seeds; returns the features of `mask_whole_word_ngrams`.
    """
    lo, hi, num_spans = spans
    batch_size, num_slots = tf.shape(input_ids)[0], lo.shape[1]
    ranks, slot_used = spans_to_ranks(lo, hi, num_spans)
    # Rank r sits at the first position where more than r candidates have been seen.
    slot_positions = tf.where(slot_used, tf.searchsorted(candidates_so_far, ranks, side="right"), 0)
    masked_ids, labels = _apply_masks(
        input_ids,
        slot_positions,
        slot_used,
        *_replacement_draws((batch_size, num_slots), seeds, first_random_id, vocabulary_size),
        mask_id,
    )
    return {
        INPUT_IDS: masked_ids,
        MASKED_LM_POSITIONS: tf.cast(slot_positions, input_ids.dtype),
        MASKED_LM_IDS: labels,
        MASKED_LM_WEIGHTS: tf.cast(slot_used, tf.float32),
    }


def _span_words(words_cum, spans, seq_length: int) -> tf.Tensor:
    """The length in words of each chosen span (B, P), 0-padded: the words whose first rank lies
    in [lo, hi) (`words_cum` is sorted along each row)."""
    lo, hi, num_spans = spans
    first_ranks = words_cum[:, :seq_length]
    return tf.where(
        tf.range(lo.shape[1])[None, :] < num_spans[:, None],
        tf.searchsorted(first_ranks, hi) - tf.searchsorted(first_ranks, lo),
        0,
    )


# === Public ===


def mask_whole_word_ngrams(
    input_ids: tf.Tensor,
    input_mask: tf.Tensor,
    token_boundary: tf.Tensor,
    seed: tf.Tensor,
    *,
    masking: MaskingSettings,
    max_predictions_per_seq: int = 20,
    return_span_words: bool = False,
) -> dict[str, tf.Tensor]:
    """Draws n-gram whole-word masks for a batch of unmasked examples (see the module docstring).

    Args:
        input_ids: int tensor (B, T), T static. Unmasked token ids.
        input_mask: int tensor (B, T). 1 for real tokens, 0 for padding.
        token_boundary: int tensor (B, T). 1 where a token starts a word.
        seed: int tensor of shape (2,). The stateless seed; vary it per batch and epoch.
        masking: `MaskingSettings`, with its `vocabulary_size` given. Share of tokens to
            predict, longest span, special ids and the range of random replacements.
        max_predictions_per_seq: int. P, the number of prediction slots.
        return_span_words: bool. Also return `masked_span_words` (B, P): the length in words of
            each chosen span, 0-padded (for statistics: adjacent spans merge in the output).

    Returns:
        A dict with `input_ids` (B, T), `masked_lm_positions` (B, P) sorted ascending,
        `masked_lm_ids` (B, P) and `masked_lm_weights` (B, P) float32, padded with weight 0.

    Example:
    >>> ids = tf.constant([[2, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 3, 0, 0, 0]])
    >>> mask = tf.constant([[1] * 13 + [0] * 3])
    >>> boundary = tf.constant([[0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0]])
    >>> masking = MaskingSettings(vocabulary_size=30, masked_lm_prob=0.3)
    >>> out = mask_whole_word_ngrams(ids, mask, boundary, tf.constant([1, 2]), masking=masking,
    ...                              max_predictions_per_seq=4)
    >>> out["masked_lm_positions"].numpy().tolist(), out["masked_lm_weights"].numpy().tolist()
    ([[7, 8, 9, 10]], [[1.0, 1.0, 1.0, 1.0]])
    """
    if masking.vocabulary_size is None:
        raise ValueError("mask_whole_word_ngrams needs masking.vocabulary_size (not None)")
    if not masking.first_random_id < masking.vocabulary_size:
        raise ValueError(
            f"vocabulary_size={masking.vocabulary_size} leaves no id to draw random replacements "
            f"from (they are drawn from [{masking.first_random_id}, vocabulary_size))"
        )
    input_ids = tf.convert_to_tensor(input_ids)
    batch_size, num_slots = tf.shape(input_ids)[0], max_predictions_per_seq
    seeds = tf.unstack(tf.random.experimental.stateless_split(seed, num=6))
    candidates_so_far, words_cum, num_words, budget = word_structure(
        input_ids, input_mask, token_boundary, (masking.pad_id, masking.cls_id, masking.sep_id),
        masking.max_ngram, masking.masked_lm_prob, num_slots,
    )  # fmt: skip
    spans = _choose_spans(
        (batch_size, input_ids.shape[1]), num_slots, masking.max_ngram, seeds[:4],
        candidates_so_far, words_cum, num_words, budget,
    )  # fmt: skip
    masks = _predictions(
        input_ids, candidates_so_far, spans, seeds[4:], mask_id=masking.mask_id,
        first_random_id=masking.first_random_id, vocabulary_size=masking.vocabulary_size,
    )  # fmt: skip
    if return_span_words:
        masks["masked_span_words"] = _span_words(words_cum, spans, input_ids.shape[1])
    return masks


def remask_batch(
    features: dict[str, tf.Tensor], seed: tf.Tensor, masking: MaskingSettings
) -> dict[str, tf.Tensor]:
    """Replaces a parsed batch's static masks with fresh dynamic ones.

    Args:
        features: dict of (B, ...) tensors with the TFRecord feature names.
        seed: int tensor of shape (2,). Vary it per batch and epoch.
        masking: `MaskingSettings`, with its `vocabulary_size` given. P is the batch's own
            (the width of its `masked_lm_positions`).

    Returns:
        The same dict, with new `input_ids` and `masked_lm_*` features.

    Example:
    >>> import pipelines
    >>> batch = next(iter(pipelines.read_pretraining_records(
    ...     "records/*.tfrecord", 2, max_seq_length=32, max_predictions_per_seq=5, seed=1)))
    >>> remasked = remask_batch(batch, tf.constant([12345, 7]), MaskingSettings(vocabulary_size=50))
    >>> sorted(remasked) == sorted(batch), tuple(remasked["masked_lm_ids"].shape)
    (True, (2, 5))
    """
    original = restore_original_tokens(
        features[INPUT_IDS],
        features[MASKED_LM_POSITIONS],
        features[MASKED_LM_IDS],
        features[MASKED_LM_WEIGHTS],
    )
    fresh = mask_whole_word_ngrams(
        original,
        features[INPUT_MASK],
        features[TOKEN_BOUNDARY],
        seed,
        masking=masking,
        max_predictions_per_seq=features[MASKED_LM_POSITIONS].shape[1],
    )
    return {**features, **fresh}
