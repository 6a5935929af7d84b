"""`albert-keras convert`: import a checkpoint as an AlbertPretrainer, and/or export it.

    albert-keras convert --source tf1 albert_base_v2.tar.gz --output albert_base.keras
    albert-keras convert --source hf albert-base-v2/ --output albert_base.keras
    albert-keras convert --source keras-hub albert_base_en_uncased/ --output albert_base.keras
    albert-keras convert --source keras run/model.keras --to hf albert_hf/ --to keras-hub kh/

Errors (unknown or missing variables, wrong shapes, corrupt files, unsafe archives) end the
command with a one-line message naming the file and a non-zero exit.
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile

# `albert_keras.convert.convert_checkpoint`'s SOURCES and TARGETS (tests/cli checks they agree):
# importing it here would load TensorFlow for `--help`.
SOURCES = ("tf1", "hf", "keras-hub", "keras")
TARGETS = ("hf", "keras-hub", "tf1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the `convert` flags to `parser`."""
    parser.description = "Import a checkpoint as an AlbertPretrainer (.keras) and/or export it."
    parser.add_argument("--source", required=True, choices=SOURCES, help="the input's format")
    parser.add_argument(
        "path", help="folder, checkpoint prefix, file, or .tar.gz of a folder to convert"
    )
    parser.add_argument("--config_file", help="albert_config.json / config.json if not beside PATH")
    parser.add_argument("--output", help="write an AlbertPretrainer here (a .keras file)")
    parser.add_argument(
        "--to",
        nargs=2,
        action="append",
        default=[],
        metavar=("FORMAT", "DIR"),
        help=f"also export: FORMAT one of {', '.join(TARGETS)} (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    """Runs the conversion; returns the exit code (errors raise ValueError / FileNotFoundError)."""
    if not args.output and not args.to:
        raise ValueError("nothing to write: give --output OUT.keras and/or --to FORMAT DIR")
    for target, _ in args.to:
        if target not in TARGETS:
            raise ValueError(f"--to {target}: the format must be one of {', '.join(TARGETS)}")
    if args.output and not args.output.endswith(".keras"):
        raise ValueError(f"--output {args.output}: the file name must end in .keras")

    from albert_keras.convert.convert_checkpoint import (
        export_model,
        import_checkpoint,
        save_imported,
    )

    imported = import_checkpoint(args.source, args.path, args.config_file)
    inside = f" ({imported.path.name} inside)" if imported.path.name not in args.path else ""
    print(f"read {args.source} checkpoint {args.path}{inside}")
    for line in imported.mapped:
        print(f"  mapped {line}")
    if imported.skipped:
        print(
            f"  skipped {len(imported.skipped)} optimizer/step variables (e.g. {imported.skipped[0]})"
        )
    for part in imported.fresh_parts:
        print(f"  {part}: absent in the source, left at fresh initialization")
    for note in imported.notes:
        print(f"  note: {note}")

    if args.output:
        for path in save_imported(imported, args.output):
            print(f"wrote {path}")
    with tempfile.TemporaryDirectory(prefix="albert-convert-") as scratch:
        spm = None
        if imported.sentencepiece is not None:
            spm = pathlib.Path(scratch) / imported.sentencepiece_name
            spm.write_bytes(imported.sentencepiece)
        for target, directory in args.to:
            for note in export_model(imported.pretrainer, target, directory, sentencepiece=spm):
                print(f"  note: {note}")
            print(f"wrote {target} to {directory}")
    return 0
