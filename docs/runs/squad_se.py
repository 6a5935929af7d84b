"""Per-question F1 of SQuAD v1.1 runs: mean, its standard error, and each run's paired
difference from the first (mean +- SE), as docs/squad.md reports them.

python docs/runs/squad_se.py DEV-v1.1.json LABEL=RUN_DIR ...   (RUN_DIR/predictions.json)
"""

import json
import pathlib
import sys

import numpy as np

from albert_keras.squad.squad_metrics import f1_score

data = json.loads(pathlib.Path(sys.argv[1]).read_text())["data"]
golds = {qa["id"]: [a["text"] for a in qa["answers"]]
         for article in data for p in article["paragraphs"] for qa in p["qas"]}  # fmt: skip
runs = []
for arg in sys.argv[2:]:
    label, folder = arg.split("=", 1)
    predictions = json.loads((pathlib.Path(folder) / "predictions.json").read_text())
    f1 = np.array([max(f1_score(predictions[q], g, "1.1") for g in golds[q]) for q in golds])
    runs.append((label, 100 * f1))
se = lambda x: x.std(ddof=1) / np.sqrt(len(x))
base_label, base = runs[0]
for label, f1 in runs:
    line = f"{label}: F1 {f1.mean():.2f} +- {se(f1):.2f} (n={len(f1)})"
    if f1 is not base:
        line += f"; minus {base_label}: {(f1 - base).mean():+.2f} +- {se(f1 - base):.2f}"
    print(line)
