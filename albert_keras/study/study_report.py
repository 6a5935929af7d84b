"""The study's report: `report.md` laid out like the paper's tables, `report.json`, plots.

Every number comes from the runs' own `summary.json` files (nothing is recomputed), as the mean
± sample standard deviation over the seeds that have finished. Where two cells' means differ
by less than the larger of their seed standard deviations, the gap is within seed noise; those
values carry a `†` and the pairs are listed under the table.
"""

from __future__ import annotations

import json
import math
import os

from albert_keras.study.study_cell import read_summary, run_folder
from pipelines import atomic_write

# The paper's Table 5 (ALBERT-base, 125k steps at batch 4096, seq 512), for the checks.
PAPER_TABLE5 = {
    "none": {"mlm": 54.9, "nsp": 52.4, "sop": 53.3, "avg": 79.0},
    "nsp": {"mlm": 54.5, "nsp": 90.5, "sop": 52.0, "avg": 79.2},
    "sop": {"mlm": 54.0, "nsp": 78.9, "sop": 86.5, "avg": 80.1},
}
_TASK_LABELS = {"matthews_corrcoef": "MCC", "pearson": "Pearson", "spearman": "Spearman",
                "accuracy": "acc", "f1": "F1"}  # fmt: skip


def collect(spec, output_dir: str) -> list[dict]:
    """One row per cell: its finished runs' summaries and each column's statistics."""
    columns = _columns(spec)
    downstream = [*spec.settings["tasks"], "Avg"]
    rows = []
    for cell in spec.cells:
        summaries = [
            s
            for seed in spec.settings["seeds"]
            if (s := read_summary(run_folder(output_dir, cell, seed))) is not None
        ]
        row = {
            "cell": cell.name,
            "sentence_objective": cell.sentence_objective,
            "pretrained": cell.pretrain,
            "backbone": spec.backbone_config(cell),
            "seeds": [s["seed"] for s in summaries],
            "parameters": summaries[0]["parameters"] if summaries else None,
            "columns": {},
        }
        counts = {s["parameters"] for s in summaries}
        if len(counts) > 1:
            raise ValueError(f"cell {cell.name}: parameter counts differ between seeds {counts}")
        complete = [s for s in summaries if s["stage"] == "complete"]
        row["downstream_seeds"] = [s["seed"] for s in complete]
        for key, read in columns.items():
            # Downstream columns: the runs fine-tuned so far (the first pass stops before).
            runs = complete if key in downstream else summaries
            row["columns"][key] = _stats([read(s) for s in runs])
        rows.append(row)
    _relative_speed(rows)
    return rows


def write_report(spec, output_dir: str, *, data: dict | None = None,
                 command: str | None = None) -> dict:  # fmt: skip
    """Writes report.md, report.json and the plots from the runs finished so far."""
    from albert_keras.study.study_plots import plot_downstream, plot_pretraining

    rows = collect(spec, output_dir)
    unresolved = _unresolved(rows)
    chance = chance_levels(spec, data) if data else {}
    report = {
        "study": spec.to_dict(),
        "source": spec.source,
        "command": command,
        "data": data and {"stats": data.get("stats"), "files": data.get("files")},
        "rows": rows,
        "unresolved": unresolved,
        "chance": chance,
        "checks": _paper_checks(rows, chance),
        "complete": all(
            len(r["downstream_seeds" if spec.settings["tasks"] else "seeds"])
            == len(spec.settings["seeds"])
            for r in rows
        ),
    }
    _write(os.path.join(output_dir, "report.json"), json.dumps(report, indent=2) + "\n")
    _write(os.path.join(output_dir, "report.md"), _markdown(spec, report))
    curves = [
        (cell.name, [read_summary(run_folder(output_dir, cell, s)) for s in spec.settings["seeds"]])
        for cell in spec.cells
        if cell.pretrain
    ]
    plot_pretraining(curves, os.path.join(output_dir, "pretraining_curves.png"))
    plot_downstream(rows, os.path.join(output_dir, "downstream.png"))
    return report


# === Columns ===


def _columns(spec) -> dict:
    """Column key -> how to read it from a run's summary (None: not applicable)."""

    def intrinsic(name):
        return lambda s: _percent(s["intrinsic"][name])

    columns = {
        "MLM": intrinsic("mlm_accuracy"),
        "NSP": intrinsic("nsp_accuracy"),
        "SOP": intrinsic("sop_accuracy"),
    }
    for task in spec.settings["tasks"]:
        columns[task] = lambda s, task=task: s["downstream"][task]["score"]
    if spec.settings["tasks"]:
        columns["Avg"] = lambda s: s["downstream_average"]
    columns["steps/s"] = lambda s: s["pretraining"]["steps_per_second"]
    return columns


def _percent(value):
    return None if value is None else 100.0 * value


