"""`WordTable`: the same words and numbers as `str.split()` and a dict, over several calls."""

import random

import numpy as np

from pipelines import word_table
from pipelines.text_normalization import WHITESPACE
from pipelines.word_table import WordTable


def check_calls(texts):
    """Each call numbers every word of `str.split()` by the words the calls listed as new so
    far: each distinct word once, in the order first seen."""
    table, words = WordTable(), []
    for text in texts:
        numbers, new = table.number(text)
        split = text.split()
        assert numbers.dtype == np.int64 and len(numbers) == len(split)
        known = set(words)
        expected_new = list(dict.fromkeys(w for w in split if w not in known))
        assert new == expected_new
        words += new
        assert len(table) == len(words) == len(set(words))
        assert [words[n] for n in numbers.tolist()] == split
    return table


def test_tricky_words_and_every_whitespace_character():
    # Each whitespace character of Python's str.split() alone between words, in runs, at the
    # ends; words of 1-3-byte characters and 4-byte ones, a lone surrogate (as
    # `errors="surrogateescape"` text holds), NUL, and words of 7-9, 15-17 and 300 bytes: the
    # two-uint64 keys' edges and the long-word path.
    words = ["a", "ab", "é", "日本", "😀x", "\udc80y", "\x00", "\x00\x00", "a\x00", "ß" * 4]
    words += ["x" * n for n in (7, 8, 9, 15, 16, 17, 300)]
    words += ["x" * (n - 1) + "y" for n in (1, 8, 9, 15, 16, 17)]
    words += ["y" + "x" * (n - 1) for n in (8, 9, 16, 17)]
    words += ["é" * 8, "é" * 9, "é" * 8 + "a", "a" + "é" * 8, "日" * 5, "日" * 6, "abc" * 6]
    texts = [sep.join(words) for sep in WHITESPACE]
    texts += [sep + "the cat" + sep * 3 + "the" + sep for sep in WHITESPACE]
    texts += ["", " ", "\u3000\x85", "a"]
    check_calls(texts)
    check_calls(["".join(texts)])


def test_fuzzed_texts_many_calls_and_growth():
    """Random texts over an alphabet of whitespace, ASCII, Latin-1, CJK, emoji and NUL: the
    table grows from 1,024 cells past 8,192 distinct words across the calls."""
    rng = random.Random(0)
    alphabet = list(WHITESPACE) + list("abcdefghij") * 8 + list("éüßΣ日本😀") + ["\x00"]
    texts = []
    for _ in range(60):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 3000)))
        texts.append(text)
    table = check_calls(texts)
    assert len(table) > 8192


def test_words_a_chunk_at_a_time(monkeypatch):
    """A text is numbered a chunk of words at a time: chunks of 7 words give the same."""
    monkeypatch.setattr(word_table, "_CHUNK_WORDS", 7)
    rng = random.Random(1)
    alphabet = list(" \t\u3000") * 3 + list("abcdé日")
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 500))) for _ in range(20)]
    check_calls(texts + ["x " * 7, "x " * 8 + "y", " ".join("z" * n for n in range(1, 40))])


def test_words_in_one_probe_chain_are_told_apart(monkeypatch):
    """Every key sent to the same first cell: only the exact comparison of bytes and lengths
    tells words apart (NUL runs of different lengths share their padded bytes)."""
    monkeypatch.setattr(WordTable, "_home", lambda self, low, *_: np.zeros(len(low), np.int64))
    words = ["\x00" * n for n in range(1, 17)] + ["a" + "\x00" * n for n in range(16)]
    words += ["x" * n for n in range(1, 17)]
    words += ["x" * 8 + end * n for n in range(1, 9) for end in "yz"]
    words += ["\x00" * 17, "\x01" + "\x00" * 16, "z" * 20, "z" * 21]  # keys of serial numbers
    check_calls([" ".join(words), " ".join(reversed(words)) + " new"])


def test_clear_forgets_every_word():
    table = WordTable()
    assert table.number("b a b")[1] == ["b", "a"]
    table.clear()
    assert len(table) == 0
    numbers, new = table.number("a x" * 2 + " " + "y" * 40)
    assert numbers.tolist() == [0, 1, 2, 3] and new == ["a", "xa", "x", "y" * 40]
