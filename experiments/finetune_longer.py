"""Fine-tunes a finished study's pretrained runs for longer than the study did, to see whether
a longer fine-tuning shows the transfer that the study's own (short) fine-tuning does not.

    python experiments/finetune_longer.py out/study/table5 --cells SOP no-pretraining \\
        --tasks STS-B --steps 300 1200 --output_dir out/finetune_longer

Run from the folder the study ran from (the study's vocabulary path is relative to it). For
each cell, seed and task it fine-tunes the run's `pretrain/backbone.keras` (the random init for
the no-pretraining cell) with `albert-keras finetune-glue`'s job, at the study's batch, sequence
length, learning rate, precision and seed, on the study's capped dev rows (`data/glue-dev*`),
for each of `--steps`, into `OUTPUT_DIR/STEPS/CELL/seed-N/TASK` (a finished one is kept: the
command resumes). It prints one table: each cell and task's dev score, mean ± std over the
seeds, at each length, beside the study's own figure (taken by the code that ran the study:
rerun its length here to compare the same code).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import albert_keras  # noqa: F401  (registers the serializable classes)
from albert_keras.glue.glue_tasks import get_glue_task
from albert_keras.study import load_spec
from albert_keras.study.study_cell import finetune_as_study, read_summary, run_folder
from albert_keras.study.study_statistics import format_mean_std, seed_stats


def finetune_longer(study_dir: str, cells: list[str], tasks: list[str], steps: list[int],
                    output_dir: str, log=print) -> dict:  # fmt: skip
    """Fine-tunes the study's runs of `cells` on `tasks` for each of `steps`.

    Args:
        study_dir: str. A finished `albert-keras study` folder (its `study.json`, `data/` and
            each run's `pretrain/backbone.keras`).
        cells: list of str. Cell names, as in the study's report.
        tasks: list of str. GLUE tasks the study fine-tuned on.
        steps: list of int. Fine-tuning lengths, in steps.
        output_dir: str. Where each run's `finetune-glue` folder goes.
        log: a function of one str, told of each run.

    Returns:
        A dict of (cell, task) -> {"study": [score per seed], steps: [score per seed], ...},
        the task's main dev metric × 100.
    """
    spec = load_spec(os.path.join(study_dir, "study.json"))
    settings = spec.settings
    by_name = {cell.name: cell for cell in spec.cells}
    unknown = [name for name in cells if name not in by_name]
    if unknown:
        raise ValueError(f"{study_dir}: no cell {unknown[0]!r} (cells: {sorted(by_name)})")
    missing = [task for task in tasks if task not in settings["tasks"]]
    if missing:
        raise ValueError(f"{study_dir}: the study did not fine-tune on {missing[0]!r}")
    glue_dirs = sorted(glob.glob(os.path.join(study_dir, "data", "glue-dev*")))
    if not glue_dirs:
        raise FileNotFoundError(f"{study_dir}/data: no capped GLUE folder (glue-dev*)")
    results = {}
    for name in cells:
        for task in tasks:
            results[name, task] = {"study": [], **{n: [] for n in steps}}
            for seed in settings["seeds"]:
                run = run_folder(study_dir, by_name[name], seed)
                summary = read_summary(run)
                if summary is None or task not in summary.get("downstream", {}):
                    raise FileNotFoundError(f"{run}: not fine-tuned on {task} by the study")
                results[name, task]["study"].append(summary["downstream"][task]["score"])
                for n in steps:
                    out = os.path.join(output_dir, str(n), name, f"seed-{seed}", task)
                    results[name, task][n].append(
                        _finetune(spec, by_name[name], seed, run, task, glue_dirs[-1], n, out, log)
                    )
    return results


def _finetune(spec, cell, seed, run, task, glue_dir, steps, out, log) -> float:
    metrics_path = os.path.join(out, "metrics.json")
    if not os.path.exists(metrics_path):
        log(f"{cell.name} seed {seed} {task}: {steps} steps -> {out}")
        init_from = os.path.join(run, "pretrain", "backbone.keras")
        finetune_as_study(spec, cell, seed, task, init_from=init_from, glue_dir=glue_dir,
                          output_dir=out, steps=steps)  # fmt: skip
    with open(metrics_path) as f:
        value = json.load(f)["metrics"][get_glue_task(task).main_metric]
    return 100.0 * (value if value is not None else 0.0)  # undefined correlation: 0, as the study


def results_table(results: dict, study_steps: int) -> str:
    """The results as a Markdown table: mean ± std over seeds, the study's figure first.

    Example:
    >>> print(results_table({("SOP", "RTE"): {"study": [50.0, 52.0], 900: [55.0, 57.0]}}, 300))
    | cell | task | 300 steps (the study) | 900 steps |
    |---|---|---|---|
    | SOP | RTE | 51.0 ± 1.4 | 56.0 ± 1.4 |
    """
    lengths = [n for n in next(iter(results.values())) if n != "study"]
    header = [f"{study_steps} steps (the study)", *(f"{n} steps" for n in lengths)]
    lines = [f"| cell | task | {' | '.join(header)} |", "|---|---|" + "---|" * len(header)]
    for (cell, task), scores in results.items():
        stats = [seed_stats(scores[key]) for key in ("study", *lengths)]
        cells = " | ".join(format_mean_std(s["mean"], s["std"]) for s in stats)
        lines.append(f"| {cell} | {task} | {cells} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study_dir", help="a finished `albert-keras study` folder")
    parser.add_argument("--cells", nargs="+", required=True, help="cell names")
    parser.add_argument("--tasks", nargs="+", required=True, help="GLUE tasks")
    parser.add_argument("--steps", type=int, nargs="+", required=True,
                        help="fine-tuning lengths, in steps")  # fmt: skip
    parser.add_argument("--output_dir", required=True)
    args = parser.parse_args(argv)
    try:
        results = finetune_longer(args.study_dir, args.cells, args.tasks, args.steps,
                                  args.output_dir, log=_to_stderr)  # fmt: skip
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    study_steps = load_spec(os.path.join(args.study_dir, "study.json")).settings["finetune_steps"]
    print(" ".join(["python", "experiments/finetune_longer.py", *(argv or sys.argv[1:])]))
    print(results_table(results, study_steps))
    return 0


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)  # progress apart from the table on stdout


if __name__ == "__main__":
    sys.exit(main())
