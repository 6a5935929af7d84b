"""Where `finetune-glue`'s examples come from: GLUE's files, `tensorflow_datasets`, or the user's.

`trainable_task` and `glue_reader` give a GLUE task and `read(task, split)` of its files (or of
tfds); `user_files_task` the task of the user's own files (`--train_file`, `--validation_file`,
`--test_file`) and their `read`; `predicted_splits` the test files a model predicts (MNLI's AX
too).
"""

from __future__ import annotations

import pathlib

from albert_keras.glue.glue_task import GlueTask
from albert_keras.glue.glue_tasks import get_glue_task
from albert_keras.glue.tfds_reader import read_glue_tfds
from albert_keras.glue.tsv_reader import read_glue_tsv
from albert_keras.glue.user_files import read_user_file, user_task
from albert_keras_settings import FinetuneGlueSettings


def trainable_task(name: str | GlueTask) -> GlueTask:
    """The GLUE task `name`, refused when it is prediction-only (AX: MNLI predicts it)."""
    task = get_glue_task(name)
    if not task.trainable:
        raise ValueError(
            f"{task.name} is prediction-only: fine-tune MNLI, which also writes "
            "submission/AX.tsv when GLUE_DIR/diagnostic/diagnostic.tsv exists"
        )
    return task


def glue_reader(source: str, glue_dir):
    """`read(task, split)` from GLUE's files (`"tsv"`) or `tensorflow_datasets` (`"tfds"`);
    `FinetuneGlueSettings` has checked `source`, and that `"tsv"` has a `glue_dir`."""
    if source == "tfds":
        return lambda task, split: read_glue_tfds(task, split, data_dir=glue_dir)
    if not pathlib.Path(glue_dir).is_dir():
        raise FileNotFoundError(f"{glue_dir}: --glue_dir not found")
    return lambda task, split: read_glue_tsv(glue_dir, task, split)


def user_files_task(s: FinetuneGlueSettings):
    """`(task, read)` for `--train_file`: the task of the user's files (its labels discovered in
    the training file, read here once) and `read(task, split)` of its files; one without a
    file (no `--test_file`) is a FileNotFoundError, as a GLUE folder without test files."""
    columns = {"text_column": s.text_column, "text_pair_column": s.text_pair_column,
               "task_type": s.task_type}  # fmt: skip
    train = read_user_file(s.train_file, label_column=s.label_column, split="train", **columns)
    files = {"train": s.train_file, "dev": s.validation_file}
    if s.test_file is not None:
        files["test"] = s.test_file
    task = user_task(
        train.label_names, files=files, text_column=s.text_column,
        text_pair_column=s.text_pair_column, label_column=s.label_column,
        train_examples=len(train),
    )  # fmt: skip

    def read(task, split):
        if split == "train":
            return train
        if split not in files:
            raise FileNotFoundError(f"no --{split}_file given")
        label_column = None if split == "test" else s.label_column
        return read_user_file(files[split], label_column=label_column, label_names=task.labels,
                              split=split, **columns)  # fmt: skip

    return task, read


def predicted_splits(task: GlueTask):
    """(split, submission stem, task) for each test file to predict, AX included for MNLI."""
    for split, stem in task.test_splits.items():
        yield split, stem, task
    if task.diagnostic:
        diagnostic = get_glue_task(task.diagnostic)
        for split, stem in diagnostic.test_splits.items():
            yield split, stem, diagnostic


def task_labels(task: GlueTask) -> list[str] | None:
    """The task's label names as a list (as the run's records hold them); None for a
    regression task (no labels)."""
    return None if task.labels is None else list(task.labels)
