"""`albert-keras export MODEL.keras OUT/`: a classifier as a SavedModel over raw strings.

    albert-keras export sst2/model.keras served/sst2/   # finetune-glue's model: no flag needed
    albert-keras export model.keras served/ --spm_model 30k-clean.model --sequence_length 128

The SavedModel's signatures (`serving_default(text)`, `pairs(text_a, text_b)`,
`tokenize(text)`) are described in `export_saved_model`. OUT/ is export's own folder: a
folder holding other files, or another command's output, is refused; `--overwrite` replaces
only an earlier export's SavedModel.
"""

from __future__ import annotations

import argparse
import os


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the `export` flags to `parser`."""
    parser.description = "Export a classifier (.keras) as a TF SavedModel taking raw strings."
    parser.add_argument("model", help="an AlbertClassifier .keras file")
    parser.add_argument("output_dir", help="the SavedModel folder to write")
    parser.add_argument(
        "--spm_model", help="SentencePiece model, if the classifier was saved without one"
    )
    parser.add_argument(
        "--sequence_length", type=int, default=None, help="with --spm_model; none: 512"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier export in OUT/ made from another model or settings",
    )


def run(args: argparse.Namespace) -> int:
    """Loads, exports, and prints the signatures; errors raise ValueError / FileNotFoundError."""
    from albert_keras.convert import load_any_model
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    from albert_keras.serving import export_saved_model

    if args.spm_model and os.path.isdir(args.spm_model):
        raise ValueError(
            f"--spm_model {args.spm_model} is a folder: give the SentencePiece .model file in it"
        )
    if args.spm_model and not os.path.isfile(args.spm_model):
        raise FileNotFoundError(f"--spm_model {args.spm_model}: no such file")
    model = load_any_model(args.model)
    preprocessor = None
    if args.spm_model:
        length = args.sequence_length or getattr(model, "backbone", model).max_sequence_length
        preprocessor = AlbertPreprocessor(AlbertTokenizer(args.spm_model), length)
    elif args.sequence_length is not None:
        raise ValueError("--sequence_length needs --spm_model (the saved preprocessor has one)")
    arguments = {
        "model": os.path.abspath(args.model),
        "spm_model": args.spm_model and os.path.abspath(args.spm_model),
        "sequence_length": args.sequence_length,
    }
    signatures = export_saved_model(
        model, args.output_dir, preprocessor, overwrite=args.overwrite, arguments=arguments
    )
    print(f"wrote {args.output_dir}")
    for name, outputs in signatures.items():
        print(f"  signature {name}: {', '.join(outputs)}")
    print(
        "  to load it: `import tensorflow_text` (its ops are in the graph), then tf.saved_model.load"
    )
    return 0
