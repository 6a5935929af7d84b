"""Cloze questions from unlabelled text, in SQuAD v1.1 JSON, for span-selection pre-training.

python docs/runs/squad_cloze.py OUT.json --text A.txt[=N][,B.txt[=N]...] [--per_sentence K] [--seed S]

(N: at most N questions from that file, drawn evenly over its paragraphs; K: spans per sentence)

The tiny run of docs/squad.md: a backbone that sits at 15% MLM accuracy has not learned to match
a question's words with the passage, and 1,583 real questions are too few to teach it. Span
selection pre-training (Glass et al. 2020) and cloze questions (Lewis et al. 2019) teach that
skill from unlabelled text: take a sentence of a paragraph, blank out a span (a number, a run of
capitalized words, or else 1-3 content words), and ask for it with a wh-word in front of the
sentence's other words, some of them dropped ("noisy cloze", so exact copying is not enough).
The answer is the span's place in the paragraph. Only the text given is read: for the tiny run,
the training books and the SQuAD *training* articles' contexts, never a dev article.

Paragraphs are blank-line separated (hard-wrapped lines are joined); those of 25 to
`--max_words` words are used. Numbers of 1000-2099 are asked with "when", other numbers with "how many", capitalized
runs with "who" or "what" (at random), other spans with "what".
"""

import argparse
import json
import random
import re

SENTENCE = re.compile(r"[^.!?]+[.!?]+[\"')\]]*\s*")
NUMBER = re.compile(r"\b\d[\d,.]*\d\b|\b\d\b")
CAPITALIZED = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][a-z]+)*")
WORD = re.compile(r"[A-Za-z]+")
_STOPWORD_TEXT = """
a an the of to in on at by for with from and or but is was were are be been being it its he she
they them his her their this that these those which who whom what as not no so had has have do
did does i you we my me our your will would shall should can could may might must there here
then than when where while if into upon out up down all any some
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def paragraphs(path, max_words):
    """Yields the file's blank-line separated paragraphs of 25-max_words words, lines joined."""
    with open(path, encoding="utf-8-sig") as f:
        blocks = re.split(r"\n\s*\n", f.read())
    for block in blocks:
        text = " ".join(line.strip() for line in block.splitlines() if line.strip())
        if 25 <= len(text.split()) <= max_words and not text.isupper():
            yield text


def candidates(sentence, offset):
    """(start, end, wh) spans of a sentence (starting at `offset` in its paragraph)."""
    spans = []
    for m in NUMBER.finditer(sentence):
        value = m.group().replace(",", "")
        wh = "when" if value.isdigit() and 1000 <= int(value) < 2100 else "how many"
        spans.append((m.start(), m.end(), wh))
    first_word = WORD.search(sentence)
    for m in CAPITALIZED.finditer(sentence):
        if first_word and m.start() == first_word.start():
            continue  # a sentence's first word is capitalized anyway
        spans.append((m.start(), m.end(), None))
    if not spans:
        words = [m for m in WORD.finditer(sentence) if m.group().lower() not in STOPWORDS]
        if words:
            i = random.randrange(len(words))
            j = min(len(words), i + random.randint(1, 3))
            # Only consecutive content words: stop at the first gap holding other text.
            end = i + 1
            while end < j and sentence[words[end - 1].end() : words[end].start()].strip() == "":
                end += 1
            spans.append((words[i].start(), words[end - 1].end(), "what"))
    return [(offset + s, offset + e, wh or random.choice(("who", "what"))) for s, e, wh in spans]


def question(sentence_text, answer_start, answer_end, wh, drop):
    """The wh-word, then the sentence's other words (each dropped with probability `drop`)."""
    before = sentence_text[:answer_start].split()
    after = sentence_text[answer_end:].split()
    words = [w.strip(".,;:!?\"'()[]") for w in before + after]
    kept = [w for w in words if w and random.random() >= drop][:24]
    return f"{wh.capitalize()} {' '.join(kept)}?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--text", required=True, help="comma-separated text files")
    parser.add_argument("--per_sentence", type=int, default=1)
    parser.add_argument("--drop", type=float, default=0.2, help="word-drop probability")
    parser.add_argument("--max_words", type=int, default=160)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    articles = []
    for spec in args.text.split(","):
        path, _, cap = spec.partition("=")
        items = []
        for p, context in enumerate(paragraphs(path, args.max_words)):
            qas = []
            for m in SENTENCE.finditer(context):
                sentence = m.group()
                if not 6 <= len(sentence.split()) <= 40:
                    continue
                spans = candidates(sentence, m.start())
                for start, end, wh in random.sample(spans, min(args.per_sentence, len(spans))):
                    s, e = start - m.start(), end - m.start()
                    qas.append(
                        {
                            "id": f"cloze-{len(articles)}-{p}-{len(qas)}",
                            "question": question(sentence, s, e, wh, args.drop),
                            "answers": [{"text": context[start:end], "answer_start": start}],
                        }
                    )
            if qas:
                items.append({"context": context, "qas": qas})
        if cap:  # at most `cap` questions, drawn evenly over the file's paragraphs
            random.shuffle(items)
            kept, total = [], 0
            for item in items:
                if total + len(item["qas"]) <= int(cap):
                    kept.append(item)
                    total += len(item["qas"])
            items = kept
        articles.append({"title": path, "paragraphs": items})
    data = articles
    total = sum(len(p["qas"]) for a in data for p in a["paragraphs"])
    with open(args.output, "w") as f:
        json.dump({"version": "1.1", "data": data}, f)
    for article in data:
        n = sum(len(p["qas"]) for p in article["paragraphs"])
        print(f"{article['title']}: {len(article['paragraphs'])} paragraphs, {n} questions")
    print(f"{total} questions in {args.output}")


if __name__ == "__main__":
    main()
