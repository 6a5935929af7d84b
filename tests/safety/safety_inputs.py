"""The tiny inputs every command of the data-safety suite reads, made once per session.

A corpus of two short files, a SentencePiece model of ~29 pieces (tests/release_tarball.py),
synthetic pretraining records (tests/synthetic_records.py, 32 tokens, ids < 100), a pretrainer,
a backbone and a classifier of one layer, H 16, over 100 ids (the spm model beside each, as
`spm.model`), a 3-file SST-2, a 2-question SQuAD 2.0 and a one-run study spec. No
../shared/data: the suite runs on a fresh checkout.
"""

from __future__ import annotations

import json
import pathlib
import shutil

from release_tarball import train_tiny_sentencepiece
from synthetic_records import SEQ_LENGTH, VOCABULARY_SIZE, write_synthetic_records

SENTENCES = [
    "the cat sat on the mat",
    "a dog ran in the park",
    "it was a fine day",
    "the old bird looked at the sky",
    "my friend walked to the river",
    "we found a tall tree",
]
TINY_BACKBONE = {
    "vocabulary_size": VOCABULARY_SIZE,
    "num_layers": 1,
    "num_heads": 2,
    "embedding_dim": 8,
    "hidden_dim": 16,
    "intermediate_dim": 32,
    "max_sequence_length": SEQ_LENGTH,
}


def _book(offset: int, paragraphs: int) -> str:
    lines = [
        " ".join(SENTENCES[(offset + p + s) % len(SENTENCES)].capitalize() + "." for s in range(4))
        for p in range(paragraphs)
    ]
    return "\n\n".join(lines) + "\n"


def _corpus(root: pathlib.Path) -> dict:
    root.mkdir()
    for i in range(2):
        (root / f"book-{i}.txt").write_text(_book(i, 12))
    # Over 20 batches of 4 examples: the demo's held-out check reads 20 full batches (with
    # fewer, its reload check compares the job's capped evaluation with 20 repeated batches).
    (root / "held").mkdir()
    (root / "held" / "held.txt").write_text(_book(3, 96))
    return {"corpus": str(root / "book-*.txt"), "heldout": str(root / "held" / "held.txt")}


def _glue(root: pathlib.Path) -> str:
    folder = root / "glue" / "SST-2"
    folder.mkdir(parents=True)
    rows = [f"{s} .\t{i % 2}" for i, s in enumerate(SENTENCES)]
    for split in ("train", "dev"):
        (folder / f"{split}.tsv").write_text("sentence\tlabel\n" + "\n".join(rows) + "\n")
    test = [f"{i}\t{s} ." for i, s in enumerate(SENTENCES[:3])]
    (folder / "test.tsv").write_text("index\tsentence\n" + "\n".join(test) + "\n")
    return str(root / "glue")


def _squad(root: pathlib.Path) -> dict:
    context = "the cat sat on the mat . a dog ran in the park ."
    questions = [("where did the cat sit ?", "the mat"), ("who ran in the park ?", "a dog")]
    qas = [
        {
            "id": f"q{i}",
            "question": question,
            "answers": [{"text": answer, "answer_start": context.index(answer)}],
            "is_impossible": False,
        }
        for i, (question, answer) in enumerate(questions)
    ]
    data = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": context,
            "qas": qas}]}]}  # fmt: skip
    paths = {}
    for name in ("train", "dev"):
        paths[f"squad_{name}"] = str(root / f"squad-{name}.json")
        pathlib.Path(paths[f"squad_{name}"]).write_text(json.dumps(data))
    return paths


def _models(root: pathlib.Path, spm: pathlib.Path) -> dict:
    import keras

    import albert_keras as ak
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

    keras.utils.set_random_seed(1)
    paths = {}
    for name in ("pretrainer", "backbone", "classifier"):
        folder = root / name
        folder.mkdir()
        shutil.copyfile(spm, folder / "spm.model")
        backbone = ak.AlbertBackbone(**TINY_BACKBONE)
        if name == "pretrainer":
            model = ak.AlbertPretrainer(backbone)
        elif name == "classifier":
            preprocessor = AlbertPreprocessor(AlbertTokenizer(str(spm)), sequence_length=16)
            model = ak.AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor)
        else:
            model = backbone
        paths[name] = str(folder / "model.keras")
        model.save(paths[name])
    return paths


def _study_spec(root: pathlib.Path, inputs: dict) -> str:
    spec = {
        "name": "tiny",
        "backbone": {k: v for k, v in TINY_BACKBONE.items() if k != "vocabulary_size"},
        "steps": 1,
        "batch_size": 4,
        "max_seq_length": SEQ_LENGTH,
        "max_predictions_per_seq": 5,
        "checkpoint_every": 1,
        "seeds": [1],
        "corpus": inputs["corpus"],
        "heldout": inputs["heldout"],
        "spm_model": inputs["spm"],
        "dupe_factor": 1,
        "heldout_max_examples": 8,
        "tasks": [],
        "cells": [{"name": "SOP", "sentence_objective": "sop"}],
    }
    path = root / "study.json"
    path.write_text(json.dumps(spec))
    return str(path)


def make_inputs(root: pathlib.Path) -> dict:
    """Writes every input under `root`; returns their paths by name (str)."""
    inputs = _corpus(root / "corpus")
    spm = train_tiny_sentencepiece(root / "spm")
    inputs["spm"] = str(spm)
    (root / "records").mkdir()
    write_synthetic_records(root / "records" / "train-0.tfrecord", 32, seed=0)
    inputs["records"] = str(root / "records" / "train-*.tfrecord")
    inputs["glue_dir"] = _glue(root)
    inputs["lines"] = str(root / "lines.txt")  # for `predict --input`
    pathlib.Path(inputs["lines"]).write_text("\n".join(SENTENCES) + "\n")
    inputs.update(_squad(root))
    inputs.update(_models(root, spm))
    inputs["study_spec"] = _study_spec(root, inputs)
    return inputs
