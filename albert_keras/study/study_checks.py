"""The paper's Table 5 findings, checked on a study's rows, and the chance levels they use.

A sentence head's accuracy means little without the level a head reaches by always giving one
answer: `chance_levels` measures it on the held-out records the cells are evaluated on, and
`paper_checks` compares each finding against it.
"""

from __future__ import annotations

from albert_keras.study.study_statistics import format_mean_std
from albert_keras_contracts.record_format import SENTENCE_LABELS

__all__ = ["PAPER_TABLE5", "chance_levels", "paper_checks"]

# The paper's Table 5 (ALBERT-base, 125k steps at batch 4096, seq 512), for the checks.
PAPER_TABLE5 = {
    "none": {"mlm": 54.9, "nsp": 52.4, "sop": 53.3, "avg": 79.0},
    "nsp": {"mlm": 54.5, "nsp": 90.5, "sop": 52.0, "avg": 79.2},
    "sop": {"mlm": 54.0, "nsp": 78.9, "sop": 86.5, "avg": 80.1},
}


def chance_levels(spec, data: dict) -> dict:
    """The majority-class accuracy (%) of the held-out NSP and SOP examples the cells are
    evaluated on: the level a sentence head reaches by always giving one answer. NSP records
    are not balanced: as in the official script, a chunk of one segment always gets a random
    next segment, and at short sequence lengths many chunks are one segment.

    Args:
        spec: `StudySpec`. Its `batch_size` (only full batches are evaluated) and
            `heldout_max_examples`.
        data: dict. The study's records (`make_records`): `heldout` maps "nsp" and "sop" to a
            glob of TFRecord files.

    Returns:
        A dict of "NSP" / "SOP" -> percent, for the kinds with at least one full batch.
    """
    import glob

    import tensorflow as tf

    settings = spec.settings
    levels = {}
    for kind in ("nsp", "sop"):
        files = sorted(glob.glob(data["heldout"][kind]))
        batch = settings["batch_size"]
        dataset = tf.data.TFRecordDataset(files).map(
            lambda record: tf.io.parse_single_example(
                record, {SENTENCE_LABELS: tf.io.FixedLenFeature([1], tf.int64)}
            )[SENTENCE_LABELS][0]
        )
        labels = [
            int(x) for x in dataset.take(settings["heldout_max_examples"]).as_numpy_iterator()
        ]
        labels = labels[: len(labels) // batch * batch]  # the full batches evaluated
        if labels:
            ones = sum(labels) / len(labels)
            levels[kind.upper()] = 100.0 * max(ones, 1.0 - ones)
    return levels


def paper_checks(rows: list[dict], chance: dict | None = None) -> list[dict]:
    """The findings a study's rows can check, against the held-out majority-class rates
    (`chance`; 50 where unknown): Table 5's sentence-head findings where the cells differ in
    their sentence objective (in a study of one objective, such as the E or sharing grids, "the
    SOP-trained model" would be whichever cell came last), and for every pretrained cell
    whether it beats no pretraining downstream.

    Args:
        rows: list of dict. The report's rows (`collect`).
        chance: dict or None. "NSP" / "SOP" -> the held-out majority-class rate, percent.

    Returns:
        A list of dicts: `claim`, `paper` (the paper's number), `measured` and `holds`.

    Example:
    >>> from albert_keras.study.study_statistics import seed_stats
    >>> def row(cell, objective, sop, nsp):
    ...     return {"cell": cell, "sentence_objective": objective, "pretrained": True,
    ...             "seeds": [1, 2], "columns": {"SOP": seed_stats(sop), "NSP": seed_stats(nsp)}}
    >>> rows = [row("NSP", "nsp", [51.0, 52.0], [80.0, 82.0]),
    ...         row("SOP", "sop", [88.0, 90.0], [60.0, 62.0])]
    >>> [(c["measured"], c["holds"]) for c in paper_checks(rows, {"NSP": 61.0})]
    [('89.0 ± 1.4', True), ('61.0 ± 1.4', False), ('51.5 ± 0.7', True), ('81.0 ± 1.4', True)]
    >>> paper_checks(rows[1:], {"NSP": 61.0})  # one objective: no cell is "the SOP-trained"
    []
    """
    chance = chance or {}
    pretrained = [r for r in rows if r["pretrained"] and r["seeds"]]
    baseline = next((r for r in rows if not r["pretrained"] and r["seeds"]), None)
    by_objective = {r["sentence_objective"]: r for r in pretrained}
    checks = []
    if len(by_objective) > 1 and len(by_objective) == len(pretrained):
        checks += _sentence_head_checks(by_objective, chance)
    if baseline is not None and "Avg" in baseline["columns"]:
        base, base_std = _value(baseline, "Avg")
        for row in pretrained:
            mean, std = _value(row, "Avg")
            if mean is None or base is None:
                continue  # not fine-tuned yet
            paper = PAPER_TABLE5.get(row["sentence_objective"]) if len(by_objective) > 1 else None
            checks.append({
                "claim": f"{row['cell']}-pretrained above no-pretraining on the downstream average",
                "paper": f"{paper['avg']} (no baseline in the paper)" if paper else None,
                "measured": f"{format_mean_std(mean, std)} vs {format_mean_std(base, base_std)}",
                # Above by more than either seed spread: a gap inside it is not a finding.
                "holds": mean - base > max(std or 0, base_std or 0),
            })  # fmt: skip
    return checks


def _value(row: dict, key: str) -> tuple:
    return row["columns"][key]["mean"], row["columns"][key]["std"]


def _sentence_head_checks(by_objective: dict, chance: dict) -> list[dict]:
    """Table 5's findings on the NSP- and SOP-trained cells' held-out sentence heads."""
    nsp_chance, sop_chance = chance.get("NSP", 50.0), chance.get("SOP", 50.0)
    checks = []

    def add(claim, paper, row, key, holds):
        mean, std = _value(row, key)
        checks.append({"claim": claim, "paper": paper, "measured": format_mean_std(mean, std),
                       "holds": holds(mean, std or 0)})  # fmt: skip

    sop, nsp = by_objective.get("sop"), by_objective.get("nsp")
    if sop is not None and _value(sop, "SOP")[0] is not None:
        add(f"SOP-trained model: SOP accuracy well above chance ({sop_chance:.1f})", 86.5, sop,
            "SOP", lambda mean, std: mean - 2 * std > sop_chance + 5)  # fmt: skip
        add(f"SOP-trained model: NSP accuracy above chance ({nsp_chance:.1f})", 78.9, sop,
            "NSP", lambda mean, std: mean - 2 * std > nsp_chance)  # fmt: skip
    if nsp is not None and _value(nsp, "SOP")[0] is not None:
        add(f"NSP-trained model: SOP accuracy near chance ({sop_chance:.1f})", 52.0, nsp,
            "SOP", lambda mean, std: abs(mean - sop_chance) < 5)  # fmt: skip
        add(f"NSP-trained model: NSP accuracy well above chance ({nsp_chance:.1f})", 90.5, nsp,
            "NSP", lambda mean, std: mean - 2 * std > nsp_chance + 5)  # fmt: skip
    return checks
