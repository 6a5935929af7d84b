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

from albert_keras_contracts import record_format
from albert_keras_contracts.record_format import (
    INPUT_IDS,
    INPUT_MASK,
    MASKED_LM_IDS,
    MASKED_LM_POSITIONS,
    MASKED_LM_WEIGHTS,
    SEGMENT_IDS,
    SENTENCE_LABELS,
    TOKEN_BOUNDARY,
)
from albert_keras_settings.writer_settings import WriterSettings
from pipelines.ngram_masking import mask_ngrams
from pipelines.pretraining_stats import PretrainingStats
from pipelines.record_writer import frame_records, serialize_examples
from pipelines.sentence_packing import pack_sentences, separated_tokens
from pipelines.sop_pairs import SentencePairs, create_pairs, pack_pairs
from pipelines.tokenization import SentencePieceEncoder

# Rounds are masked and shuffled together until a batch holds this many tokens (4096 examples of
# 128): big enough for NumPy to pay off, small enough to bound memory whatever the dupe factor.
_BATCH_TOKENS = 1 << 19
# Distinct last seed words keep the pairs' and the masks' random streams independent.
_PYTHON_STREAM, _NUMPY_STREAM = 0, 1


@dataclasses.dataclass(frozen=True)
class ExampleConfig:
    """The settings that decide the records' content: a view of `WriterSettings` (where each is
    documented, with its default), made by `ExampleConfig.of`. Its fields, in this order, open
    `stats.json`'s `settings`."""

    max_seq_length: int
    max_predictions_per_seq: int
    masked_lm_prob: float
    dupe_factor: int
    short_seq_prob: float
    ngram: int
    sentence_objective: str
    packing: str | None
    seed: int

    @classmethod
    def of(cls, settings: WriterSettings | None = None, /, **overrides) -> ExampleConfig:
        """The record settings of `settings` (or `WriterSettings`' defaults), with `overrides`.

        Args:
            settings: `WriterSettings`, or None for its defaults.
            **overrides: record settings replacing those of `settings`.

        Example:
        >>> ExampleConfig.of(max_seq_length=128).max_seq_length, ExampleConfig.of().dupe_factor
        (128, 40)
        """
        names = [field.name for field in dataclasses.fields(cls)]
        if settings is None:
            fields = dataclasses.fields(WriterSettings)
            values = {field.name: field.default for field in fields if field.name in names}
        else:
            values = {name: getattr(settings, name) for name in names}
        return cls(**{**values, **overrides})


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
    >>> docs = [["The cat sat on the mat.", "It was a fine day.", "We saw a bird in the park."]]
    >>> config = ExampleConfig.of(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=3)
    >>> stats = PretrainingStats()
    >>> chunks = make_group_records(config, SentencePieceEncoder("spm.model"), 0, docs, stats)
    >>> _ = open("x.tfrecord", "wb").write(b"".join(chunks))
    >>> stats.examples
    6
    """
    for _, chunk in make_records(config, encoder, [(group_index, documents)], [stats]):
        yield chunk


def make_records(
    config: ExampleConfig,
    encoder: SentencePieceEncoder,
    groups: list[tuple[int, list[list[str]]]],
    stats: list[PretrainingStats],
) -> Iterator[tuple[int, bytes]]:
    """`make_group_records` of several groups at once: the same bytes, fewer NumPy calls.

    Small groups (few dupe rounds) are encoded in one SentencePiece call and their batches of
    rounds packed, masked and serialized together (each batch still with its own generator).

    Args:
        config: `ExampleConfig`.
        encoder: `SentencePieceEncoder`.
        groups: list of `(group_index, documents)`.
        stats: list of `PretrainingStats`, one per group (may repeat), added to.

    Yields:
        `(k, chunk)`: TFRecord data of `groups[k]`, in the order of `groups`, then of rounds.

    Example:
    >>> docs0 = [["The cat sat on the mat.", "It was a fine day."]]
    >>> docs1 = [["We saw a bird.", "The dog ran in the park.", "The sky was blue."]]
    >>> config = ExampleConfig.of(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2)
    >>> stats = [PretrainingStats(), PretrainingStats()]
    >>> groups = [(0, docs0), (1, docs1)]
    >>> files = [open("g0.tfrecord", "wb"), open("g1.tfrecord", "wb")]
    >>> for k, chunk in make_records(config, SentencePieceEncoder("spm.model"), groups, stats):
    ...     _ = files[k].write(chunk)
    >>> [s.examples for s in stats]
    [2, 4]
    """
    counts = [sum(map(len, documents)) for _, documents in groups]
    sentences = [s for _, documents in groups for document in documents for s in document]
    tokens, lengths = encoder.encode(sentences)
    all_lengths = lengths.tolist()
    batch_examples = max(1, _BATCH_TOKENS // config.max_seq_length)
    # Every group's documents as lists of their (non-empty) sentences' token lengths.
    kept_lengths, position, document_ends, token_end = [], 0, [], 0
    for k, (group_index, documents) in enumerate(groups):
        group_lengths = all_lengths[position : position + counts[k]]
        position += counts[k]
        group_stats = stats[k]
        group_stats.groups += 1
        group_stats.sentences += counts[k]
        group_stats.empty_sentences += group_lengths.count(0)
        group_stats.tokens += sum(group_lengths)
        sentence_lengths, start = [], 0
        for document in documents:
            kept = list(filter(None, group_lengths[start : start + len(document)]))
            start += len(document)
            if kept:
                sentence_lengths.append(kept)
                token_end += sum(kept)
                document_ends.append(token_end)
        group_stats.documents += len(sentence_lengths)
        kept_lengths.append(sentence_lengths)
    separators = config.packing == "full_sentences"
    if separators:
        # RoBERTa's extra [SEP] between documents, in the array, so a run may cross it.
        tokens = separated_tokens(tokens, document_ends, encoder.sep_id)
    pending, pending_examples, token_offset = [], 0, 0
    for k, (group_index, _) in enumerate(groups):
        sentence_lengths, group_stats = kept_lengths[k], stats[k]
        group_tokens = sum(map(sum, sentence_lengths))
        group_tokens += len(sentence_lengths) if separators else 0
        if sentence_lengths:
            for batch in _round_batches(config, group_index, sentence_lengths, group_stats):
                if pending and pending_examples + batch[2].label.size > batch_examples:
                    yield from _masked_records(config, encoder, tokens, pending, stats)
                    pending, pending_examples = [], 0
                pending.append((k, batch[0], batch[1], _shifted(batch[2], token_offset)))
                pending_examples += batch[2].label.size
        token_offset += group_tokens
    if pending:
        yield from _masked_records(config, encoder, tokens, pending, stats)


def _round_batches(config, group_index, sentence_lengths, stats):
    """Yields `(group_index, first_round, pairs)`: the group's rounds cut into pairs, together
    until a batch holds about `_BATCH_TOKENS`."""
    batch_examples = max(1, _BATCH_TOKENS // config.max_seq_length)
    packed = None
    if config.packing:
        # No draw in packing: every round has the same runs (and its own masks).
        packed = pack_sentences(
            sentence_lengths, max_seq_length=config.max_seq_length, packing=config.packing
        )
    dupe_round = 0
    while dupe_round < config.dupe_factor:
        first_round, batch = dupe_round, []
        while dupe_round < config.dupe_factor and sum(p.label.size for p in batch) < batch_examples:
            if packed is not None:
                batch.append(packed)
                dupe_round += 1
                continue
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
            yield group_index, first_round, pairs


def _shifted(pairs: SentencePairs, offset: int) -> SentencePairs:
    """`pairs` indexing a flat token array that starts `offset` tokens later."""
    if not offset:
        return pairs
    return pairs._replace(a_start=pairs.a_start + offset, b_start=pairs.b_start + offset)


def _masked_records(config, encoder, tokens, batches, stats) -> Iterator[tuple[int, bytes]]:
    """Packs, masks and serializes `batches` (`(k, group_index, first_round, pairs)`) together;
    yields `(k, chunk)` per batch."""
    pairs = SentencePairs(*(np.concatenate(column) for column in zip(*(b[3] for b in batches))))
    sizes = [b[3].label.size for b in batches]
    rngs = [
        np.random.default_rng([config.seed, group_index, first_round, _NUMPY_STREAM])
        for _, group_index, first_round, _ in batches
    ]
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
        rng=rngs,
        rows_per_rng=sizes,
        max_predictions_per_seq=config.max_predictions_per_seq,
        masked_lm_prob=config.masked_lm_prob,
        ngram=config.ngram,
        vocabulary_size=encoder.vocabulary_size,
        special_ids=(encoder.cls_id, encoder.sep_id),
        mask_id=encoder.mask_id,
        first_normal_id=encoder.first_normal_id,
    )
    features = {
        INPUT_IDS: masked.input_ids,
        INPUT_MASK: packed.input_mask,
        SEGMENT_IDS: packed.segment_ids,
        TOKEN_BOUNDARY: packed.token_boundary,
        MASKED_LM_POSITIONS: masked.masked_lm_positions,
        MASKED_LM_IDS: masked.masked_lm_ids,
        MASKED_LM_WEIGHTS: masked.masked_lm_weights,
        SENTENCE_LABELS: pairs.label[:, None],
    }
    record_format.check_feature_names(features)
    records = serialize_examples(features)
    real_lengths = packed.input_mask.sum(axis=1)
    masked_counts = masked.masked_lm_weights.sum(axis=1).astype(np.int64)
    met = masked_counts == masked.num_to_predict
    first = 0
    for b, ((k, *_), size, rng) in enumerate(zip(batches, sizes, rngs)):
        rows = slice(first, first + size)
        # The official script shuffles every instance it made; we shuffle within the batch of
        # rounds (the reader's shuffle buffer mixes batches and shards).
        order = rng.permutation(size) + first
        chunk = frame_records([records[i] for i in order.tolist()])
        first += size
        batch_stats = stats[k]
        batch_stats.examples += size
        batch_stats.add_histogram("labels", np.bincount(pairs.label[rows], minlength=2))
        batch_stats.budget_met += int(met[rows].sum())
        lengths = np.bincount(real_lengths[rows], minlength=config.max_seq_length + 1)
        batch_stats.add_histogram("lengths", lengths)
        batch_stats.add_histogram("masked", np.bincount(masked_counts[rows]))
        batch_stats.add_histogram("drawn_ngrams", masked.drawn_ngrams[b])
        batch_stats.add_histogram("span_words", masked.span_words[b])
        batch_stats.add_histogram("merged_span_words", masked.merged_span_words[b])
        batch_stats.add_histogram("replacements", masked.replacements[b])
        yield k, chunk


def _seed(seed: int, group_index: int, dupe_round: int) -> int:
    """A 128-bit seed for `random.Random` that depends on all three numbers."""
    entropy = [seed, group_index, dupe_round, _PYTHON_STREAM]
    state = np.random.SeedSequence(entropy).generate_state(4, np.uint32)
    return int.from_bytes(state.tobytes(), "little")
