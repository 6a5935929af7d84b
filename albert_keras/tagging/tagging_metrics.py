"""Entity-level precision, recall and F1 of predicted tags (`seqeval`, the CoNLL definition)."""

from __future__ import annotations


def tagging_metrics(gold: list[list[str]], predicted: list[list[str | None]]) -> dict:
    """The scores a tagging user expects: CoNLL's entity-level precision / recall / F1
    (`seqeval`'s default, as `conlleval`: an entity counts when its type and its span are both
    right) and word accuracy.

    A word the model could not see (cut off by the sequence length, tag None) counts as `O`.

    Example:
    >>> gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    >>> scores = tagging_metrics(gold, [["B-PER", "I-PER", "O", "O"]])
    >>> scores["precision"], scores["recall"], round(scores["f1"], 4), scores["accuracy"]
    (1.0, 0.5, 0.6667, 0.75)
    """
    from seqeval.metrics import f1_score, precision_score, recall_score

    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    predicted = [["O" if tag is None else tag for tag in row] for row in predicted]
    words = sum(len(row) for row in gold)
    right = sum(g == p for gr, pr in zip(gold, predicted) for g, p in zip(gr, pr))
    return {
        "precision": float(precision_score(gold, predicted, zero_division=0)),
        "recall": float(recall_score(gold, predicted, zero_division=0)),
        "f1": float(f1_score(gold, predicted, zero_division=0)),
        "accuracy": right / words if words else 0.0,
    }
