"""`WriterSettings`: every setting of the pretraining-data writer, each default written once."""

from __future__ import annotations

import dataclasses
import math

from albert_keras_settings.choices import INPUT_FORMATS, PACKINGS, SENTENCE_OBJECTIVES
from albert_keras_settings.setting import setting


@dataclasses.dataclass(frozen=True, kw_only=True)
class WriterSettings:
    """The settings of one run of the data writer (`pipelines.pretraining_data`).

    Made from keyword arguments or from `python -m pipelines.pretraining_data`'s flags, which
    are generated from these fields; checked when made, so a bad value fails before anything is
    read or written. Both drivers take them: `write_pretraining_data` (local processes) and
    `write_pretraining_data_beam` (an Apache Beam pipeline; it spreads the work itself, so it
    leaves `num_workers`, `task_index`, `num_tasks` and `checkpoint_seconds` aside).

    Args:
        input: str (or a list of str). Glob pattern(s) of text files (plain or .gz),
            comma-separated.
        spm_model: str. SentencePiece model (`pipelines.train_vocab`, or ALBERT's release one).
        output_dir: str. Gets `pretraining-SSSSS-of-NNNNN.tfrecord` files and `stats.json`.
        max_seq_length, max_predictions_per_seq, masked_lm_prob, dupe_factor, short_seq_prob,
            ngram: as the official `create_pretraining_data.py` flags.
        sentence_objective: `"sop"` (ALBERT), `"nsp"` (BERT) or `"none"` (one segment).
        packing: with `sentence_objective="none"`, RoBERTa's inputs: contiguous whole sentences
            packed up to `max_seq_length`, across documents with an extra `[SEP]` between them
            (`"full_sentences"`) or within one (`"doc_sentences"`); `short_seq_prob` does not
            apply. None: one chunk per target length, as BERT.
        num_shards: output files (all tasks together).
        seed: every random draw derives from it.
        num_workers: processes on this machine (1: everything in the calling process).
        task_index, num_tasks: this machine's share: shards s with s % num_tasks == task_index.
        input_format: `"text"` (prose) or `"sentences"` (one per line, blank line between
            documents), see `pipelines.documents`.
        paragraphs_per_document: document size in the `text` format.
        lower_case: None: lower-case when the vocabulary has no capitals.
        group_chars: documents are grouped up to about this many characters: the unit of work,
            of seeding and of shard assignment.
        checkpoint_seconds: least time between two checkpoints of a shard.
        overwrite: when `output_dir` holds a writer run with other arguments, remove what it
            wrote (only that) instead of refusing (`pipelines.writer_folder`).

    Example:
    >>> s = WriterSettings(input="corpus/*.txt", spm_model="spm.model", output_dir="out")
    >>> s.max_seq_length, s.dupe_factor, s.group_chars
    (512, 40, 131072)
    >>> WriterSettings(input="c.txt", spm_model="spm.model", output_dir="out", ngram=0)
    Traceback (most recent call last):
    ValueError: ngram=0 must be >= 1
    """

    input: str = setting(help="Glob pattern(s) of text files, comma-separated.")
    spm_model: str = setting(help="SentencePiece .model file.")
    output_dir: str = setting(help="Gets the shards and stats.json.")
    max_seq_length: int = setting(512, "Tokens per example, [CLS] and [SEP]s included.")
    max_predictions_per_seq: int = setting(20, "Most masked positions per example.")
    masked_lm_prob: float = setting(0.15, "Share of the tokens masked.")
    dupe_factor: int = setting(40, "Times each document is used, with other pairs and masks.")
    short_seq_prob: float = setting(0.1, "Share of examples cut to a random shorter length.")
    ngram: int = setting(3, "Longest masked n-gram (n-gram masking, the paper's section 4.1).")
    sentence_objective: str = setting(
        "sop", "The sentence pairs: sop (ALBERT), nsp (BERT), none.", choices=SENTENCE_OBJECTIVES
    )
    packing: str | None = setting(
        None,
        "With --sentence_objective none: RoBERTa's packed whole sentences, across documents "
        "(full_sentences, an extra [SEP] between them) or within one (doc_sentences).",
        choices=PACKINGS,
    )
    num_shards: int = setting(1, "Output files, all tasks together.")
    seed: int = setting(12345, "Every random draw derives from it (>= 0).")
    num_workers: int = setting(1, "Processes on this machine (at most one per shard).")
    task_index: int = setting(0, "This machine's share: shards s with s % num_tasks == task_index.")
    num_tasks: int = setting(1, "Machines sharing the work.")
    input_format: str = setting(
        "text", "text (prose) or sentences (one a line).", choices=INPUT_FORMATS
    )
    paragraphs_per_document: int = setting(20, "Document size in the text format.")
    lower_case: bool | None = setting(
        None, "Default: lower-case when the vocabulary has no capitals.", flag=False
    )
    group_chars: int = setting(
        1 << 17,
        "Characters per group of documents: the unit of work, seeding and shard assignment.",
    )
    checkpoint_seconds: float = setting(30.0, "Least time between two checkpoints of a shard.")
    overwrite: bool = setting(
        False,
        "When --output_dir holds an earlier run of this command with other settings, "
        "remove what that run wrote (nothing else) instead of refusing.",
    )

    def __post_init__(self):
        if not isinstance(self.input, str):  # a list of patterns: kept, frozen
            object.__setattr__(self, "input", tuple(self.input))
        for ok, message in self._checks():
            if not ok:
                raise ValueError(message)

    def _checks(self) -> list[tuple[bool, str]]:
        """(whether a setting is good, the line that says why not), in the order checked."""
        packing, objective = self.packing, self.sentence_objective
        return [
            (self.max_seq_length >= 5, f"max_seq_length={self.max_seq_length} must be >= 5"),
            (
                self.max_predictions_per_seq >= 1,
                f"max_predictions_per_seq={self.max_predictions_per_seq} must be >= 1",
            ),
            (
                0 < self.masked_lm_prob < 1,
                f"masked_lm_prob={self.masked_lm_prob} must be in (0, 1)",
            ),
            (self.dupe_factor >= 1, f"dupe_factor={self.dupe_factor} must be >= 1"),
            (
                0 <= self.short_seq_prob <= 1,
                f"short_seq_prob={self.short_seq_prob} must be in [0, 1]",
            ),
            (self.ngram >= 1, f"ngram={self.ngram} must be >= 1"),
            (
                objective in SENTENCE_OBJECTIVES,
                f"sentence_objective={objective!r}; expected one of {SENTENCE_OBJECTIVES}",
            ),
            (
                packing is None or packing in PACKINGS,
                f"packing={packing!r}; expected one of {PACKINGS}",
            ),
            (
                packing is None or objective == "none",
                f"packing={packing!r} needs sentence_objective='none' (got {objective!r}): "
                + "a packed example is one segment",
            ),
            (self.seed >= 0, f"seed={self.seed} must be >= 0"),
            (self.num_shards >= 1, f"num_shards={self.num_shards} must be >= 1"),
            (self.num_workers >= 1, f"num_workers={self.num_workers} must be >= 1"),
            (self.num_tasks >= 1, f"num_tasks={self.num_tasks} must be >= 1"),
            (
                0 <= self.task_index < self.num_tasks,
                f"task_index={self.task_index} must be in [0, {self.num_tasks})",
            ),
            (self.group_chars >= 1, f"group_chars={self.group_chars} must be >= 1"),
            (
                # `not < 0` would let a nan through (issue 43)
                math.isfinite(self.checkpoint_seconds) and self.checkpoint_seconds >= 0,
                f"checkpoint_seconds={self.checkpoint_seconds} must be a finite number >= 0",
            ),
            (
                self.input_format in INPUT_FORMATS,
                f"input_format={self.input_format!r}; expected one of {INPUT_FORMATS}",
            ),
            (
                self.paragraphs_per_document >= 1,
                f"paragraphs_per_document={self.paragraphs_per_document} must be >= 1",
            ),
        ]
