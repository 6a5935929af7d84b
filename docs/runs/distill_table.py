"""The results table of docs/distillation.md: held-out MLM accuracy from the distill / pretrain
runs' summaries and GLUE dev scores (each task's main metric, x 100) from `glue_all.py`'s
metrics.json files; the average over the tasks found for every model, and as % of the first.

    python docs/runs/distill_table.py GLUE_ROOT[,GLUE_ROOT...] name=RUN_DIR[@before|@teacher] ...

(the teacher first; several GLUE roots, e.g. one per fine-tuning seed, are averaged).
"""

import json
import pathlib
import sys

import numpy as np

from albert_keras.glue.glue_tasks import get_glue_task

TASKS = ["SST-2", "MRPC", "RTE", "CoLA", "STS-B"]
roots = [pathlib.Path(r) for r in sys.argv[1].split(",")]  # several: fine-tuning seeds
models = dict(arg.split("=", 1) for arg in sys.argv[2:])


def constant_score(glue_dir, task):
    """The best constant answer on the dev split: its majority class (0 for a correlation)."""
    from albert_keras.glue.glue_metrics import glue_metrics
    from albert_keras.glue.tsv_reader import read_glue_tsv

    spec = get_glue_task(task)
    labels = np.asarray(read_glue_tsv(glue_dir, spec, spec.dev_splits[0]).labels)
    if spec.is_regression:
        return 0.0
    majority = np.bincount(labels.astype(int)).argmax()
    return 100.0 * glue_metrics(spec, labels, np.full_like(labels, majority))[spec.main_metric]


def score(name, task):
    """The task's main metric x 100, averaged over the GLUE roots (None if one lacks it)."""
    values = []
    for root in roots:
        path = root / name / task / "metrics.json"
        if not path.exists():
            return None
        value = json.loads(path.read_text())["metrics"][get_glue_task(task).main_metric]
        values.append(100.0 * (value if value is not None else 0.0))  # undefined corr.: 0
    return sum(values) / len(values)


def heldout(folder):
    """RUN_DIR: its summary's held-out `eval`; RUN_DIR@before: a distill run's student before
    training (`eval_before.json`: the truncated teacher); RUN_DIR@teacher: its teacher there."""
    folder, _, which = folder.partition("@")
    path = pathlib.Path(folder) / ("eval_before.json" if which else "summary.json")
    if not path.exists():
        return "-"
    data = json.loads(path.read_text())
    key = {"": "mlm_accuracy", "before": "mlm_accuracy", "teacher": "teacher_mlm_accuracy"}[which]
    value = (data if which else data.get("eval") or {}).get(key)
    return "-" if value is None else f"{value:.4f}"


tasks = [t for t in TASKS if all(score(n, t) is not None for n in models if n != "constant")]
metrics = [f"{t} {get_glue_task(t).main_metric}" for t in tasks]
print(f"| model | held-out MLM acc. | {' | '.join(metrics)} | average | % of teacher |")
print("|---|---|" + "---|" * len(tasks) + "---|---|")
first = None
for name, folder in models.items():
    if name == "constant":  # constant=GLUE_DIR: the best constant answer, for scale
        scores = [constant_score(folder, t) for t in tasks]
        print(
            f"| constant answer (dev majority) | - | {' | '.join(f'{v:.1f}' for v in scores)} "
            f"| {sum(scores) / len(scores):.1f} | - |"
        )
        continue
    scores = [score(name, t) for t in tasks]
    average = sum(scores) / len(scores) if scores else float("nan")
    first = average if first is None else first
    cells = " | ".join(f"{s:.1f}" for s in scores)
    print(
        f"| {name} | {heldout(folder)} | {cells} | {average:.1f} | {100 * average / first:.0f}% |"
    )
