"""The study's report: `report.md` laid out like the paper's tables, `report.json`, plots.

Every number comes from the runs' own `summary.json` files (nothing is recomputed), as the mean
± sample standard deviation over the seeds that have finished. Where two cells' means differ
by less than the larger of their seed standard deviations, the gap is within seed noise; those
values carry a `†` and the pairs are listed under the table.

Here: the rows and the files; the statistics are `study_statistics`, the paper's findings
`study_checks`, the Markdown `study_markdown` and the plots `study_plots`.
"""

from __future__ import annotations

import json
import os

from albert_keras.study.study_cell import read_summary, run_folder
from albert_keras.study.study_checks import chance_levels, paper_checks
from albert_keras.study.study_markdown import report_markdown
from albert_keras.study.study_statistics import (
    columns,
    relative_speed,
    seed_stats,
    unresolved_pairs,
)
from albert_keras_contracts import atomic_write


def collect(spec, output_dir: str) -> list[dict]:
    """One row per cell: its finished runs' summaries and each column's statistics."""
    readers = columns(spec)
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
        for key, read in readers.items():
            # Downstream columns: the runs fine-tuned so far (the first pass stops before).
            runs = complete if key in downstream else summaries
            row["columns"][key] = seed_stats([read(s) for s in runs])
        rows.append(row)
    relative_speed(rows)
    return rows


def write_report(spec, output_dir: str, *, data: dict | None = None,
                 command: str | None = None) -> dict:  # fmt: skip
    """Writes report.md, report.json and the plots from the runs finished so far."""
    from albert_keras.study.study_plots import plot_downstream, plot_pretraining

    rows = collect(spec, output_dir)
    unresolved = unresolved_pairs(rows)
    chance = chance_levels(spec, data) if data else {}
    report = {
        "study": spec.to_dict(),
        "source": spec.source,
        "command": command,
        "data": data and {"stats": data.get("stats"), "files": _relative(data.get("files"))},
        "rows": rows,
        "unresolved": unresolved,
        "chance": chance,
        "checks": paper_checks(rows, chance),
        "complete": all(
            len(r["downstream_seeds" if spec.settings["tasks"] else "seeds"])
            == len(spec.settings["seeds"])
            for r in rows
        ),
    }
    _write(os.path.join(output_dir, "report.json"), json.dumps(report, indent=2) + "\n")
    _write(os.path.join(output_dir, "report.md"), report_markdown(spec, report))
    curves = [
        (cell.name, [read_summary(run_folder(output_dir, cell, s)) for s in spec.settings["seeds"]])
        for cell in spec.cells
        if cell.pretrain
    ]
    plot_pretraining(curves, os.path.join(output_dir, "pretraining_curves.png"))
    plot_downstream(rows, os.path.join(output_dir, "downstream.png"))
    return report


def _write(path: str, text: str) -> None:
    atomic_write.write_text(path, text)


def _relative(files: dict | None) -> dict | None:
    """The files read, relative to where the study ran (its command's paths are): a report
    names no folder of the machine it ran on."""
    if not files:
        return files
    return {kind: [os.path.relpath(path) for path in paths] for kind, paths in files.items()}
