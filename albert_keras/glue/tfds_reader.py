"""Reads GLUE from `tensorflow_datasets` (`glue/*`, downloaded on first use: needs network)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from albert_keras.glue.glue_examples import GlueExamples
from albert_keras.glue.glue_task import GlueTask
from albert_keras.glue.glue_tasks import get_glue_task

# Our split names (GLUE's file stems) -> tfds's.
_TFDS_SPLITS = {
    "train": "train",
    "dev": "validation",
    "dev_matched": "validation_matched",
    "dev_mismatched": "validation_mismatched",
    "test": "test",
    "test_matched": "test_matched",
    "test_mismatched": "test_mismatched",
}


def read_glue_tfds(
    task: str | GlueTask, split: str, *, data_dir: str | None = None
) -> GlueExamples:
    """Reads one split of a GLUE task through `tensorflow_datasets` (`glue/sst2`, ...).

    Note tfds's MRPC dev is GLUE's 408-pair split, and tfds's label ids differ from the official
    order for MNLI / AX / WNLI: labels are mapped by name (see `glue_examples_from_tfds`).

    Args:
        task: str or GlueTask. The task, e.g. `"MNLI"`.
        split: str. Our split name: `"train"`, `"dev"`, `"dev_matched"`, `"test_mismatched"`...
        data_dir: str or None. tfds's data folder (`~/tensorflow_datasets` when None).

    Returns:
        GlueExamples.

    Example (not run as a doctest: TensorFlow Datasets downloads GLUE, and tests have no network):
    >>> dev = read_glue_tfds("RTE", "dev")     # doctest: +SKIP
    >>> len(dev)                                # doctest: +SKIP
    277
    """
    import tensorflow_datasets as tfds  # imported here: slow, and only this path needs it

    task = get_glue_task(task)
    if task.tfds_name is None:
        raise ValueError(f"{task.name} has no tensorflow_datasets config")
    if split not in task.splits or split not in _TFDS_SPLITS:
        raise ValueError(
            f"{task.name} has no split {split!r}; choose from {', '.join(task.splits)}"
        )
    dataset = tfds.load(task.tfds_name, split=_TFDS_SPLITS[split], data_dir=data_dir)
    return glue_examples_from_tfds(task, split, tfds.as_numpy(dataset))


def glue_examples_from_tfds(
    task: str | GlueTask, split: str, rows: Iterable[Mapping[str, object]]
) -> GlueExamples:
    """Turns tfds `glue/*` example dicts (`{"sentence": b"...", "label": 1, "idx": 7}`) into
    `GlueExamples` with our label ids.

    tfds numbers classes in its own order (MNLI: entailment, neutral, contradiction); we map
    each id to its name and then to the official order, so a model's head means the same thing
    whichever reader fed it. Test rows (tfds label -1) give `labels=None`.

    Args:
        task: str or GlueTask.
        split: str. Our split name (for messages and `GlueExamples.split`).
        rows: iterable of dicts with the task's tfds text features, `label` and `idx`.

    Returns:
        GlueExamples, ordered by tfds's `idx` (GLUE's row order).
    """
    task = get_glue_task(task)
    source = f"tfds:{task.tfds_name}[{_TFDS_SPLITS.get(split, split)}]"
    rows = sorted(rows, key=lambda row: int(row["idx"]))
    text_a = [_text(row[task.tfds_text[0]]) for row in rows]
    text_b = [_text(row[task.tfds_text[1]]) for row in rows] if task.is_pair else None
    raw = [row["label"] for row in rows]
    if all(float(value) == -1 for value in raw):
        labels = None  # a test split (tfds writes -1 where GLUE has no label)
    elif task.is_regression:
        labels = np.asarray(raw, dtype="float32")
    else:
        labels = np.asarray([_label_id(task, int(value), source) for value in raw], dtype="int32")
    return GlueExamples(
        task=task.name,
        split=split,
        source=source,
        index=[str(int(row["idx"])) for row in rows],
        text_a=text_a,
        text_b=text_b,
        labels=labels,
        label_names=task.labels,
    )


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _label_id(task: GlueTask, tfds_id: int, source: str) -> int:
    if not 0 <= tfds_id < len(task.tfds_labels):
        raise ValueError(f"{source}: label id {tfds_id} outside tfds's {task.tfds_labels}")
    name = task.tfds_labels[tfds_id]
    if task.labels == ("0", "1"):
        # GLUE's binary tasks write 0/1 in their TSVs; tfds names them in that same order.
        return tfds_id
    return task.labels.index(name)
