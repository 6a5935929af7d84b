"""What the data writer's two drivers share: the settings `stats.json` records (those that decide
the shards' bytes), its summary, and a run's closing lines (`pipelines.pretraining_data`,
`pipelines.beam_writer`). The settings themselves, and their checks, are
`albert_keras_settings.WriterSettings`.

Kept apart from both so that neither imports the other for them: the local writer's command
line starts the Beam driver, and the Beam driver uses these.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from albert_keras_contracts import record_format
from albert_keras_contracts.output_folder import OutputFolder
from albert_keras_contracts.text_path import TEXT_PATH
from albert_keras_settings.writer_settings import WriterSettings
from pipelines.pretraining_examples import ExampleConfig
from pipelines.pretraining_stats import PretrainingStats
from pipelines.tokenization import SentencePieceEncoder


def recorded_settings(settings: WriterSettings, encoder: SentencePieceEncoder) -> dict:
    """Every setting that decides the shards' bytes, as `stats.json` records it: these keys in
    this order (a folder written before resumes only if they stay so), `lower_case` as the
    encoder resolved it."""
    return {
        **vars(ExampleConfig.of(settings)),
        "num_shards": settings.num_shards,
        "input_format": settings.input_format,
        "paragraphs_per_document": settings.paragraphs_per_document,
        "lower_case": encoder.lower_case,
        "group_chars": settings.group_chars,
        "vocabulary_size": encoder.vocabulary_size,
        "vocabulary_sha256": encoder.model_sha256,
        # Which text path made the ids (albert_keras_contracts.text_path): a folder of another
        # one does not resume, and pretrain / distill refuse its records unless told.
        "text_path": TEXT_PATH,
    }


def write_in_folder(
    folder: OutputFolder, write: Callable[[], dict], output_dir: str, progress: bool
) -> dict:
    """Runs `write()` (which returns `stats.json`'s summary) in the opened `folder` and closes
    it; a failed run that wrote nothing it could resume from leaves nothing behind, manifest
    included. Says what was written in one line."""
    try:
        summary = write()
    except BaseException:
        folder.close()
        folder.discard_if_unused()
        raise
    folder.close()
    log(
        progress,
        f"wrote {summary['examples']:,} examples to {len(summary['shards'])} shards in "
        f"{output_dir} ({summary['seconds']:.1f} s)",
    )
    return summary


def log(enabled: bool, message: str) -> None:
    """One progress line on stderr, as the writer's command prints it."""
    if enabled:
        print(f"pretraining_data: {message}", file=sys.stderr, flush=True)


def summarize(settings, files, read_stats, made: PretrainingStats, paths) -> dict:
    """`stats.json`'s content (less `seconds`): what was read, what was made."""
    return {
        # Readers refuse shards of another version (albert_keras_contracts.record_format).
        record_format.VERSION_KEY: record_format.VERSION,
        "settings": settings,
        "vocabulary_size": settings["vocabulary_size"],
        "vocabulary_sha256": settings["vocabulary_sha256"],
        "text_path": settings["text_path"],
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
