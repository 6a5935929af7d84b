"""Dynamic n-gram whole-word masking in TF ops: the official rules, checked on statistics."""

import json

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf

from pipelines import ngram_masking
from pipelines.dynamic_masking import (
    _ngram_lengths,
    mask_whole_word_ngrams,
    remask_batch,
    restore_original_tokens,
)
from pipelines.masking_settings import MaskingSettings

CLS, SEP, MASK, VOCAB = 2, 3, 4, 1000
# One shape everywhere: XLA compiles the masking once per shape, which costs seconds.
BATCH, SEQ = 64, 128


def mask(ids, input_mask, boundary, seed, **kwargs):
    assert ids.shape == (BATCH, SEQ)
    out = mask_whole_word_ngrams(
        ids, input_mask, boundary, tf.constant(seed), masking=MaskingSettings(VOCAB), **kwargs
    )
    return {name: value.numpy() for name, value in out.items()}


def synthetic_batch(rng, num_examples, seq_length, piece_probs=(0.8, 0.15, 0.05)):
    """[CLS] A [SEP] B [SEP] of words of 1-3 pieces, 70% full length, with token_boundary."""
    rows, position = np.arange(num_examples)[:, None], np.arange(seq_length)[None, :]
    length = np.where(
        rng.random(num_examples) < 0.7, seq_length, rng.integers(8, seq_length, num_examples)
    )[:, None]
    split = rng.integers(2, length - 2)  # where the first [SEP] goes
    # A stream of words (1-3 pieces) that A and B are cut from.
    pieces = rng.choice(len(piece_probs), p=piece_probs, size=(num_examples, seq_length)) + 1
    stream_boundary = np.zeros((num_examples, 3 * seq_length), np.int32)
    stream_boundary[rows, np.cumsum(pieces, axis=1) - pieces] = 1
    stream = np.where(position < split, position - 1, position - 2).clip(0)
    ids = rng.integers(5, VOCAB, (num_examples, seq_length)).astype(np.int32)
    boundary = np.take_along_axis(stream_boundary, stream, axis=1)
    boundary[:, 0] = 1
    boundary[position == split + 1] = 1  # B starts with a word
    sep = (position == split) | (position == length - 1)
    ids = np.where(position == 0, CLS, np.where(sep, SEP, ids))
    boundary = np.where(sep, 1, boundary)
    real = position < length
    return np.where(real, ids, 0), real.astype(np.int32), np.where(real, boundary, 0)


def budget(input_mask, prob=0.15, slots=20):
    # The official formula, with Python's round().
    return np.array([min(slots, max(1, round(n * prob))) for n in input_mask.sum(axis=1)])


def masked_words(positions, weights, boundary, candidate):
    """Per example, the sorted word indices covered by the masked positions."""
    word_of = np.cumsum(boundary * candidate, axis=1) - 1
    return [
        np.unique(word_of[row, positions[row][weights[row] > 0]]) for row in range(len(positions))
    ]


@pytest.fixture(scope="module")
def batch():
    ids, input_mask, boundary = synthetic_batch(np.random.default_rng(0), 32 * BATCH, SEQ)
    chunks = [
        mask(*(x[i : i + BATCH] for x in (ids, input_mask, boundary)), [7, i], return_span_words=1)
        for i in range(0, len(ids), BATCH)
    ]
    out = {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}
    return ids, input_mask, boundary, out


def single_piece_words(ids, input_mask, boundary):
    candidate = (input_mask == 1) & (ids != CLS) & (ids != SEP)
    starts = candidate & (boundary == 1)
    next_starts = np.concatenate(
        [starts[:, 1:] | ~candidate[:, 1:], np.ones_like(starts[:, :1])], 1
    )
    return (starts & next_starts).sum(axis=1)


