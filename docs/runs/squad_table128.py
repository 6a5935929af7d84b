"""The tables of docs/squad.md's 128-position tiny run, from `finetune-squad`'s metrics.json.

python docs/runs/squad_table128.py LABEL=RUN_DIR ...   (v1.1 and v2.0 runs; one table each)
"""

import json
import pathlib
import sys

rows = []
for arg in sys.argv[1:]:
    label, folder = arg.split("=", 1)
    rows.append((label, json.loads((pathlib.Path(folder) / "metrics.json").read_text())))


def loss(m):
    history = m["history"].get("loss", [])
    return " / ".join(f"{v:.2f}" for v in history) if history else "-"


v1 = [(label, m) for label, m in rows if m["version"] == "1.1"]
if v1:
    print("| v1.1 dev (answerable only) | steps | EM | F1 | wall s | training loss per epoch |")
    print("|---|---|---|---|---|---|")
    for label, m in v1:
        s = m["metrics"]
        print(f"| {label} | {m['steps']} | {s['exact_match']:.2f} | {s['f1']:.2f} "
              f"| {m['wall_seconds']:.0f} | {loss(m)} |")  # fmt: skip
v2 = [(label, m) for label, m in rows if m["version"] == "2.0"]
if v2:
    print()
    print("| v2.0 dev | steps | EM / F1 at the dev threshold | HasAns EM / F1 | NoAns F1 "
          "| best_f1 (official thresh) | HasAns EM / F1, always answering | wall s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for label, m in v2:
        s, a = m["metrics"], m["metrics_always_answering"]
        print(f"| {label} | {m['steps']} | {s['exact']:.2f} / {s['f1']:.2f} "
              f"| {s['HasAns_exact']:.2f} / {s['HasAns_f1']:.2f} | {s['NoAns_f1']:.2f} "
              f"| {s['best_f1']:.2f} ({s['best_f1_thresh']:.2f}) "
              f"| {a['HasAns_exact']:.2f} / {a['HasAns_f1']:.2f} | {m['wall_seconds']:.0f} |")  # fmt: skip
