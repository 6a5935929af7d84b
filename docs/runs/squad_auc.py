"""How well a run's no-answer score separates the questions: the ROC AUC of its null odds
(unanswerable = positive) on the dev file.

    python docs/runs/squad_auc.py runs/squad/dev-v2.0.json runs/squad/pretrained-3ep ...
"""

import json
import pathlib
import sys

from sklearn.metrics import roc_auc_score

data = json.loads(pathlib.Path(sys.argv[1]).read_text())
impossible = {
    qa["id"]: qa.get("is_impossible", False)
    for article in data["data"]
    for paragraph in article["paragraphs"]
    for qa in paragraph["qas"]
}
for folder in sys.argv[2:]:
    odds = json.loads((pathlib.Path(folder) / "null_odds.json").read_text())
    ids = sorted(odds)
    auc = roc_auc_score([impossible[q] for q in ids], [odds[q] for q in ids])
    print(f"{folder}: AUC {auc:.3f}")
