"""GLUE-layout TSVs written at test time from public-domain book sentences (tests/data).

GLUE's own files carry mixed licences (CoLA is "research use"), so none is committed: the tests
get the five tasks of ../shared/data/glue in the layout of GLUE's download (CoLA without a header,
MRPC's `Quality` columns, STS-B's ten columns), with labels that follow a rule a tiny model can
learn. `write_glue_tasks(root, sentences) -> {(task, split): label counts}`.
"""

import pathlib
import random

ROWS = {"train": 2000, "dev": 300}
# SST-2's signal: the verdict word at the end of each review (a tiny model learns it in ~200 steps).
POSITIVE = ["charming", "gorgeous", "witty", "moving", "delightful", "superb"]
NEGATIVE = ["dull", "lifeless", "tedious", "clumsy", "dreary", "hollow"]
STSB_HEADER = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"  # fmt: skip


def _clean(sentence: str) -> str:
    # As GLUE's files have them: no tab inside a field, straight quotes left bare (QUOTE_NONE).
    sentence = sentence.replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(sentence.replace("\t", " ").split())


def _cola(rng, sentences, rows):
    lines, counts = [], {"0": 0, "1": 0}
    for i in range(rows):
        words = sentences[i % len(sentences)].split()
        label = rng.random() < 0.7  # CoLA is ~70% acceptable
        if not label:
            rng.shuffle(words)  # word salad: the unacceptable ones
        counts[str(int(label))] += 1
        lines.append(f"gut{i % 7:02d}\t{int(label)}\t{'' if label else '*'}\t{' '.join(words)}")
    return lines, counts


def _sst2(rng, sentences, rows):
    lines, counts = ["sentence\tlabel"], {"0": 0, "1": 0}
    for i in range(rows):
        label = int(rng.random() < 0.55)
        verdict = rng.choice(POSITIVE if label else NEGATIVE)
        text = " ".join(sentences[i % len(sentences)].lower().split()[:12])
        lines.append(f"{text} , and it was {verdict} . \t{label}")
        counts[str(label)] += 1
    return lines, counts


def _mrpc(rng, sentences, rows):
    lines, counts = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"], {"0": 0, "1": 0}
    for i in range(rows):
        first = sentences[i % len(sentences)]
        label = int(rng.random() < 0.67)
        words = first.split()
        other = sentences[(i * 7 + 3) % len(sentences)]
        second = " ".join(words[1:] + words[:1]) if label else other
        lines.append(f"{label}\t{100000 + 2 * i}\t{100001 + 2 * i}\t{first}\t{second}")
        counts[str(label)] += 1
    return lines, counts


def _rte(rng, sentences, rows):
    lines = ["index\tsentence1\tsentence2\tlabel"]
    counts = {"entailment": 0, "not_entailment": 0}
    for i in range(rows):
        premise = sentences[i % len(sentences)]
        entails = rng.random() < 0.5
        words = premise.split()
        hypothesis = (
            " ".join(words[: max(3, len(words) // 2)])
            if entails
            else sentences[(i * 11 + 5) % len(sentences)]
        )
        label = "entailment" if entails else "not_entailment"
        lines.append(f"{i}\t{premise}\t{hypothesis}\t{label}")
        counts[label] += 1
    return lines, counts


def _stsb(rng, sentences, rows):
    lines = [STSB_HEADER]
    for i in range(rows):
        first = sentences[i % len(sentences)]
        words = first.split()
        kept = rng.randint(0, len(words))  # 0: an unrelated sentence (score 0), all: 5
        other = sentences[(i * 13 + 1) % len(sentences)].split()
        second = " ".join(words[:kept] + other[kept:]) if kept else " ".join(other)
        score = 5.0 * kept / len(words)
        if i < 2:  # GLUE's range exactly: one pair of identical sentences, one unrelated
            second, score = (first, 5.0) if i == 0 else (" ".join(other), 0.0)
        lines.append(f"{i}\tmain-books\tgutenberg\t2026\t{i:04d}\tnone\tnone\t{first}\t{second}\t"
                     f"{score:.3f}")  # fmt: skip
    return lines, None


TASKS = {"CoLA": _cola, "SST-2": _sst2, "MRPC": _mrpc, "RTE": _rte, "STS-B": _stsb}


def write_glue_tasks(root: pathlib.Path, sentences: list[str], rows: dict = ROWS) -> dict:
    """Writes root/TASK/{train,dev}.tsv for the five tasks; returns {(task, split): (rows,
    label counts or None)}. Each file draws from its own seeded generator and its own part of
    `sentences` (train from the front, dev from the back), so the splits share no text."""
    sentences = [s for s in map(_clean, sentences) if len(s.split()) >= 4]
    half = len(sentences) // 2
    written = {}
    for task, make in TASKS.items():
        (root / task).mkdir(parents=True, exist_ok=True)
        for split, part in (("train", sentences[:half]), ("dev", sentences[half:])):
            rng = random.Random(f"{task}/{split}")
            lines, counts = make(rng, part, rows[split])
            text = "".join(line + "\n" for line in lines)
            (root / task / f"{split}.tsv").write_text(text, encoding="utf-8")
            written[task, split] = (rows[split], counts)
    return written
