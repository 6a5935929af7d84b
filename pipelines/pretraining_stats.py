"""`PretrainingStats`: counts of what the pretraining-data writer made, and their summary.

Every field is a count (or a histogram of counts), so the stats of shards, workers and tasks
merge by addition. `summary()` gives the figures of `../shared/data/reference/*_stats.json`
(share of label 1, lengths, masked counts, replacement shares, masked spans in words) under the
same names, so ours and the official script's can be compared side by side.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class PretrainingStats:
    """What the writer made; all counts.

    Args:
        groups, documents, sentences, empty_sentences, tokens: int. Input the workers encoded
            (`empty_sentences` encoded to no token and were dropped).
        examples: int. Examples written.
        labels: list of 2 ints. Examples with `next_sentence_labels` 0 and 1.
        single_segment_splits, single_segment_too_short: int. SOP chunks of one sentence split
            in two, and those too short to split (skipped).
        budget_met: int. Examples whose masked count equals `num_to_predict`.
        lengths: list of int. Examples by real length (index = tokens, [CLS]/[SEP] included).
        masked: list of int. Examples by masked count.
        drawn_ngrams: list of int. The n drawn at each visited word (index = n).
        span_words: list of int. Chosen spans by length in words (index = n).
        merged_span_words: list of int. Runs of masked words (adjacent spans merged; last
            index: longer than the n-gram limit).
        replacements: list of 3 ints. Masked tokens made `[MASK]`, kept, made random.

    Example:
    >>> a = PretrainingStats(examples=3, labels=[2, 1]).to_dict()  # as in a checkpoint
    >>> b = PretrainingStats(examples=1, labels=[0, 1]).to_dict()
    >>> total = PretrainingStats.from_dict(a).merge(PretrainingStats.from_dict(b))
    >>> total.examples, total.summary(max_seq_length=128)["label_1_share"]
    (4, 0.5)
    """

    groups: int = 0
    documents: int = 0
    sentences: int = 0
    empty_sentences: int = 0
    tokens: int = 0
    examples: int = 0
    labels: list = dataclasses.field(default_factory=lambda: [0, 0])
    single_segment_splits: int = 0
    single_segment_too_short: int = 0
    budget_met: int = 0
    lengths: list = dataclasses.field(default_factory=list)
    masked: list = dataclasses.field(default_factory=list)
    drawn_ngrams: list = dataclasses.field(default_factory=list)
    span_words: list = dataclasses.field(default_factory=list)
    merged_span_words: list = dataclasses.field(default_factory=list)
    replacements: list = dataclasses.field(default_factory=lambda: [0, 0, 0])

    def add_histogram(self, name: str, counts: np.ndarray) -> None:
        """Adds `counts` (a histogram) into the histogram `name`, growing it as needed."""
        mine = getattr(self, name)
        counts = np.asarray(counts).tolist()
        mine.extend([0] * (len(counts) - len(mine)))
        for index, count in enumerate(counts):
            mine[index] += int(count)

    def merge(self, other: PretrainingStats) -> PretrainingStats:
        """Adds `other` into this one and returns it."""
        for field in dataclasses.fields(self):
            name = field.name
            if isinstance(getattr(self, name), list):
                self.add_histogram(name, getattr(other, name))
            else:
                setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, config: dict) -> PretrainingStats:
        return cls(**{k: (list(v) if isinstance(v, list) else v) for k, v in config.items()})

    def summary(self, max_seq_length: int) -> dict:
        """The reference statistics' figures (names as in `official_seq128_dupe*_stats.json`)."""
        examples = max(self.examples, 1)
        lengths = np.asarray(self.lengths + [0], np.float64)[: max_seq_length + 1]
        lengths = np.pad(lengths, (0, max_seq_length + 1 - lengths.size))
        positions = np.arange(lengths.size)
        masked = np.asarray(self.masked, np.float64)
        replacements = np.asarray(self.replacements, np.float64)
        merged = np.asarray(self.merged_span_words, np.float64)[1:]
        span = np.asarray(self.span_words, np.float64)[1:]
        drawn = np.asarray(self.drawn_ngrams, np.float64)[1:]
        return {
            "examples": self.examples,
            "label_1_share": self.labels[1] / examples,
            "mean_len": float(positions @ lengths) / examples,
            "full_len_share": float(lengths[max_seq_length]) / examples,
            "short_len_share(<L/2)": float(lengths[: (max_seq_length + 1) // 2].sum()) / examples,
            "masked_count_formula_share": self.budget_met / examples,
            "replace_shares": dict(
                zip(
                    ("[MASK]", "kept", "random"),
                    (replacements / max(replacements.sum(), 1)).tolist(),
                )
            ),
            "masked_per_example": float(np.arange(masked.size) @ masked) / examples,
            "span_words_shares": {
                **{str(n): float(c) / max(merged.sum(), 1) for n, c in enumerate(merged[:-1], 1)},
                "longer": float(merged[-1]) / max(merged.sum(), 1) if merged.size else 0.0,
            },
            # Not in the reference: the n drawn at each visit (p proportional to 1/n), and the spans
            # kept (shorter ones win: long spans more often overshoot the budget or overlap).
            "ngram_drawn_shares": {str(n): c / max(drawn.sum(), 1) for n, c in enumerate(drawn, 1)},
            "ngram_shares": {str(n): c / max(span.sum(), 1) for n, c in enumerate(span, 1)},
        }