def test_masked_count_follows_the_official_formula(batch):
    ids, input_mask, boundary, out = batch
    counts, expected = out["masked_lm_weights"].sum(axis=1), budget(input_mask)
    # The greedy visits every word, so with at least `budget` one-piece words it always meets
    # the budget exactly; with fewer it may fall short (all words too long), never over.
    fillable = single_piece_words(ids, input_mask, boundary) >= expected
    assert fillable.mean() > 0.99
    np.testing.assert_array_equal(counts[fillable], expected[fillable])
    assert (counts <= expected).all()


def test_labels_are_the_original_tokens_and_nothing_special_is_masked(batch):
    ids, input_mask, _, out = batch
    positions, weights = out["masked_lm_positions"], out["masked_lm_weights"] > 0
    labels = np.take_along_axis(ids, positions, axis=1)
    np.testing.assert_array_equal(out["masked_lm_ids"], np.where(weights, labels, 0))
    assert (labels[weights] >= 5).all()  # never [CLS], [SEP] or padding
    assert (np.take_along_axis(input_mask, positions, axis=1)[weights] == 1).all()
    assert (positions[~weights] == 0).all() and (out["masked_lm_ids"][~weights] == 0).all()
    # Sorted, distinct positions.
    used = np.where(weights, positions, np.iinfo(np.int32).max)
    assert (np.diff(used, axis=1) > 0)[weights[:, 1:]].all()
    # Only masked positions changed.
    changed = out["input_ids"] != ids
    at_slots = np.zeros_like(changed)
    np.put_along_axis(at_slots, positions, weights, axis=1)
    assert not (changed & ~at_slots).any()


def test_whole_words_are_masked(batch):
    ids, input_mask, boundary, out = batch
    candidate = (input_mask == 1) & (ids != CLS) & (ids != SEP)
    word_of = np.cumsum(boundary * candidate, axis=1) - 1
    for row, words in enumerate(
        masked_words(out["masked_lm_positions"], out["masked_lm_weights"], boundary, candidate)
    ):
        expected = np.flatnonzero(candidate[row] & np.isin(word_of[row], words))
        got = out["masked_lm_positions"][row][out["masked_lm_weights"][row] > 0]
        np.testing.assert_array_equal(got, expected)


def test_replacements_are_80_10_10(batch):
    _, _, _, out = batch
    weights = out["masked_lm_weights"] > 0
    new = np.take_along_axis(out["input_ids"], out["masked_lm_positions"], axis=1)[weights]
    labels = out["masked_lm_ids"][weights]
    shares = np.array([(new == MASK).mean(), (new == labels).mean()])
    random_share = 1 - shares.sum()
    # ~55,000 masked tokens: a standard error of ~0.002 on each share.
    np.testing.assert_allclose(shares, [0.8, 0.1], atol=0.01)
    assert abs(random_share - 0.1) < 0.01
    replaced = new[(new != MASK) & (new != labels)]
    assert replaced.min() >= 5 and replaced.max() < VOCAB


def test_ngram_lengths_are_drawn_with_p_one_over_n():
    drawn = _ngram_lengths([400, 250], tf.constant([3, 9]), 3).numpy()
    shares = np.bincount(drawn.ravel(), minlength=4)[1:] / drawn.size
    np.testing.assert_allclose(shares, [6 / 11, 3 / 11, 2 / 11], atol=0.005)  # 100,000 draws


def test_ngram_mix_of_chosen_spans(batch):
    _, _, _, out = batch
    spans = out["masked_span_words"]
    shares = np.bincount(spans[spans > 0], minlength=4)[1:] / (spans > 0).sum()
    # Drawn as [0.545, 0.273, 0.182], but the official greedy shortens spans that overshoot the
    # budget and skips those touching a masked word (long ones more often): ~[0.61, 0.25, 0.14]
    # on this data, for the writer's NumPy version too (next test); ~0.57 for n = 1 at P = 80.
    assert 0.57 < shares[0] < 0.65 and 0.22 < shares[1] < 0.29 and 0.11 < shares[2] < 0.18


