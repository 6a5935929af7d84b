"""F1 of SQuAD v1.1 runs on the "number" questions (when / what year / how many / how much /
how long / what percentage / in what year) against the rest, the share of answers with a digit,
and the mean answer length in words, as docs/squad.md reports them.

python docs/runs/squad_by_type.py DEV-v1.1.json RUN_DIR ...   (RUN_DIR/predictions.json)
"""

import json
import pathlib
import re
import sys

from albert_keras.squad.squad_metrics import f1_score

NUMBER = re.compile(r"\s*(when|what year|how many|how much|in what year|what percentage|how long)")
data = json.loads(pathlib.Path(sys.argv[1]).read_text())["data"]
questions = [
    (qa["id"], qa["question"], [a["text"] for a in qa["answers"]])
    for article in data
    for paragraph in article["paragraphs"]
    for qa in paragraph["qas"]
]
for run in sys.argv[2:]:
    predictions = json.loads(pathlib.Path(run, "predictions.json").read_text())
    parts = []
    for kind in (True, False):
        chosen = [q for q in questions if bool(NUMBER.match(q[1].lower())) == kind]
        f1 = 100 * sum(
            max(f1_score(predictions[i], g, "1.1") for g in golds) for i, _, golds in chosen
        )
        digits = 100 * sum(bool(re.search(r"\d", predictions[i])) for i, _, _ in chosen)
        parts.append(
            f"n={len(chosen)} F1 {f1 / len(chosen):.1f} (digit {digits / len(chosen):.0f}%)"
        )
    words = sum(len(predictions[i].split()) for i, _, _ in questions) / len(questions)
    print(f"{run}: number questions {parts[0]}; others {parts[1]}; mean words {words:.1f}")
