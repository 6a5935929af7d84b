"""GLUE's metrics, computed with scikit-learn and SciPy."""

from __future__ import annotations

import numpy as np
from scipy import stats
from sklearn import metrics as sk_metrics

from albert_keras.glue.glue_task import GlueTask
from albert_keras.glue.glue_tasks import get_glue_task

_METRICS = {
    "accuracy": lambda y, p: sk_metrics.accuracy_score(y, p),
    # GLUE's F1 is the positive class's (MRPC "1" = paraphrase, QQP "1" = duplicate).
    "f1": lambda y, p: sk_metrics.f1_score(y, p, pos_label=1, average="binary", zero_division=0),
    # The user's own classification files (`user_files`): every class weighs the same.
    "macro_f1": lambda y, p: sk_metrics.f1_score(y, p, average="macro", zero_division=0),
    "matthews_corrcoef": lambda y, p: sk_metrics.matthews_corrcoef(y, p),
    "pearson": lambda y, p: stats.pearsonr(p, y).statistic,
    "spearman": lambda y, p: stats.spearmanr(p, y).statistic,
}


def glue_metrics(task: str | GlueTask, labels, predictions) -> dict[str, float]:
    """GLUE's metrics for `task`: Matthews correlation (CoLA), F1 and accuracy (MRPC, QQP),
    Pearson and Spearman (STS-B), accuracy (the rest).

    Args:
        task: str or GlueTask.
        labels: array of int class ids, or float scores for STS-B.
        predictions: array of the same shape: predicted ids (see `GlueTask.predictions`) or
            scores.

    Returns:
        dict of metric name -> float, main metric first. A correlation of constant predictions
        is undefined and comes back as NaN (as SciPy returns it).

    Example:
    >>> glue_metrics("MRPC", [1, 0, 1, 1], [1, 0, 0, 1])
    {'f1': 0.8, 'accuracy': 0.75}
    """
    task = get_glue_task(task)
    labels = np.asarray(labels)
    predictions = np.asarray(predictions)
    if labels.shape != predictions.shape or labels.ndim != 1:
        raise ValueError(
            f"{task.name}: labels {labels.shape} and predictions {predictions.shape} must be "
            "1-D arrays of the same length"
        )
    if labels.size == 0:
        raise ValueError(f"{task.name}: no examples to score")
    return {name: _score(name, labels, predictions) for name in task.metrics}


def _score(name: str, labels: np.ndarray, predictions: np.ndarray) -> float:
    if name in ("pearson", "spearman") and (np.ptp(predictions) == 0 or np.ptp(labels) == 0):
        return float("nan")  # SciPy would warn, then return NaN
    return float(_METRICS[name](labels, predictions))
