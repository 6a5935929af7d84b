"""The paper's Table 5 findings, checked on a study's rows, and the chance levels they use.

A sentence head's accuracy means little without the level a head reaches by always giving one
answer: `chance_levels` measures it on the held-out records the cells are evaluated on, and
`paper_checks` compares each finding against it.
"""

from __future__ import annotations

from albert_keras.study.study_statistics import format_mean_std

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
                record, {"next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64)}
            )["next_sentence_labels"][0]
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
    """Table 5's findings, checked on the rows of each sentence objective (where present),
    against the held-out majority-class rates (`chance`; 50 where unknown).

    Args:
        rows: list of dict. The report's rows (`collect`).
        chance: dict or None. "NSP" / "SOP" -> the held-out majority-class rate, percent.

    Returns:
        A list of dicts: `claim`, `paper` (the paper's number), `measured` and `holds`.

    Example:
    >>> from albert_keras.study.study_statistics import seed_stats
    >>> sop = {"cell": "SOP", "sentence_objective": "sop", "pretrained": True, "seeds": [1, 2],
    ...        "columns": {"SOP": seed_stats([88.0, 90.0]), "NSP": seed_stats([60.0, 62.0])}}
    >>> [(c["measured"], c["holds"]) for c in paper_checks([sop], {"NSP": 61.0})]
    [('89.0 ± 1.4', True), ('61.0 ± 1.4', False)]
    """
    chance = chance or {}
    nsp_chance, sop_chance = chance.get("NSP", 50.0), chance.get("SOP", 50.0)
    by_objective = {r["sentence_objective"]: r for r in rows if r["pretrained"] and r["seeds"]}
    baseline = next((r for r in rows if not r["pretrained"] and r["seeds"]), None)
    checks = []

    def value(row, key):
        return row["columns"][key]["mean"], row["columns"][key]["std"]

    def add(claim, paper, measured, holds):
        checks.append({"claim": claim, "paper": paper, "measured": measured, "holds": holds})

    sop, nsp = by_objective.get("sop"), by_objective.get("nsp")
    if sop is not None and value(sop, "SOP")[0] is not None:
        mean, std = value(sop, "SOP")
        add(f"SOP-trained model: SOP accuracy well above chance ({sop_chance:.1f})", 86.5,
            format_mean_std(mean, std), mean - 2 * (std or 0) > sop_chance + 5)  # fmt: skip
        mean, std = value(sop, "NSP")
        add(f"SOP-trained model: NSP accuracy above chance ({nsp_chance:.1f})", 78.9,
            format_mean_std(mean, std), mean - 2 * (std or 0) > nsp_chance)  # fmt: skip
    if nsp is not None and value(nsp, "SOP")[0] is not None:
        mean, std = value(nsp, "SOP")
        add(f"NSP-trained model: SOP accuracy near chance ({sop_chance:.1f})", 52.0,
            format_mean_std(mean, std), abs(mean - sop_chance) < 5)  # fmt: skip
        mean, std = value(nsp, "NSP")
        add(f"NSP-trained model: NSP accuracy well above chance ({nsp_chance:.1f})", 90.5,
            format_mean_std(mean, std), mean - 2 * (std or 0) > nsp_chance + 5)  # fmt: skip
    if baseline is not None and "Avg" in baseline["columns"]:
        base, base_std = value(baseline, "Avg")
        for objective, row in by_objective.items():
            mean, std = value(row, "Avg")
            if mean is None or base is None:
                continue  # not fine-tuned yet
            add(
                f"{row['cell']}-pretrained above no-pretraining on the downstream average",
                f"{PAPER_TABLE5[objective]['avg']} (no baseline in the paper)"
                if objective in PAPER_TABLE5
                else None,
                f"{format_mean_std(mean, std)} vs {format_mean_std(base, base_std)}",
                # Above by more than either seed spread: a gap inside it is not a finding.
                mean - base > max(std or 0, base_std or 0),
            )
    return checks
