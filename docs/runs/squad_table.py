"""The SQuAD 2.0 table of docs/squad.md from `finetune-squad`'s metrics.json files.

python docs/runs/squad_table.py "pretrained, untrained"=runs/squad/pretrained-untrained ...
"""

import json
import pathlib
import sys

print(
    "| dev (1,090 questions) | steps | F1 / EM at the dev threshold | HasAns F1 | NoAns F1 "
    "| best_f1 (official thresh) | HasAns F1, always answering |"
)
print("|---|---|---|---|---|---|---|")
for arg in sys.argv[1:]:
    label, folder = arg.split("=", 1)
    m = json.loads((pathlib.Path(folder) / "metrics.json").read_text())
    s, a = m["metrics"], m["metrics_always_answering"]
    print(
        f"| {label} | {m['steps']} | {s['f1']:.2f} / {s['exact']:.2f} | {s['HasAns_f1']:.2f} "
        f"| {s['NoAns_f1']:.2f} | {s['best_f1']:.2f} ({s['best_f1_thresh']:.2f}) "
        f"| {a['HasAns_f1']:.2f} |"
    )
