"""Writes ALBERT pretraining records (SOP pairs, n-gram masks) from raw text into TFRecord shards.

    python -m pipelines.pretraining_data --input 'corpus/*.txt' --spm_model out/spm.model \\
        --output_dir out/records --max_seq_length 128 --dupe_factor 10 --num_shards 8

How it runs (the official script keeps every instance in RAM; this streams):
- The main process reads documents (`pipelines.documents`) and cuts the stream into groups of
  whole documents of about `group_chars` characters. Group g belongs to shard g % num_shards.
- Shards are split between `num_tasks` machines (shard s to task s % num_tasks) and, on each,
  between `num_workers` processes. A worker encodes each group it is sent once, makes every dupe
  round's pairs and masks from it (`pipelines.pretraining_examples`) and appends them to the
  group's shard. Small groups (low dupe factors) are held and made together, ~2 MB of text times
  rounds at a time, for NumPy's sake; the bytes are the same. Memory stays bounded: a few groups
  in flight per worker, plus those held. (Each task reads all the input, which costs a fraction
  of encoding it; only its own groups are encoded.)
- Records are shuffled within a batch of a group's rounds (the official script shuffles all it
  holds in RAM); the reader's shard interleave and shuffle buffer mix the rest.
- Every draw is seeded by (seed, group, round), and a shard is its groups in order, so the same
  inputs and seed give byte-identical shards whatever the number of workers or tasks.
- A shard is written under a temporary name in the hidden `.albert_progress/` subfolder,
  checkpointed now and then, and renamed when finished: the output folder holds only finished
  shards and `stats.json`, so `out/records/*` globs shards alone. A rerun keeps finished shards,
  resumes the others from their last checkpoint (same bytes as an uninterrupted run), and
  refuses shards made with other settings or inputs. A failed run removes the partial shards
  it could not resume from.
- `stats.json` beside the shards: input read and skipped per file, examples, labels, masks,
  n-grams, lengths (the last under the reference statistics' names).
- `--runner DirectRunner|DataflowRunner|...`: the same shards, byte for byte, from an Apache
  Beam pipeline built from these functions (`pipelines.beam_writer`, docs/beam.md); the groups'
  numbering lives in `pipelines.document_groups` for both.
- `--sentence_objective none --packing full_sentences|doc_sentences`: RoBERTa's inputs
  (`pipelines.sentence_packing`).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import re
import resource
import sys
import time

from albert_keras_contracts.output_folder import os_error_line
from albert_keras_settings.setting import resolve_settings
from albert_keras_settings.settings_flags import add_settings_flags, settings_from_args
from albert_keras_settings.writer_settings import WriterSettings
from pipelines.documents import list_input_files
from pipelines.shard_worker import DISK_ERRNOS, keep_freed_memory
from pipelines.tokenization import SentencePieceEncoder
from pipelines.writer_folder import writer_folder
from pipelines.writer_settings import recorded_settings, write_in_folder
from pipelines.writer_task import write_task, write_task_stats, writer_fingerprint

# A finished shard's name (`pipelines.writer_folder.shard_name`).
SHARD_NAME = re.compile(r"pretraining-\d{5}-of-\d{5}\.tfrecord")


def write_pretraining_data(
    settings: WriterSettings | None = None, /, *, progress: bool = True, **overrides
) -> dict:
    """Writes this task's shards of pretraining records and returns its statistics.

    Args:
        settings: `WriterSettings` (every setting, its default and what it does, written once
            there; this module's flags are generated from it).
        progress: bool. Print progress lines to stderr.
        **overrides: settings as keyword arguments, alone or over `settings`
            (`write_pretraining_data(input=..., spm_model=..., output_dir=..., num_shards=8)`).

    Returns:
        The statistics also written to `stats.json` (or `stats-task-*.json` with several tasks).

    Raises:
        ValueError / FileNotFoundError: a bad setting, a missing or bad model, no input, an
            output folder that is not this run's to write (`OutputFolderError`, one line).

    Example:
    >>> stats = write_pretraining_data(input="corpus/*.txt", spm_model="spm.model",
    ...                                output_dir="out/records", max_seq_length=128,
    ...                                dupe_factor=10, num_shards=8, progress=False)
    >>> stats["examples"], len(os.listdir("out/records"))  # 8 shards, stats, progress, manifest
    (193, 11)
    """
    s = resolve_settings(WriterSettings, settings, overrides)
    started, cpu_started = time.monotonic(), _cpu_seconds()
    encoder = SentencePieceEncoder(s.spm_model, s.lower_case)
    files = list_input_files(s.input)
    recorded = recorded_settings(s, encoder)
    # Checked, locked and claimed before anything is written; a run that fails having written
    # nothing it could resume from leaves nothing behind, manifest included.
    folder = writer_folder(
        s.output_dir,
        recorded,
        files,
        s.spm_model,
        num_tasks=s.num_tasks,
        task_index=s.task_index,
        overwrite=s.overwrite,
        fingerprint=writer_fingerprint(recorded, files, s.spm_model),
    )

    def write() -> dict:
        summary = write_task(s, files, recorded, encoder, progress=progress)
        summary["seconds"] = round(time.monotonic() - started, 3)
        # CPU time of this process and its workers: on a shared machine, steadier than the clock.
        summary["cpu_seconds"] = round(_cpu_seconds() - cpu_started, 3)
        write_task_stats(s, summary, recorded, files)
        return summary

    return write_in_folder(folder, write, s.output_dir, progress)


def _cpu_seconds() -> float:
    """CPU seconds used by this process and its finished children."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# === Command line ===


def build_parser() -> argparse.ArgumentParser:
    """The writer's flags: one per `WriterSettings` field, then those the command gives its own
    way (`--num_workers`' default, `--[no-]lower_case`), `--quiet` and `--runner`."""
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.pretraining_data", description=__doc__.splitlines()[0]
    )
    add_settings_flags(parser, WriterSettings, skip=("num_workers",))
    parser.add_argument(
        "--num_workers",
        type=int,
        default=None,
        help="Processes on this machine (default: one per core; at most one per shard). "
        "With --runner, passed to Beam (Dataflow's initial workers).",
    )
    parser.add_argument(
        "--lower_case",
        "--do_lower_case",  # the official script's name, kept as an alias
        dest="do_lower_case",
        action=argparse.BooleanOptionalAction,
        default=_field("lower_case").default,
        help=_field("lower_case").metadata["help"],
    )
    parser.add_argument("--quiet", action="store_true", help="No progress lines.")
    parser.add_argument(
        "--runner",
        default=None,
        help="Run as an Apache Beam pipeline on this runner (DirectRunner, PrismRunner, "
        "DataflowRunner, FlinkRunner, SparkRunner; needs `pip install albert-keras[beam]`): the "
        "same shards, byte for byte. Any other Beam option (--project, --region, "
        "--temp_location, --direct_num_workers, ...) is passed through to Beam.",
    )
    return parser