def _stats(values: list) -> dict:
    present = [v for v in values if v is not None]
    if not present:
        return {"values": values, "n": 0, "mean": None, "std": None}
    mean = sum(present) / len(present)
    std = (
        math.sqrt(sum((v - mean) ** 2 for v in present) / (len(present) - 1))
        if len(present) > 1
        else None
    )
    return {"values": values, "n": len(present), "mean": mean, "std": std}


def _relative_speed(rows: list[dict]) -> None:
    """Pretraining speed relative to the first pretrained row (the paper's "Speedup")."""
    first = next(
        (r["columns"]["steps/s"]["mean"] for r in rows if r["columns"]["steps/s"]["mean"]), None
    )
    for row in rows:
        mean = row["columns"]["steps/s"]["mean"]
        row["speed_relative"] = mean / first if mean and first else None


def _unresolved(rows: list[dict]) -> list[dict]:
    """Pairs of cells whose gap in a column is smaller than the seed spread."""
    found = []
    keys = [k for k in (rows[0]["columns"] if rows else {}) if k != "steps/s"]
    for key in keys:
        for i, a in enumerate(rows):
            for b in rows[i + 1 :]:
                ca, cb = a["columns"][key], b["columns"][key]
                if ca["mean"] is None or cb["mean"] is None:
                    continue
                spread = max(ca["std"] or 0.0, cb["std"] or 0.0)
                gap = abs(ca["mean"] - cb["mean"])
                if spread > 0 and gap < spread:
                    found.append(
                        {"column": key, "cells": [a["cell"], b["cell"]], "gap": gap, "std": spread}
                    )
    return found


def chance_levels(spec, data: dict) -> dict:
    """The majority-class accuracy (%) of the held-out NSP and SOP examples the cells are
    evaluated on: the level a sentence head reaches by always giving one answer. NSP records
    are not balanced: as in the official script, a chunk of one segment always gets a random
    next segment, and at short sequence lengths many chunks are one segment."""
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


def _paper_checks(rows: list[dict], chance: dict | None = None) -> list[dict]:
    """Table 5's findings, checked on the rows of each sentence objective (where present),
    against the held-out majority-class rates (`chance`; 50 where unknown)."""
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
            _pm(mean, std), mean - 2 * (std or 0) > sop_chance + 5)  # fmt: skip
        mean, std = value(sop, "NSP")
        add(f"SOP-trained model: NSP accuracy above chance ({nsp_chance:.1f})", 78.9,
            _pm(mean, std), mean - 2 * (std or 0) > nsp_chance)  # fmt: skip
    if nsp is not None and value(nsp, "SOP")[0] is not None:
        mean, std = value(nsp, "SOP")
        add(f"NSP-trained model: SOP accuracy near chance ({sop_chance:.1f})", 52.0,
            _pm(mean, std), abs(mean - sop_chance) < 5)  # fmt: skip
        mean, std = value(nsp, "NSP")
        add(f"NSP-trained model: NSP accuracy well above chance ({nsp_chance:.1f})", 90.5,
            _pm(mean, std), mean - 2 * (std or 0) > nsp_chance + 5)  # fmt: skip
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
                f"{_pm(mean, std)} vs {_pm(base, base_std)}",
                mean > base,
            )
    return checks


# === Markdown ===


def _markdown(spec, report: dict) -> str:
    s = spec.settings
    rows = report["rows"]
    lines = [f"# Study `{s['name']}`", ""]
    if s["description"]:
        lines += [s["description"], ""]
    if report["command"]:
        lines += ["Reproduce with:", "", "```", report["command"], "```", ""]
    done = sum(len(r["seeds"]) for r in rows)
    tuned = sum(len(r["downstream_seeds"]) for r in rows)
    total = len(rows) * len(s["seeds"])
    status = "complete" if report["complete"] else "**partial**"
    lines += [
        (
            f"Runs: {done} of {total} pretrained and evaluated, {tuned} of {total} fine-tuned "
            f"({status})."
        ),
        "",
        "## Budget",
        "",
    ]
    lines += _budget_lines(spec, report)
    lines += ["", "## Results", ""]
    lines += _table(spec, rows)
    if report.get("chance"):
        c = report["chance"]
        lines += [
            "",
            (
                f"Chance on the held-out sentence pairs (the majority class, what a head answering "
                f"always the same reaches): NSP {c.get('NSP', 50):.1f}, SOP {c.get('SOP', 50):.1f}."
            ),
        ]
    lines += [
        "",
        (
            "Mean ± sample standard deviation over the seeds (n = seeds finished). Parameters: the "
            "backbone's `count_params()` (embeddings, encoder, pooler). MLM: masked-token accuracy "
            "on held-out records of the cell's own kind (the baseline: SOP records). NSP / SOP: the "
            "sentence head's accuracy, as trained, on held-out NSP and SOP records (n/a: no "
            "sentence head). Downstream: each task's main GLUE dev metric × 100, and their average. "
            "Speed: pretraining steps per second relative to the first row (on a shared machine: "
            "indicative only)."
        ),
    ]
    if report["unresolved"]:
        lines += ["", "† Seed spread exceeds the gap between cells (gap < larger std):", ""]
        for u in report["unresolved"]:
            a, b = u["cells"]
            lines.append(
                f"- {u['column']}: {a} vs {b}: gap {u['gap']:.2f}, seed std {u['std']:.2f}"
            )
    if report["checks"]:
        lines += ["", "## The paper's findings, checked", ""]
        lines += ["| finding | paper | measured | holds here |", "|---|---|---|---|"]
        for c in report["checks"]:
            paper = "" if c["paper"] is None else c["paper"]
            lines.append(
                f"| {c['claim']} | {paper} | {c['measured']} | {'yes' if c['holds'] else 'no'} |"
            )
    lines.append("")
    return "\n".join(lines)


