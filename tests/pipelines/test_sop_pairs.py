"""Sentence pairs: the official chunking and truncation, our SOP single-segment rule, packing."""

import random

import numpy as np
import pytest

from pipelines.sop_pairs import SentencePairs, _truncated, create_pairs, pack_pairs

CLS, SEP = 2, 3


def _official_truncate(a_length, b_length, max_num_tokens, rng):
    """The official `truncate_seq_pair` loop, on lengths, counting front cuts."""
    a_front = b_front = 0
    while a_length + b_length > max_num_tokens:
        front = rng.random() < 0.5
        if a_length > b_length:
            a_length, a_front = a_length - 1, a_front + front
        else:
            b_length, b_front = b_length - 1, b_front + front
    return a_length, b_length, a_front, b_front


def _documents(rng, num_documents, max_sentences=30, max_length=40):
    return [
        [rng.randint(1, max_length) for _ in range(rng.randint(1, max_sentences))]
        for _ in range(num_documents)
    ]


def _document_ranges(documents):
    ends = np.cumsum([sum(d) for d in documents])
    return np.stack([ends - [sum(d) for d in documents], ends], axis=1)


def test_truncation_keeps_the_official_lengths_and_front_back_balance():
    rng = random.Random(0)
    fronts = []
    for _ in range(3000):
        a_length, b_length = rng.randint(1, 300), rng.randint(1, 300)
        limit = rng.randint(2, 200)
        a_start, a_kept, b_start, b_kept = _truncated(
            (1000, 1000 + a_length), (5000, 5000 + b_length), limit, rng
        )
        want_a, want_b, _, _ = _official_truncate(a_length, b_length, limit, rng)
        assert (a_kept, b_kept) == (want_a, want_b)
        assert a_kept >= 1 and b_kept >= 1 and a_kept + b_kept <= limit
        assert 0 <= a_start - 1000 <= a_length - a_kept
        assert 0 <= b_start - 5000 <= b_length - b_kept
        if a_length - a_kept:
            fronts.append((a_start - 1000) / (a_length - a_kept))
    # Each dropped token comes from the front with p 0.5, as the official coin flip.
    assert abs(np.mean(fronts) - 0.5) < 0.02


@pytest.mark.parametrize("max_seq_length", [16, 128])
def test_sop_pairs_are_two_adjacent_segments_in_or_out_of_order(max_seq_length):
    rng = random.Random(1)
    documents = _documents(rng, 60)
    counters = {}
    pairs = create_pairs(
        documents,
        max_seq_length=max_seq_length,
        short_seq_prob=0.1,
        sentence_objective="sop",
        rng=random.Random(7),
        counters=counters,
    )
    ranges = _document_ranges(documents)
    a_end = pairs.a_start + pairs.a_length
    b_end = pairs.b_start + pairs.b_length
    assert (pairs.a_length >= 1).all() and (pairs.b_length >= 1).all()
    assert (pairs.a_length + pairs.b_length <= max_seq_length - 3).all()
    # Both segments in one document: SOP never draws from another one.
    doc_of_a = np.searchsorted(ranges[:, 1], pairs.a_start, side="right")
    doc_of_b = np.searchsorted(ranges[:, 1], pairs.b_start, side="right")
    assert (doc_of_a == doc_of_b).all() and (b_end <= ranges[doc_of_b, 1]).all()
    in_order = pairs.label == 0
    assert (a_end[in_order] <= pairs.b_start[in_order]).all()
    assert (b_end[~in_order] <= pairs.a_start[~in_order]).all()
    assert 0.4 < pairs.label.mean() < 0.6
    assert counters["single_segment_splits"] > 0


def test_a_lone_sentence_is_split_inside_and_a_one_token_one_skipped():
    counters = {}
    pairs = create_pairs(
        [[300], [1], [2]],
        max_seq_length=128,
        short_seq_prob=0.0,
        sentence_objective="sop",
        rng=random.Random(3),
        counters=counters,
    )
    # The 300-token sentence and the 2-token one are split; the 1-token one cannot be.
    assert counters == {"single_segment_splits": 2, "single_segment_too_short": 1}
    assert len(pairs.label) == 2
    assert pairs.a_length[1] == pairs.b_length[1] == 1
    # Split at one point: the two segments tile the sentence (before truncation).
    assert sorted([pairs.a_start[1], pairs.b_start[1]]) == [301, 302]


