"""N-gram whole-word masking: the official rules, checked example by example and in distribution."""

import random

import numpy as np
import pytest

from pipelines.ngram_masking import mask_ngrams, ngram_probabilities

CLS, SEP, MASK, VOCAB = 2, 3, 4, 1000


def _batch(num_examples, seq_length=64, seed=0, start_prob=0.7):
    """Random packed pairs: [CLS] A [SEP] B [SEP] + padding, words of 1-4 pieces."""
    rng = np.random.default_rng(seed)
    ids = np.zeros((num_examples, seq_length), np.int32)
    boundary = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for row in range(num_examples):
        length = int(rng.integers(8, seq_length + 1))
        a_length = int(rng.integers(1, length - 3))
        ids[row, :length] = rng.integers(5, VOCAB, length)
        ids[row, [0, a_length + 1, length - 1]] = [CLS, SEP, SEP]
        boundary[row, :length] = rng.random(length) < start_prob
        boundary[row, [0, 1, a_length + 1, a_length + 2, length - 1]] = 1
        mask[row, :length] = 1
    return ids, boundary, mask


def _mask(ids, boundary, mask, seed=0, **kwargs):
    settings = {"max_predictions_per_seq": 20, "masked_lm_prob": 0.15, "vocabulary_size": VOCAB}
    settings.update(kwargs)
    return mask_ngrams(ids, boundary, mask, rng=np.random.default_rng(seed), **settings)


def _words(ids_row, boundary_row, mask_row):
    """Word index of every candidate position (-1 elsewhere), from token_boundary."""
    words, current = np.full(len(ids_row), -1), -1
    for i, (token, start, real) in enumerate(zip(ids_row, boundary_row, mask_row)):
        if real and token not in (CLS, SEP):
            current += 1 if (start or current < 0) else 0
            words[i] = current
    return words


def test_each_example_follows_the_official_rules():
    ids, boundary, mask = _batch(300)
    out = _mask(ids, boundary, mask)
    for row in range(len(ids)):
        weights = out.masked_lm_weights[row]
        count = int(weights.sum())
        positions = out.masked_lm_positions[row, :count]
        assert (weights[:count] == 1).all() and (weights[count:] == 0).all()
        assert (out.masked_lm_positions[row, count:] == 0).all()
        assert (out.masked_lm_ids[row, count:] == 0).all()
        # Budget: min(P, max(1, round(len * p))) with [CLS]/[SEP] counted, as the official code.
        assert count == min(20, max(1, round(mask[row].sum() * 0.15)))
        assert (np.diff(positions) > 0).all()  # sorted, unique
        assert mask[row, positions].all() and not np.isin(ids[row, positions], (CLS, SEP)).any()
        assert (out.masked_lm_ids[row, :count] == ids[row, positions]).all()
        # Whole words: a masked word is masked in all its pieces.
        words = _words(ids[row], boundary[row], mask[row])
        masked_words = set(words[positions])
        assert set(positions) == set(np.flatnonzero(np.isin(words, list(masked_words))))
        # Replacements: [MASK], the token itself, or a random normal id; elsewhere untouched.
        replaced = out.input_ids[row, positions]
        assert ((replaced == MASK) | (replaced == ids[row, positions]) | (replaced >= 5)).all()
        untouched = np.setdiff1d(np.arange(ids.shape[1]), positions)
        assert (out.input_ids[row, untouched] == ids[row, untouched]).all()
    assert (out.num_to_predict == out.masked_lm_weights.sum(axis=1)).all()


def test_shares_of_replacements_and_ngram_lengths():
    ids, boundary, mask = _batch(4000, seq_length=128, seed=1)
    out = _mask(ids, boundary, mask, seed=1)
    counts = out.replacements
    assert counts.sum() == out.masked_lm_weights.sum()
    np.testing.assert_allclose(counts / counts.sum(), [0.8, 0.1, 0.1], atol=0.01)
    # The n drawn at each visit follows p ~ 1/n: [6/11, 3/11, 2/11].
    drawn = out.drawn_ngrams[1:] / out.drawn_ngrams.sum()
    np.testing.assert_allclose(drawn, ngram_probabilities(3), atol=0.01)
    np.testing.assert_allclose(ngram_probabilities(3), [6 / 11, 3 / 11, 2 / 11])
    # Kept spans never exceed 3 words; the budget and overlaps favour short ones.
    assert out.span_words[0] == 0 and len(out.span_words) == 4
    spans = out.span_words[1:] / out.span_words.sum()
    assert spans[0] > drawn[0] and spans[2] < drawn[2] and spans[2] > 0.1


