"""`albert-keras convert`: import a checkpoint as an AlbertPretrainer, and/or export it.

    albert-keras convert --from tf1 albert_base_v2.tar.gz --output albert_base.keras
    albert-keras convert --from hf albert-base-v2/ --output albert_base.keras
    albert-keras convert --from keras-hub albert_base_en_uncased/ --output albert_base.keras
    albert-keras convert --from keras run/model.keras --to hf albert_hf/ --to keras-hub kh/

Errors (unknown or missing variables, wrong shapes, corrupt files, unsafe archives) end the
command with a one-line message naming the file and a non-zero exit.

Nothing a user owns is replaced: `--output x.keras` writes `x.keras` and its vocabulary
`x.spiece.model` and refuses either if it exists; each `--to FORMAT DIR` folder is convert's own
(`albert_keras_contracts.output_folder`: a user's files or another command's output refused). `--overwrite`
replaces an existing `--output` and an earlier conversion into a `--to` folder, only that.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import tempfile

from albert_keras_contracts.catalogue import CONVERSION_SOURCES, CONVERSION_TARGETS

# The catalogue's formats (albert_keras.convert.convert_checkpoint takes the same).
SOURCES = tuple(CONVERSION_SOURCES)
TARGETS = tuple(CONVERSION_TARGETS)
# What `export_model` writes into a `--to` folder, per format.
EXPORTED_NAMES = {
    "hf": ("config.json", "model.safetensors", "spiece.model"),
    "keras-hub": ("config.json", "metadata.json", "model.weights.h5", "tokenizer.json", "assets"),
    "tf1": ("albert_config.json", "checkpoint", "model.ckpt.index",
            "model.ckpt.data-00000-of-00001", "30k-clean.model"),
}  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the `convert` flags to `parser`."""
    parser.description = "Import a checkpoint as an AlbertPretrainer (.keras) and/or export it."
    # --from pairs with --to; --source (its old name) still works, hidden: in the other
    # commands --source names where data comes from, not a checkpoint format.
    formats = parser.add_mutually_exclusive_group(required=True)
    formats.add_argument(
        "--from", dest="source", choices=SOURCES, help="the input's format (required)"
    )
    formats.add_argument("--source", dest="source", choices=SOURCES, help=argparse.SUPPRESS)
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
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --output (and its .spiece.model) and an earlier conversion "
        "in a --to folder",
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

    from albert_keras.convert.convert_checkpoint import check_outputs, vocabulary_path
    from albert_keras_contracts.output_folder import check_apart

    # Never over what it reads: no output is PATH (or its config), nor lies in or holds it.
    inputs = {"PATH": args.path, "--config_file": args.config_file}
    if args.output:
        check_apart("--output", [args.output, vocabulary_path(args.output)], inputs)
        check_outputs(args.output, overwrite=args.overwrite)
    for target, directory in args.to:
        check_apart(f"--to {target}", directory, inputs)
    with contextlib.ExitStack() as stack:
        folders = [stack.enter_context(_target(args, t, d)) for t, d in args.to]
        _convert(args, folders)
    return 0


@contextlib.contextmanager
def _target(args: argparse.Namespace, target: str, directory: str):
    """A `--to` target: its folder opened as convert's own (a `.keras` file: checked as new);
    a conversion that fails before writing into it leaves no folder it made."""
    from albert_keras_contracts.output_folder import OutputFolder, check_new_file

    if target == "keras-hub" and directory.endswith(".keras"):
        check_new_file(directory, overwrite=args.overwrite)
        yield None
        return
    arguments = {
        "source": args.source,
        "path": os.path.abspath(args.path),
        "config_file": args.config_file and os.path.abspath(args.config_file),
        "format": target,
    }
    folder = OutputFolder(directory, "albert-keras convert", arguments, overwrite=args.overwrite)
    with folder:  # opened here: checks, lock, manifest
        try:
            yield folder
        except BaseException:
            folder.close()
            folder.discard_if_unused()
            raise


def _convert(args: argparse.Namespace, folders: list) -> None:
    """Imports `args.path`, writes `--output` and each `--to` target (their folders opened)."""
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
        model, *vocabulary = save_imported(imported, args.output, overwrite=args.overwrite)
        print(f"wrote {model}")
        for path in vocabulary:
            print(f"wrote {path}: the vocabulary of {model.name} ({imported.sentencepiece_name})")
    with tempfile.TemporaryDirectory(prefix="albert-convert-") as scratch:
        spm = None
        if imported.sentencepiece is not None:
            spm = pathlib.Path(scratch) / imported.sentencepiece_name
            spm.write_bytes(imported.sentencepiece)
        for (target, directory), folder in zip(args.to, folders):
            # Recorded as this conversion's before they are written: a failed write leaves a
            # folder a rerun may still write into (and --overwrite clear).
            for name in EXPORTED_NAMES[target] if folder is not None else ():
                folder.claim(name)
            for note in export_model(imported.pretrainer, target, directory, sentencepiece=spm):
                print(f"  note: {note}")
            print(f"wrote {target} to {directory}")
