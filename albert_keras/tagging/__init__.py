"""Token tagging data and metrics: CoNLL-style files, tag names, entity-level scores."""

from albert_keras.tagging.conll_reader import TaggedSentences, read_conll, tag_ids, tag_names
from albert_keras.tagging.tagging_metrics import tagging_metrics

__all__ = ["TaggedSentences", "read_conll", "tag_ids", "tag_names", "tagging_metrics"]
