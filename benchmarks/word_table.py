"""`WordTable.number` against `str.split()` and a dict, numbering the words of the input.

    .venv/bin/python benchmarks/word_table.py [--input 'corpus/*.txt'] [--rounds 7]

The sentences of the input (as the writer reads them) are joined in batches of `--batch`
sentences, as the word cache joins them, and every word of every batch is numbered, from an
empty table each round (as a worker starts): by `WordTable` and by `str.split()` with a dict
numbering new words. Prints the median CPU nanoseconds per word of each and the median of the
per-round ratios (the two alternate within a round).
"""

import argparse
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


class _DictNumbers(dict):
    def __missing__(self, word):
        number = self[word] = len(self)
        return number


def split_and_dict(texts: list[str]) -> None:
    numbers = _DictNumbers()
    for text in texts:
        words = text.split()
        np.fromiter(map(numbers.__getitem__, words), np.int64, len(words))


def word_table(texts: list[str]) -> None:
    from pipelines.word_table import WordTable

    table = WordTable()
    for text in texts:
        table.number(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default=str(DATA / "corpus/gutenberg/[0-9]*.txt"))
    parser.add_argument("--batch", type=int, default=20000, help="Sentences per batch.")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from pipelines.documents import iter_documents

    sentences = [s for document in iter_documents(args.input) for s in document]
    texts = [
        " \x00 ".join(sentences[i : i + args.batch]) for i in range(0, len(sentences), args.batch)
    ]
    words = sum(len(text.split()) for text in texts)
    seconds = {"str.split() and a dict": [], "WordTable": []}
    for _ in range(args.rounds):
        for name, run in zip(seconds, (split_and_dict, word_table)):
            started = time.process_time()
            run(texts)
            seconds[name].append(time.process_time() - started)
    print(f"{len(sentences):,} sentences, {words:,} words, {len(texts)} batches")
    for name, values in seconds.items():
        print(f"  {name:24} {np.median(values) / words * 1e9:6.0f} ns a word (median)")
    ratios = np.array(seconds["str.split() and a dict"]) / np.array(seconds["WordTable"])
    print(f"  WordTable's speed-up, median of paired rounds: {np.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