def test_matches_the_writers_numpy_masking_statistics(batch):
    ids, input_mask, boundary, out = batch
    theirs = ngram_masking.mask_ngrams(
        ids,
        boundary,
        input_mask,
        rng=np.random.default_rng(1),
        max_predictions_per_seq=20,
        vocabulary_size=VOCAB,
    )
    ours_spans = np.bincount(out["masked_span_words"].ravel(), minlength=4)[1:4]
    np.testing.assert_allclose(
        ours_spans / ours_spans.sum(),
        theirs.span_words[1:4] / theirs.span_words[1:].sum(),
        atol=0.02,
    )
    fillable = single_piece_words(ids, input_mask, boundary) >= budget(input_mask)
    np.testing.assert_array_equal(
        out["masked_lm_weights"].sum(axis=1)[fillable],
        theirs.masked_lm_weights.sum(axis=1)[fillable],
    )


def test_same_seed_same_masks_other_seed_other_masks():
    ids, input_mask, boundary = synthetic_batch(np.random.default_rng(1), BATCH, SEQ)

    def positions(seed):
        out = mask(ids, input_mask, boundary, seed)
        return out["masked_lm_positions"], out["input_ids"]

    first, again, other = positions([1, 2]), positions([1, 2]), positions([1, 3])
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    assert (first[0] != other[0]).any(axis=1).mean() > 0.9


def test_budget_reached_beyond_the_first_draws_and_unreachable_budget():
    # Rows 0-31: 61 two-piece words and one one-piece word; the odd budget needs that single
    # word, which the first 2P + 8 draws miss about half of the time, so the visit must go on
    # to find it. Rows 32-63: three-piece words and a budget of 1: the official code masks
    # nothing.
    ids = np.zeros((BATCH, SEQ), np.int32)
    boundary, input_mask = np.zeros_like(ids), np.zeros_like(ids)
    ids[:32, :125], ids[:32, [0, 124]] = 7, (CLS, SEP)
    boundary[:32, 1:123:2], boundary[:32, [0, 123, 124]] = 1, 1
    input_mask[:32, :125] = 1
    ids[32:, :8] = [CLS, 9, 9, 9, 8, 8, 8, SEP]
    boundary[32:, :8] = [1, 1, 0, 0, 1, 0, 0, 1]
    input_mask[32:, :8] = 1
    expected = np.repeat([19, 0], 32)
    assert list(budget(input_mask)[[0, 32]]) == [19, 1]
    for seed in range(4):
        out = mask(ids, input_mask, boundary, [seed, 0])
        np.testing.assert_array_equal(out["masked_lm_weights"].sum(axis=1), expected)


def test_restore_then_remask_round_trip():
    ids, input_mask, boundary = synthetic_batch(np.random.default_rng(2), BATCH, SEQ)
    static = mask(ids, input_mask, boundary, [3, 4])
    restored = restore_original_tokens(
        static["input_ids"],
        static["masked_lm_positions"],
        static["masked_lm_ids"],
        static["masked_lm_weights"],
    )
    np.testing.assert_array_equal(restored.numpy(), ids)
    features = {**static, "input_mask": input_mask, "token_boundary": boundary}
    fresh = remask_batch(features, tf.constant([5, 6]), MaskingSettings(vocabulary_size=VOCAB))
    assert fresh["masked_lm_positions"].shape == (BATCH, 20)
    labels = np.take_along_axis(ids, fresh["masked_lm_positions"].numpy(), axis=1)
    weights = fresh["masked_lm_weights"].numpy() > 0
    np.testing.assert_array_equal(fresh["masked_lm_ids"].numpy()[weights], labels[weights])
    # P is the batch's own: remask_batch takes none.
    with pytest.raises(TypeError, match="keyword argument 'max_predictions_per_seq'"):
        remask_batch(
            features, tf.constant([5, 6]), MaskingSettings(VOCAB), max_predictions_per_seq=9
        )