def test_sop_chunks_reach_the_target_length_as_the_official_code():
    # No short targets: every chunk but a document's last holds >= max_seq_length - 3 tokens.
    documents = [[10] * 50]
    pairs = create_pairs(
        documents,
        max_seq_length=64,
        short_seq_prob=0.0,
        sentence_objective="sop",
        rng=random.Random(0),
    )
    totals = pairs.a_length + pairs.b_length
    assert (totals[:-1] == 61).all()  # chunks of 7 sentences (70 tokens) truncated to 61
    assert len(totals) == 8  # 50 sentences: 7 chunks of 7, then the last one alone (split)


def test_nsp_negatives_come_from_another_document():
    rng = random.Random(2)
    documents = _documents(rng, 40)
    pairs = create_pairs(
        documents,
        max_seq_length=128,
        short_seq_prob=0.1,
        sentence_objective="nsp",
        rng=random.Random(5),
    )
    ranges = _document_ranges(documents)
    doc_of_a = np.searchsorted(ranges[:, 1], pairs.a_start, side="right")
    doc_of_b = np.searchsorted(ranges[:, 1], pairs.b_start, side="right")
    positive = pairs.label == 0
    assert (doc_of_a[positive] == doc_of_b[positive]).all()
    assert (pairs.a_start + pairs.a_length <= pairs.b_start)[positive].all()
    assert (doc_of_a[~positive] != doc_of_b[~positive]).mean() > 0.95
    assert 0.4 < pairs.label.mean() < 0.65


def test_no_sentence_objective_gives_single_segments():
    documents = _documents(random.Random(4), 20)
    pairs = create_pairs(
        documents,
        max_seq_length=32,
        short_seq_prob=0.0,
        sentence_objective="none",
        rng=random.Random(0),
    )
    assert (pairs.b_length == 0).all() and (pairs.label == 0).all()
    assert (pairs.a_length >= 1).all() and (pairs.a_length <= 30).all()


def test_pack_pairs_layout():
    tokens = np.arange(100, 120, dtype=np.int32)
    word_starts = np.zeros(200, bool)
    word_starts[[100, 103, 110, 115]] = True
    pairs = SentencePairs(
        a_start=np.array([0, 10]),
        a_length=np.array([4, 3]),
        b_start=np.array([5, 1]),
        b_length=np.array([2, 5]),
        label=np.array([0, 1]),
    )
    packed = pack_pairs(
        tokens, pairs, max_seq_length=12, cls_id=CLS, sep_id=SEP, word_starts=word_starts
    )
    assert packed.input_ids.tolist() == [
        [CLS, 100, 101, 102, 103, SEP, 105, 106, SEP, 0, 0, 0],
        [CLS, 110, 111, 112, SEP, 101, 102, 103, 104, 105, SEP, 0],
    ]
    assert packed.input_mask.tolist() == [[1] * 9 + [0] * 3, [1] * 11 + [0]]
    assert packed.segment_ids.tolist() == [
        [0] * 6 + [1] * 3 + [0] * 3,
        [0] * 5 + [1] * 6 + [0],
    ]
    # [CLS]/[SEP], word starts, and each segment's first token (a word's tail after truncation).
    assert packed.token_boundary.tolist() == [
        [1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0],
        [1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0],
    ]
    with pytest.raises(ValueError, match="exceeds max_seq_length=8"):
        pack_pairs(tokens, pairs, max_seq_length=8, cls_id=CLS, sep_id=SEP, word_starts=word_starts)


def test_single_segment_packing():
    pairs = SentencePairs(*(np.array([v]) for v in (3, 4, 0, 0, 0)))
    packed = pack_pairs(
        np.arange(10, 20),
        pairs,
        max_seq_length=8,
        cls_id=CLS,
        sep_id=SEP,
        word_starts=np.ones(30, bool),
    )
    assert packed.input_ids.tolist() == [[CLS, 13, 14, 15, 16, SEP, 0, 0]]
    assert packed.segment_ids.tolist() == [[0] * 8]
    assert packed.input_mask.tolist() == [[1] * 6 + [0, 0]]


def test_bad_settings():
    with pytest.raises(ValueError, match="sentence_objective='mlm'"):
        create_pairs(
            [[3]],
            max_seq_length=16,
            short_seq_prob=0,
            sentence_objective="mlm",
            rng=random.Random(0),
        )
    with pytest.raises(ValueError, match="max_seq_length=4 leaves no room"):
        create_pairs(
            [[3]],
            max_seq_length=4,
            short_seq_prob=0,
            sentence_objective="sop",
            rng=random.Random(0),
        )
