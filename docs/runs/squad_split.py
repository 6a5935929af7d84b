"""Split the shared SQuAD 2.0 articles for the tiny run (docs/squad.md, "A tiny run").

python docs/runs/squad_split.py ../shared/data/squad/squad-v2.0-dev-part.json OUT_DIR

By article, every 4th article is dev (the rest train); training questions keep their first gold
answer (the official v1 reader takes one). Writes OUT_DIR/{train,dev}-v2.0.json, the v1.1 form
of both (answerable questions only, no `is_impossible`, version "1.1"), and
OUT_DIR/train-contexts.txt: the training articles' context paragraphs (blank line between
paragraphs, two between articles) for task-adaptive pretraining. Dev text is never written there.
"""

import json
import sys


def main(source, out):
    with open(source) as f:
        data = json.load(f)["data"]
    dev = [a for i, a in enumerate(data) if i % 4 == 3]
    train = json.loads(json.dumps([a for i, a in enumerate(data) if i % 4 != 3]))
    for article in train:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["answers"] = qa["answers"][:1]
    for name, part in (("train", train), ("dev", dev)):
        with open(f"{out}/{name}-v2.0.json", "w") as f:
            json.dump({"version": "v2.0", "data": part}, f)
        v1 = []
        for article in part:
            paragraphs = []
            for paragraph in article["paragraphs"]:
                qas = [
                    {"id": qa["id"], "question": qa["question"], "answers": qa["answers"]}
                    for qa in paragraph["qas"]
                    if not qa.get("is_impossible") and qa["answers"]
                ]
                if qas:
                    paragraphs.append({"context": paragraph["context"], "qas": qas})
            v1.append({"title": article["title"], "paragraphs": paragraphs})
        with open(f"{out}/{name}-v1.1.json", "w") as f:
            json.dump({"version": "1.1", "data": v1}, f)
        count = lambda d: sum(len(p["qas"]) for a in d for p in a["paragraphs"])
        print(
            f"{name}: {len(part)} articles, {count(part)} questions, {count(v1)} answerable "
            f"({', '.join(a['title'] for a in part)})"
        )
    with open(f"{out}/train-contexts.txt", "w") as f:
        f.write("\n\n\n".join("\n\n".join(p["context"] for p in a["paragraphs"]) for a in train))
        f.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
