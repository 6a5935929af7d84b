"""GLUE's submission files: `TASK.tsv` with an `index<TAB>prediction` header."""

from __future__ import annotations

import os
import pathlib

import numpy as np

from albert_keras.glue.glue_task import GlueTask
from albert_keras.glue.glue_tasks import get_glue_task
from albert_keras_contracts import atomic_write


def write_submission(
    path: str | os.PathLike, task: str | GlueTask, index: list[str], predictions: np.ndarray
) -> pathlib.Path:
    """Writes one GLUE prediction file, in the format gluebenchmark.com takes.

    One row per example, `index<TAB>prediction`, the prediction spelled as GLUE's labels are
    ("0"/"1", "entailment", "not_entailment", ...; STS-B: the score clipped to [0, 5]). GLUE's
    zip wants the files named CoLA.tsv, SST-2.tsv, MRPC.tsv, STS-B.tsv, QQP.tsv, MNLI-m.tsv,
    MNLI-mm.tsv, QNLI.tsv, RTE.tsv, WNLI.tsv and AX.tsv (`GlueTask.test_splits` holds the
    stems). Written to a temporary name, then renamed.

    Args:
        path: path of the file to write.
        task: str or GlueTask. Decides how predictions are spelled.
        index: list of str. Example ids (the test file's index column).
        predictions: array of class ids, or scores for STS-B.

    Returns:
        The path written.

    Example:
    >>> write_submission("out/RTE.tsv", "RTE", ["0", "1"], np.array([1, 0]))
    PosixPath('out/RTE.tsv')
    >>> open("out/RTE.tsv").read().splitlines()
    ['index\\tprediction', '0\\tnot_entailment', '1\\tentailment']
    """
    task = get_glue_task(task)
    predictions = np.asarray(predictions)
    if len(index) != len(predictions):
        raise ValueError(f"{path}: {len(index)} ids but {len(predictions)} predictions")
    if (
        not task.is_regression
        and len(predictions)
        and not (0 <= predictions.min() and predictions.max() < task.num_classes)
    ):
        raise ValueError(f"{path}: class ids outside 0..{task.num_classes - 1}")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["index\tprediction"]
    lines += [f"{i}\t{label}" for i, label in zip(index, task.submission_labels(predictions))]
    atomic_write.write_text(path, "\n".join(lines) + "\n")
    return path
