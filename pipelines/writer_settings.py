"""What the data writer's two drivers share: the settings that decide the shards' bytes, their
checks, and `stats.json`'s summary (`pipelines.pretraining_data`, `pipelines.beam_writer`).

Kept apart from both so that neither imports the other for them: the local writer's command
line starts the Beam driver, and the Beam driver uses these.
"""

from __future__ import annotations

import os

from pipelines.documents import INPUT_FORMATS
from pipelines.pretraining_examples import ExampleConfig
from pipelines.pretraining_stats import PretrainingStats
from pipelines.sentence_packing import PACKINGS
from pipelines.sop_pairs import SENTENCE_OBJECTIVES
from pipelines.tokenization import SentencePieceEncoder


def writer_settings(
    config: ExampleConfig,
    encoder: SentencePieceEncoder,
    num_shards: int,
    input_format: str,
    paragraphs_per_document: int,
    group_chars: int,
) -> dict:
    """Every setting that decides the shards' bytes (recorded in `stats.json`)."""
    return {
        **vars(config),
        "num_shards": num_shards,
        "input_format": input_format,
        "paragraphs_per_document": paragraphs_per_document,
        "lower_case": encoder.lower_case,
        "group_chars": group_chars,
        "vocabulary_size": encoder.vocabulary_size,
        "vocabulary_sha256": encoder.model_sha256,
    }


def check_input_format(input_format: str, paragraphs_per_document: int) -> None:
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format={input_format!r}; expected one of {INPUT_FORMATS}")
    if paragraphs_per_document < 1:
        raise ValueError(f"paragraphs_per_document={paragraphs_per_document} must be >= 1")


def check_settings(config, num_shards, num_workers=1, task_index=0, num_tasks=1, group_chars=1):
    """Raises ValueError naming the first bad setting."""
    checks = [
        (config.max_seq_length >= 5, f"max_seq_length={config.max_seq_length} must be >= 5"),
        (
            config.max_predictions_per_seq >= 1,
            f"max_predictions_per_seq={config.max_predictions_per_seq} must be >= 1",
        ),
        (
            0 < config.masked_lm_prob < 1,
            f"masked_lm_prob={config.masked_lm_prob} must be in (0, 1)",
        ),
        (config.dupe_factor >= 1, f"dupe_factor={config.dupe_factor} must be >= 1"),
        (
            0 <= config.short_seq_prob <= 1,
            f"short_seq_prob={config.short_seq_prob} must be in [0, 1]",
        ),
        (config.ngram >= 1, f"ngram={config.ngram} must be >= 1"),
        (
            config.sentence_objective in SENTENCE_OBJECTIVES,
            f"sentence_objective={config.sentence_objective!r}; expected one of {SENTENCE_OBJECTIVES}",
        ),
        (
            config.packing is None or config.packing in PACKINGS,
            f"packing={config.packing!r}; expected one of {PACKINGS}",
        ),
        (
            config.packing is None or config.sentence_objective == "none",
            f"packing={config.packing!r} needs sentence_objective='none' (got "
            + f"{config.sentence_objective!r}): a packed example is one segment",
        ),
        (config.seed >= 0, f"seed={config.seed} must be >= 0"),
        (num_shards >= 1, f"num_shards={num_shards} must be >= 1"),
        (num_workers >= 1, f"num_workers={num_workers} must be >= 1"),
        (num_tasks >= 1, f"num_tasks={num_tasks} must be >= 1"),
        (0 <= task_index < num_tasks, f"task_index={task_index} must be in [0, {num_tasks})"),
        (group_chars >= 1, f"group_chars={group_chars} must be >= 1"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(message)


def summarize(settings, files, read_stats, made: PretrainingStats, paths) -> dict:
    """`stats.json`'s content (less `seconds`): what was read, what was made."""
    return {
        "settings": settings,
        "vocabulary_size": settings["vocabulary_size"],
        "vocabulary_sha256": settings["vocabulary_sha256"],
        "files": files,
        "shards": [os.path.basename(p) for p in paths],
        "input": read_stats.to_dict(),
        "documents": made.documents,
        "sentences": {
            "read": read_stats.sentences,
            "used": made.sentences - made.empty_sentences,
            "skipped": {"empty_after_tokenization": made.empty_sentences},
        },
        "tokens": made.tokens,
        "examples": made.examples,
        "labels": {"0": made.labels[0], "1": made.labels[1]},
        "single_segment": {
            "split": made.single_segment_splits,
            "skipped_too_short": made.single_segment_too_short,
        },
        "masked_tokens": sum(made.replacements),
        "reference_comparable": made.summary(settings["max_seq_length"]),
        "counts": made.to_dict(),
    }