def test_rows_without_words_and_bad_vocabulary():
    ids, input_mask = np.zeros((BATCH, SEQ), np.int32), np.zeros((BATCH, SEQ), np.int32)
    ids[::2, :2], input_mask[::2, :2] = (CLS, SEP), 1  # [CLS] [SEP], or only padding
    out = mask(ids, input_mask, input_mask, [1, 1])
    assert out["masked_lm_weights"].sum() == 0
    np.testing.assert_array_equal(out["input_ids"], ids)
    with pytest.raises(ValueError, match="vocabulary_size=5"):
        mask_whole_word_ngrams(
            ids, input_mask, input_mask, tf.constant([1, 1]), masking=MaskingSettings(5)
        )
    with pytest.raises(ValueError, match="needs masking.vocabulary_size"):
        mask_whole_word_ngrams(
            ids, input_mask, input_mask, tf.constant([1, 1]), masking=MaskingSettings()
        )


def test_real_book_matches_the_official_statistics(shared_data):
    """The six book slices with the release vocabulary: masks as the official script's output."""
    model = spm.SentencePieceProcessor(
        model_file=str(shared_data / "vocab" / "30k-clean.reconstructed.model")
    )
    books = sorted((shared_data / "corpus" / "gutenberg").glob("[0-9]*.txt"))
    text = "\n\n".join(book.read_text(encoding="utf-8-sig") for book in books)
    stream = np.array(model.encode(text.lower()), np.int32)
    # The official `_is_start_piece`: "▁"-prefixed, "<"-prefixed or a punctuation piece.
    punctuation = set('!"#$%&"()*+,-./:;?@[\\]^_`{|}~')
    starts = np.array(
        [p.startswith(("▁", "<")) or p in punctuation for p in map(model.id_to_piece, stream)]
    )
    rng = np.random.default_rng(0)
    rows = 12 * BATCH  # ~88,000 of the slices' ~120,000 tokens
    ids, input_mask, boundary = (np.zeros((rows, SEQ), np.int32) for _ in range(3))
    cursor = 0
    for row in range(rows):  # 75% at full length, as the official output
        length = SEQ if rng.random() < 0.75 else int(rng.integers(16, SEQ))
        split, body = int(rng.integers(1, length - 4)), slice(cursor, cursor + length - 3)
        cursor += length - 3
        ids[row, :length] = np.concatenate(
            [[CLS], stream[body][:split], [SEP], stream[body][split:], [SEP]]
        )
        boundary[row, :length] = np.concatenate(
            [[1], starts[body][:split], [1], starts[body][split:], [1]]
        )
        input_mask[row, :length] = 1
    chunks = [
        mask(ids[i : i + BATCH], input_mask[i : i + BATCH], boundary[i : i + BATCH], [2, i])
        for i in range(0, len(ids), BATCH)
    ]
    out = {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}
    weights = out["masked_lm_weights"] > 0
    np.testing.assert_array_equal(weights.sum(axis=1), budget(input_mask))
    # Runs of masked words (adjacent spans merged), as the reference statistics measure them.
    candidate = (input_mask == 1) & (ids != CLS) & (ids != SEP)
    runs = np.zeros(5)
    for words in masked_words(
        out["masked_lm_positions"], out["masked_lm_weights"], boundary, candidate
    ):
        for run in np.split(words, np.flatnonzero(np.diff(words) != 1) + 1):
            runs[min(len(run), 4)] += 1
    reference = json.loads(
        (shared_data / "reference" / "official_seq128_dupe1_stats.json").read_text()
    )
    official = [reference["span_words_shares"][k] for k in ("1", "2", "3", "longer")]
    np.testing.assert_allclose(runs[1:] / runs[1:].sum(), official, atol=0.025)  # ~7,500 runs
    assert abs(weights.sum() / len(ids) - reference["masked_per_example"]) < 0.3
