"""The study's data, made once and shared by every cell.

- `records/train-<objective>/`: pretraining records for each sentence objective the cells use,
  all from the same corpus files with the same seed (so "none", "nsp" and "sop" see the same
  text, cut and masked the same way where the objective allows).
- `records/heldout-<kind>/`: held-out records of all three kinds (none, nsp, sop) from the
  held-out text, so every cell gets the three intrinsic columns of the paper's Table 5.
- `glue/`: the GLUE directory the fine-tuning reads, with the dev splits capped when the budget
  says so (a seeded sample, the same for every cell); train files are linked, not copied.

Each folder is written by `pipelines.pretraining_data`, which resumes a half-written one and
leaves `stats.json` last: a folder with `stats.json` is done and is not made again.
"""

from __future__ import annotations

import glob
import os
import random

from albert_keras_contracts import atomic_write

HELDOUT_KINDS = ("none", "nsp", "sop")


def list_files(patterns, what: str) -> list[str]:
    """The sorted files matching `patterns`: a glob, globs between commas (as the data writer's
    `--input`), or a list of globs."""
    if isinstance(patterns, str):
        patterns = [pattern for pattern in patterns.split(",") if pattern]
    if not patterns:
        raise ValueError(f"{what}: not given (a glob of text files)")
    files = set()
    for pattern in patterns:
        matched = [path for path in glob.glob(os.path.expanduser(pattern)) if os.path.isfile(path)]
        if not matched:
            raise FileNotFoundError(f"{what} {pattern!r}: no file matches")
        files.update(os.path.abspath(path) for path in matched)
    return sorted(files)


def corpus_files(settings: dict) -> tuple[list[str], list[str]]:
    """(training files, held-out files): the held-out files are taken out of the corpus."""
    heldout = list_files(settings["heldout"], "heldout")
    train = [path for path in list_files(settings["corpus"], "corpus") if path not in heldout]
    if not train:
        raise ValueError("corpus: every file is also held out; nothing left to pretrain on")
    return train, heldout


def make_records(settings: dict, objectives, data_dir: str, log=print) -> dict:
    """Writes (or finds) the training records of each objective and the held-out records of
    every kind; returns `{"train": {objective: glob}, "heldout": {kind: glob}, "stats": ...}`."""
    from pipelines.pretraining_data import write_pretraining_data

    train_files, heldout_files = corpus_files(settings)
    if not settings.get("spm_model"):  # None: the study makes its own, once
        settings["spm_model"] = make_vocabulary(settings, train_files, data_dir, log)
    if not os.path.isfile(settings["spm_model"]):
        raise FileNotFoundError(f"spm_model {settings.get('spm_model')!r}: no such file")
    common = {
        "max_seq_length": settings["max_seq_length"],
        "max_predictions_per_seq": settings["max_predictions_per_seq"],
        "seed": settings["data_seed"],
        "progress": False,
    }
    jobs = [
        (f"train-{objective}", train_files, objective, settings["dupe_factor"], 2)
        for objective in sorted(set(objectives))
    ] + [(f"heldout-{kind}", heldout_files, kind, 1, 1) for kind in HELDOUT_KINDS]
    result = {"train": {}, "heldout": {}, "stats": {}}
    for name, files, objective, dupe_factor, shards in jobs:
        folder = os.path.join(data_dir, "records", name)
        stats_path = os.path.join(folder, "stats.json")
        if not os.path.exists(stats_path):
            log(f"data: writing {name} records from {len(files)} file(s)")
            write_pretraining_data(
                input=files,
                spm_model=settings["spm_model"],
                output_dir=folder,
                dupe_factor=dupe_factor,
                sentence_objective=objective,
                num_shards=shards,
                num_workers=1,
                **common,
            )
        import json

        with open(stats_path) as f:
            stats = json.load(f)
        kind = "train" if name.startswith("train") else "heldout"
        result[kind][objective] = os.path.join(folder, "*.tfrecord")
        result["stats"][name] = {"examples": stats.get("examples")}
    result["files"] = {"train": train_files, "heldout": heldout_files}
    return result


def make_vocabulary(settings: dict, train_files: list[str], data_dir: str, log=print) -> str:
    """Trains the study's SentencePiece model on its training files (not the held-out ones),
    as `python -m pipelines.train_vocab --input FILES --vocab_size N [--lower_case]` does, into
    `data/vocab/spm.model`, unless it is there; returns its path."""
    from pipelines.train_vocab import train_vocab

    prefix = os.path.join(data_dir, "vocab", "spm")
    if not os.path.isfile(prefix + ".model"):  # written last by train_vocab: there means done
        log(
            f"data: training a {settings['vocab_size']}-piece vocabulary on "
            f"{len(train_files)} file(s)"
        )
        train_vocab(train_files, prefix, vocab_size=settings["vocab_size"],
                    lower_case=settings["vocab_lower_case"])  # fmt: skip
    return prefix + ".model"


def capped_glue_dir(settings: dict, data_dir: str) -> str:
    """GLUE_DIR itself, or (with `finetune_max_dev_examples`) a copy whose dev splits hold a
    seeded sample of at most that many rows, in their original order; train files linked."""
    from albert_keras.glue.glue_tasks import get_glue_task
    from albert_keras.glue.tsv_reader import glue_tsv_path

    glue_dir = settings["glue_dir"]
    if not glue_dir or not os.path.isdir(glue_dir):
        raise FileNotFoundError(f"glue_dir {glue_dir!r}: no such directory")
    cap = settings["finetune_max_dev_examples"]
    if not cap:
        return glue_dir
    out_dir = os.path.join(data_dir, f"glue-dev{cap}")
    for name in settings["tasks"]:
        task = get_glue_task(name)
        for split in ("train", *task.dev_splits):
            source = glue_tsv_path(glue_dir, task, split)
            if not source.is_file():
                raise FileNotFoundError(f"{source}: no such file (glue_dir {glue_dir})")
            target = glue_tsv_path(out_dir, task, split)
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if split == "train":
                os.symlink(os.path.abspath(source), target)
                continue
            lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
            header = 1 if task.splits[split].has_header else 0  # CoLA's have none
            rows = lines[header:]
            keep = sorted(random.Random(settings["data_seed"]).sample(range(len(rows)), cap)
                          ) if len(rows) > cap else range(len(rows))  # fmt: skip
            atomic_write.write_text(target, "".join(lines[:header] + [rows[i] for i in keep]))
    return out_dir