def test_matches_a_transcription_of_the_official_loop_in_distribution():
    ids, boundary, mask = _batch(3000, seq_length=128, seed=2)
    ours = _mask(ids, boundary, mask, seed=2)
    rng = random.Random(2)
    numpy_rng = np.random.default_rng(3)
    official_spans = np.zeros(5)
    for row in range(len(ids)):
        words = _words(ids[row], boundary[row], mask[row])
        cand = [list(np.flatnonzero(words == w)) for w in range(words.max() + 1)]
        budget = min(20, max(1, round(mask[row].sum() * 0.15)))
        for span in _official_spans(cand, budget, rng, numpy_rng):
            official_spans[min(span, 4)] += 1
    official = official_spans[1:4] / official_spans.sum()
    np.testing.assert_allclose(ours.span_words[1:] / ours.span_words.sum(), official, atol=0.015)


def _official_spans(cand_indexes, num_to_predict, rng, numpy_rng):
    """The official create_masked_lm_predictions choice of spans (lengths in words)."""
    pvals = ngram_probabilities(3)
    ngram_indexes = [[cand_indexes[i : i + n] for n in (1, 2, 3)] for i in range(len(cand_indexes))]
    rng.shuffle(ngram_indexes)
    covered, count, spans = set(), 0, []
    for cand_index_set in ngram_indexes:
        if count >= num_to_predict:
            break
        n = numpy_rng.choice([1, 2, 3], p=pvals)
        while n > 0 and count + sum(map(len, cand_index_set[n - 1])) > num_to_predict:
            n -= 1
        if n == 0:
            continue
        index_set = [i for word in cand_index_set[n - 1] for i in word]
        if any(i in covered for i in index_set):
            continue
        covered.update(index_set)
        count += len(index_set)
        spans.append(len(cand_index_set[n - 1]))
    return spans


def test_unigram_masking_and_a_small_budget():
    ids, boundary, mask = _batch(500, seed=3)
    out = _mask(ids, boundary, mask, ngram=1, max_predictions_per_seq=5)
    assert out.span_words.tolist()[0] == 0 and len(out.span_words) == 2
    assert (out.masked_lm_weights.sum(axis=1) <= 5).all()
    assert out.masked_lm_positions.shape == (500, 5)


def test_same_seed_same_masks_other_seed_others():
    ids, boundary, mask = _batch(50)
    first, again, other = _mask(ids, boundary, mask, 4), _mask(ids, boundary, mask, 4), None
    other = _mask(ids, boundary, mask, 5)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first.masked_lm_positions, other.masked_lm_positions)


def test_examples_without_words_get_no_mask():
    ids = np.array([[CLS, SEP, SEP, 0], [CLS, 7, SEP, SEP]], np.int32)
    out = mask_ngrams(
        ids,
        np.ones_like(ids),
        np.array([[1, 1, 1, 0], [1, 1, 1, 1]]),
        rng=np.random.default_rng(0),
        max_predictions_per_seq=3,
        vocabulary_size=VOCAB,
    )
    assert out.masked_lm_weights.tolist() == [[0, 0, 0], [1, 0, 0]]
    assert out.masked_lm_positions[1, 0] == 1 and out.masked_lm_ids[1, 0] == 7


@pytest.mark.parametrize("ngram", [1, 2, 5])
def test_ngram_probabilities(ngram):
    p = ngram_probabilities(ngram)
    assert p.sum() == pytest.approx(1.0) and p[0] / p[-1] == pytest.approx(ngram)


def test_runs_with_their_own_generators_mask_as_if_alone():
    # Runs of 1, 300 and 40 rows, one with long sequences and a big budget so its visit outlasts
    # the others and the generators' pre-drawn steps; then each generator's next draw.
    runs = [_batch(1, seed=1), _batch(300, seq_length=256, seed=2), _batch(40, seed=3)]
    width = 256
    padded = [[np.pad(a, ((0, 0), (0, width - a.shape[1]))) for a in run] for run in runs]
    together_rngs = [np.random.default_rng(seed) for seed in (7, 8, 9)]
    settings = {"max_predictions_per_seq": 150, "masked_lm_prob": 0.6, "vocabulary_size": VOCAB}
    together = mask_ngrams(
        *(np.concatenate(column) for column in zip(*padded)),
        rng=together_rngs,
        rows_per_rng=[len(run[0]) for run in runs],
        **settings,
    )
    first = 0
    for index, (run, seed) in enumerate(zip(padded, (7, 8, 9))):
        rng = np.random.default_rng(seed)
        alone = mask_ngrams(*run, rng=rng, **settings)
        rows = slice(first, first + len(run[0]))
        first += len(run[0])
        for name in ("input_ids", "masked_lm_positions", "masked_lm_ids", "masked_lm_weights"):
            np.testing.assert_array_equal(getattr(together, name)[rows], getattr(alone, name))
        for name in ("drawn_ngrams", "span_words", "merged_span_words", "replacements"):
            np.testing.assert_array_equal(getattr(together, name)[index], getattr(alone, name))
        assert together_rngs[index].random() == rng.random()
    with pytest.raises(ValueError, match="3 generators"):
        mask_ngrams(*runs[0], rng=together_rngs, rows_per_rng=[1], vocabulary_size=VOCAB,
                    max_predictions_per_seq=20)  # fmt: skip
