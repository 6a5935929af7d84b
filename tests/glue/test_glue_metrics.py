"""GLUE's metrics: hand-computed cases and independent NumPy formulas on random predictions."""

import math

import numpy as np
import pytest

from albert_keras.glue import glue_metrics

# 7 examples: TP=3, TN=2, FP=1, FN=1.
LABELS = [1, 1, 1, 0, 0, 1, 0]
PREDICTIONS = [1, 1, 1, 0, 0, 0, 1]


def test_hand_computed_binary_cases():
    # MCC = (TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) = (6 - 1) / sqrt(4*4*3*3) = 5/12
    assert glue_metrics("CoLA", LABELS, PREDICTIONS) == {"matthews_corrcoef": pytest.approx(5 / 12)}
    # precision = recall = 3/4 -> F1 = 3/4; accuracy 5/7
    assert glue_metrics("MRPC", LABELS, PREDICTIONS) == {
        "f1": pytest.approx(0.75),
        "accuracy": pytest.approx(5 / 7),
    }
    assert list(glue_metrics("QQP", LABELS, PREDICTIONS)) == ["f1", "accuracy"]
    for task in ("SST-2", "QNLI", "RTE", "WNLI", "MNLI"):
        assert glue_metrics(task, LABELS, PREDICTIONS) == {"accuracy": pytest.approx(5 / 7)}


def test_hand_computed_correlations():
    # x = [1, 2, 3], y = [1, 2, 4]: cov sum 3, |dx| = sqrt 2, |dy| = sqrt(42)/3 -> 9 / sqrt 84
    scores = glue_metrics("STS-B", [1.0, 2.0, 4.0], [1.0, 2.0, 3.0])
    assert scores == {"pearson": pytest.approx(9 / math.sqrt(84)), "spearman": pytest.approx(1.0)}


def _ranks(x):
    # Average ranks of tied values, as Spearman's definition.
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=float)
    for value in np.unique(x):
        ranks[x == value] = ranks[x == value].mean()
    return ranks


def test_metrics_equal_independent_formulas_on_random_predictions():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, size=500)
    predictions = np.where(rng.random(500) < 0.7, labels, 1 - labels)
    tp = np.sum((predictions == 1) & (labels == 1))
    tn = np.sum((predictions == 0) & (labels == 0))
    fp = np.sum((predictions == 1) & (labels == 0))
    fn = np.sum((predictions == 0) & (labels == 1))
    mcc = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert glue_metrics("CoLA", labels, predictions)["matthews_corrcoef"] == pytest.approx(mcc)
    mrpc = glue_metrics("MRPC", labels, predictions)
    assert mrpc["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert mrpc["accuracy"] == pytest.approx((tp + tn) / 500)
    nli = rng.integers(0, 3, size=300)
    guess = np.where(rng.random(300) < 0.5, nli, rng.integers(0, 3, size=300))
    assert glue_metrics("MNLI", nli, guess)["accuracy"] == pytest.approx(np.mean(nli == guess))

    scores = np.round(rng.uniform(0, 5, size=400), 1)  # rounded: ties, as real STS-B scores
    guessed = scores + rng.normal(0, 1.5, size=400)
    stsb = glue_metrics("STS-B", scores, guessed)
    assert stsb["pearson"] == pytest.approx(np.corrcoef(scores, guessed)[0, 1])
    assert stsb["spearman"] == pytest.approx(np.corrcoef(_ranks(scores), _ranks(guessed))[0, 1])


def test_undefined_correlation_is_nan_and_bad_shapes_are_errors():
    assert math.isnan(glue_metrics("STS-B", [1.0, 2.0, 3.0], [2.0, 2.0, 2.0])["pearson"])
    with pytest.raises(ValueError, match=r"SST-2: labels \(3,\) and predictions \(2,\)"):
        glue_metrics("SST-2", [0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match=r"CoLA: no examples"):
        glue_metrics("CoLA", [], [])