def _field(name: str) -> dataclasses.Field:
    return next(f for f in dataclasses.fields(WriterSettings) if f.name == name)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, beam_args = parser.parse_known_args(argv)
    if args.runner is None and beam_args:
        parser.error(f"unrecognized arguments: {' '.join(beam_args)} (Beam options need --runner)")

    def settings() -> WriterSettings:  # made in `_reported`: a bad value is one line
        return settings_from_args(
            WriterSettings,
            args,
            lower_case=args.do_lower_case,
            num_workers=args.num_workers or os.cpu_count() or 1,
        )

    if args.runner is not None:
        return _main_beam(args, beam_args, settings)
    keep_freed_memory()  # this process is the one worker when there is one
    return _reported(
        lambda: write_pretraining_data(settings(), progress=not args.quiet), args.output_dir
    )


def _reported(write, output_dir: str, beam: bool = False) -> int:
    """Runs `write()`; a bad input, an output folder not ours to write (in use, another
    command's, a user's), a full disk or no permission exit 2; a failed worker 1; Ctrl-C one
    line saying what was kept, 130 (as the `albert-keras` commands)."""
    try:
        write()
    except KeyboardInterrupt:
        print(f"\npretraining_data: interrupted; {_kept(output_dir, beam)}", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as error:
        print(f"pretraining_data: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"pretraining_data: error: {os_error_line(error, output_dir)}", file=sys.stderr)
        return 2 if error.errno in DISK_ERRNOS else 1
    except RuntimeError as error:
        print(f"pretraining_data: error: {error}", file=sys.stderr)
        return 1
    return 0


def _kept(output_dir: str, beam: bool) -> str:
    """What an interrupted run left in `output_dir`, and what a rerun does. Shards are renamed
    into place only when whole, so the finished ones are whole; the local writer resumes the
    others from their last checkpoint, Beam rewrites them all.

    Example:
    >>> _kept("nowhere", beam=False)
    'nothing was written to nowhere: rerun the same command to start again'
    """
    try:
        names = os.listdir(output_dir)
    except OSError:
        names = []
    shards = sum(1 for name in names if SHARD_NAME.fullmatch(name))
    if not names:
        return f"nothing was written to {output_dir}: rerun the same command to start again"
    if beam:
        return (
            f"{shards} finished shard(s) kept in {output_dir}: rerun the same command to write "
            "them all again (Beam rewrites every shard)"
        )
    return (
        f"{shards} finished shard(s) and the last checkpoint of each unfinished one kept in "
        f"{output_dir}: rerun the same command to resume"
    )


def _main_beam(args: argparse.Namespace, beam_args: list[str], settings) -> int:
    """`--runner`: the same shards written by an Apache Beam pipeline (`pipelines.beam_writer`)."""
    # Beam's import logs "apitools not found ..." on the root logger: a handler that drops it
    # keeps logging's own default handler from printing that line before ours.
    quiet = logging.NullHandler()
    logging.getLogger().addHandler(quiet)
    try:
        from pipelines.beam_writer import write_pretraining_data_beam
    except ImportError as error:
        print(
            f"pretraining_data: error: --runner needs apache-beam ({error}); "
            "install it with `pip install albert-keras[beam]`",
            file=sys.stderr,
        )
        return 2
    finally:
        logging.getLogger().removeHandler(quiet)
    if args.num_workers is not None:
        beam_args = [*beam_args, f"--num_workers={args.num_workers}"]
    return _reported(
        lambda: write_pretraining_data_beam(
            settings(),
            runner=args.runner,
            beam_args=beam_args,
            progress=not args.quiet,
            keep_freed_memory=True,  # in the workers that make records, as locally
        ),
        args.output_dir,
        beam=True,
    )


if __name__ == "__main__":
    sys.exit(main())
