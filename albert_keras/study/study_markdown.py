"""The study report's `report.md`: the budget, the results laid out like the paper's Table 5,
the pairs within seed noise and the paper's findings, checked."""

from __future__ import annotations

from albert_keras.study.study_statistics import format_mean_std, unresolved_pairs

__all__ = ["report_markdown"]

_TASK_LABELS = {"matthews_corrcoef": "MCC", "pearson": "Pearson", "spearman": "Spearman",
                "accuracy": "acc", "f1": "F1"}  # fmt: skip


def report_markdown(spec, report: dict) -> str:
    """`report.md`: the study's budget, the results table laid out like the paper's, the pairs
    within seed noise and the paper's findings, checked.

    Args:
        spec: `StudySpec`. The study the report is of.
        report: dict. What `write_report` writes to `report.json`.

    Returns:
        The Markdown text, ending in a newline.
    """
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
            paper = "—" if c["paper"] is None else c["paper"]
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
    flagged = {(u["column"], name) for u in unresolved_pairs(rows) for name in u["cells"]}
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
    return format_mean_std(stats["mean"], stats["std"]) + fewer + (" †" if flagged else "")