def _budget_lines(spec, report) -> list[str]:
    s = spec.settings
    backbone = ", ".join(f"{k}={v}" for k, v in s["backbone"].items())
    warmup = s["warmup_steps"] if s["warmup_steps"] is not None else "2.5% of steps"
    lines = [
        f"- Backbone: preset `{s['preset']}` with {backbone}; per cell: "
        + "; ".join(
            f"{c.name}: "
            + (", ".join(f"{k}={v}" for k, v in c.backbone.items()) or "as above")
            + ("" if c.pretrain else " (not pretrained)")
            + (f", objective {c.sentence_objective}" if c.pretrain else "")
            for c in spec.cells
        ),
        (
            f"- Pretraining: {s['steps']} steps × batch {s['batch_size']} × seq "
            f"{s['max_seq_length']} ({s['max_predictions_per_seq']} predictions), LAMB peak "
            f"learning rate {s['learning_rate']}, warmup {warmup}; seeds {s['seeds']}."
        ),
        (
            f"- Data: `{s['corpus']}` minus held-out `{s['heldout']}`, vocabulary "
            f"`{s['spm_model']}`, dupe factor {s['dupe_factor']}, data seed {s['data_seed']}."
        ),
    ]
    data = report.get("data") or {}
    if data.get("stats"):
        counts = ", ".join(f"{k} {v['examples']:,}" for k, v in data["stats"].items())
        lines.append(f"- Records (examples): {counts}; held-out evaluation on at most "
                     f"{s['heldout_max_examples']} examples of each kind.")  # fmt: skip
    if s["tasks"]:
        cap = s["finetune_max_dev_examples"]
        lines.append(
            f"- Fine-tuning ({', '.join(s['tasks'])} from `{s['glue_dir']}`): "
            f"{s['finetune_steps']} steps × batch {s['finetune_batch_size']} × seq "
            f"{s['finetune_max_seq_length']}, AdamWeightDecay peak learning rate "
            f"{s['finetune_learning_rate']}, {s['finetune_evaluations']} dev evaluation(s), "
            f"the best kept; dev {'capped at ' + str(cap) + ' examples (seeded sample)' if cap else 'whole'}."
        )
    return lines


def _table(spec, rows) -> list[str]:
    tasks = spec.settings["tasks"]
    flagged = {(u["column"], name) for u in _unresolved(rows) for name in u["cells"]}
    task_heads = []
    for task in tasks:
        metric = next(
            (
                r["columns"][task] and _metric_name(spec, r, task)
                for r in rows
                if r["columns"][task]["n"]
            ),
            None,
        )
        task_heads.append(f"{task} ({metric})" if metric else task)
    head = ["Cell", "n", "Parameters", "MLM", "NSP", "SOP", *task_heads]
    if tasks:
        head.append("Avg")
    head.append("Speed")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cols = row["columns"]
        cells = [row["cell"], str(len(row["seeds"])),
                 f"{row['parameters']:,}" if row["parameters"] is not None else "pending"]  # fmt: skip
        for key in ["MLM", "NSP", "SOP"]:
            cells.append(_cell_text(cols[key], row, (key, row["cell"]) in flagged, "n/a"))
        for key in [*tasks, "Avg"] if tasks else []:
            cells.append(_cell_text(cols[key], row, (key, row["cell"]) in flagged, "pending"))
        speed = row["speed_relative"]
        cells.append(f"{speed:.2f}x" if speed else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _metric_name(spec, row, task) -> str:
    from albert_keras.glue.glue_tasks import get_glue_task

    name = get_glue_task(task).main_metric
    return _TASK_LABELS.get(name, name)


def _cell_text(stats: dict, row: dict, flagged: bool, missing: str) -> str:
    if not row["seeds"]:
        return "pending"
    if stats["mean"] is None:
        return missing
    fewer = f" (n={stats['n']})" if stats["n"] < len(row["seeds"]) else ""
    return _pm(stats["mean"], stats["std"]) + fewer + (" †" if flagged else "")


def _pm(mean, std) -> str:
    if mean is None:
        return "n/a"
    return f"{mean:.1f} ± {std:.1f}" if std is not None else f"{mean:.1f}"


def _write(path: str, text: str) -> None:
    atomic_write.write_text(path, text)
