"""One unit of work of the pretraining-data writer: a group of documents -> serialized records.

A group is encoded once (SentencePiece), then every dupe round reuses the ids: each round cuts
new pairs (its own `random.Random`), rounds are masked together in batches of about
`_BATCH_TOKENS` (one `np.random.Generator` per batch), and each batch is shuffled and framed as
TFRecord data. Every seed derives from `(seed, group index, round)`, so a group's records are
the same whichever process makes them, and whatever else runs.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import numpy as np

from pipelines.ngram_masking import mask_ngrams
from pipelines.pretraining_stats import PretrainingStats
from pipelines.record_writer import frame_records, serialize_examples
from pipelines.sop_pairs import SentencePairs, create_pairs, pack_pairs
from pipelines.tokenization import SentencePieceEncoder

# Rounds are masked and shuffled together until a batch holds this many tokens (4096 examples of
# 128): big enough for NumPy to pay off, small enough to bound memory whatever the dupe factor.
_BATCH_TOKENS = 1 << 19
# Distinct last seed words keep the pairs' and the masks' random streams independent.
_PYTHON_STREAM, _NUMPY_STREAM = 0, 1


@dataclasses.dataclass(frozen=True)
class ExampleConfig:
    """The settings that decide the records' content (see `write_pretraining_data`)."""

    max_seq_length: int = 512
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    dupe_factor: int = 40
    short_seq_prob: float = 0.1
    ngram: int = 3
    sentence_objective: str = "sop"
    seed: int = 12345


def make_group_records(
    config: ExampleConfig,
    encoder: SentencePieceEncoder,
    group_index: int,
    documents: list[list[str]],
    stats: PretrainingStats,
) -> Iterator[bytes]:
    """Yields the TFRecord-framed examples of one group of documents, batch after batch.

    Args:
        config: `ExampleConfig`.
        encoder: `SentencePieceEncoder`.
        group_index: int. The group's place in the input; with `config.seed` it seeds every draw.
        documents: list of documents (lists of sentences).
        stats: `PretrainingStats`, added to.

    Example:
    >>> chunks = make_group_records(ExampleConfig(max_seq_length=128), encoder, 0, docs, stats)
    >>> open("x.tfrecord", "wb").write(b"".join(chunks))
    """
    sentences = [sentence for document in documents for sentence in document]
    tokens, lengths = encoder.encode(sentences)
    stats.groups += 1
    stats.sentences += len(sentences)
    stats.empty_sentences += int((lengths == 0).sum())
    stats.tokens += int(tokens.size)
    sentence_lengths, position = [], 0
    for document in documents:
        kept = [n for n in lengths[position : position + len(document)].tolist() if n]
        position += len(document)
        if kept:
            sentence_lengths.append(kept)
    stats.documents += len(sentence_lengths)
    if not sentence_lengths:
        return
    batch_examples = max(1, _BATCH_TOKENS // config.max_seq_length)
    dupe_round = 0
    while dupe_round < config.dupe_factor:
        first_round, batch = dupe_round, []
        while dupe_round < config.dupe_factor and sum(p.label.size for p in batch) < batch_examples:
            counters = {}
            batch.append(
                create_pairs(
                    sentence_lengths,
                    max_seq_length=config.max_seq_length,
                    short_seq_prob=config.short_seq_prob,
                    sentence_objective=config.sentence_objective,
                    rng=random.Random(_seed(config.seed, group_index, dupe_round)),
                    counters=counters,
                )
            )
            stats.single_segment_splits += counters["single_segment_splits"]
            stats.single_segment_too_short += counters["single_segment_too_short"]
            dupe_round += 1
        pairs = SentencePairs(*(np.concatenate(column) for column in zip(*batch)))
        if pairs.label.size:
            rng = np.random.default_rng([config.seed, group_index, first_round, _NUMPY_STREAM])
            yield _masked_records(config, encoder, tokens, pairs, rng, stats)


def _masked_records(config, encoder, tokens, pairs, rng, stats) -> bytes:
    packed = pack_pairs(
        tokens,
        pairs,
        max_seq_length=config.max_seq_length,
        cls_id=encoder.cls_id,
        sep_id=encoder.sep_id,
        word_starts=encoder.word_starts,
    )
    masked = mask_ngrams(
        packed.input_ids,
        packed.token_boundary,
        packed.input_mask,
        rng=rng,
        max_predictions_per_seq=config.max_predictions_per_seq,
        masked_lm_prob=config.masked_lm_prob,
        ngram=config.ngram,
        vocabulary_size=encoder.vocabulary_size,
        special_ids=(encoder.cls_id, encoder.sep_id),
        mask_id=encoder.mask_id,
        first_normal_id=encoder.first_normal_id,
    )
    # The official script shuffles every instance it made; we shuffle within the batch (the
    # reader's shuffle buffer mixes batches and shards).
    order = rng.permutation(pairs.label.size)
    features = {
        "input_ids": masked.input_ids,
        "input_mask": packed.input_mask,
        "segment_ids": packed.segment_ids,
        "token_boundary": packed.token_boundary,
        "masked_lm_positions": masked.masked_lm_positions,
        "masked_lm_ids": masked.masked_lm_ids,
        "masked_lm_weights": masked.masked_lm_weights,
        "next_sentence_labels": pairs.label[:, None],
    }
    records = serialize_examples(features)
    records = [records[i] for i in order.tolist()]

    real_lengths = packed.input_mask.sum(axis=1)
    masked_counts = masked.masked_lm_weights.sum(axis=1).astype(np.int64)
    stats.examples += int(pairs.label.size)
    stats.add_histogram("labels", np.bincount(pairs.label, minlength=2))
    stats.budget_met += int((masked_counts == masked.num_to_predict).sum())
    stats.add_histogram("lengths", np.bincount(real_lengths, minlength=config.max_seq_length + 1))
    stats.add_histogram("masked", np.bincount(masked_counts))
    stats.add_histogram("drawn_ngrams", masked.drawn_ngrams)
    stats.add_histogram("span_words", masked.span_words)
    stats.add_histogram("merged_span_words", masked.merged_span_words)
    stats.add_histogram("replacements", masked.replacements)
    return frame_records(records)


def _seed(seed: int, group_index: int, dupe_round: int) -> int:
    """A 128-bit seed for `random.Random` that depends on all three numbers."""
    entropy = [seed, group_index, dupe_round, _PYTHON_STREAM]
    state = np.random.SeedSequence(entropy).generate_state(4, np.uint32)
    return int.from_bytes(state.tobytes(), "little")
