"""`albert_keras_contracts.text_normalization` against the official ALBERT `preprocess_text` rule."""

import random
import subprocess
import sys
import unicodedata

import tensorflow as tf

from albert_keras_contracts import text_normalization
from albert_keras_contracts.text_normalization import (
    join_collapsed,
    non_ascii_characters,
    preprocess_text,
    preprocess_text_tensor,
    preprocess_texts,
    strip_accents,
)


def official(text, lower=False):
    """google-research/albert `tokenization.preprocess_text(remove_space=True, lower=lower)`."""
    text = " ".join(text.strip().split())  # ALBERT's keeps `` and '' (XLNet's maps them to ")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.lower() if lower else text


# Where the project's three copies disagreed before they became one: only the GLUE one collapsed
# whitespace and mapped the quotes; the GLUE one dropped \p{Mn} (U+034F, class 0, is kept by the
# official rule; U+1D165, an Mc of class 216, is dropped) and missed some of Python's whitespace.
DIFFERING = [
    "``Quoted'' text",
    "  two  spaces\tand a tab  ",
    "a\x0bvertical\x1cseparator\x85next",
    "no\u00a0break\u2009thin\u3000ideographic",
    "grapheme\u034fjoiner",
    "stem\U0001d165mark",
    "Café Crème brûlée NAÏVE ﬁ ①",
    "it's ''fine'' and ``this``",
    "",
    "   ",
]


def test_strings_where_the_old_copies_differed():
    assert preprocess_text("``Quoted''  text\t") == "``Quoted'' text"
    assert preprocess_text("Café  NAÏVE", lower_case=True) == "cafe naive"
    assert preprocess_text("grapheme\u034fjoiner") == "grapheme\u034fjoiner"
    assert preprocess_text("stem\U0001d165mark") == "stemmark"
    assert preprocess_text("a\x1cb\x85c") == "a b c"
    for lower in (False, True):
        want = [official(t, lower) for t in DIFFERING]
        assert [preprocess_text(t, lower) for t in DIFFERING] == want
        assert preprocess_texts(DIFFERING, lower) == want


def test_batch_version_equals_the_reference_on_random_text():
    """Joined-text processing cannot reach across texts: quotes, marks, spaces, final sigma."""
    ranges = [(0x20, 0x7F), (0xA0, 0x500), (0x1E00, 0x1F00), (0x300, 0x370), (0x2000, 0x2100)]
    ranges += [(0xAC00, 0xAC40), (0xFB00, 0xFB10), (0x3A3, 0x3A4), (0x9, 0xE), (0x1C, 0x20)]
    alphabet = [chr(i) for low, high in ranges for i in range(low, high)] + ["``", "''"] * 20
    rng = random.Random(0)
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(3000)]
    texts += ["ΟΔΟΣ Σ", "A\u0301\u0323b", "'", "'", "`", "`", "x\n\ny"]
    for lower in (False, True):
        assert preprocess_texts(texts, lower) == [official(t, lower) for t in texts]
    assert strip_accents("naïve Ångström") == "naive Angstrom"
    assert preprocess_texts([]) == []


def test_whitespace_tables_are_every_whitespace_character_of_python():
    everything = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    listed = text_normalization._ASCII_OTHER_WHITESPACE + text_normalization._NON_ASCII_WHITESPACE
    assert len(listed) == len(set(listed)) == len(everything) - 2
    assert set(listed) | {" ", "\n"} == everything
    assert text_normalization._ASCII_OTHER_WHITESPACE.isascii()
    assert not any(c.isascii() for c in text_normalization._NON_ASCII_WHITESPACE)
    assert len(text_normalization.WHITESPACE) == len(everything)
    assert set(text_normalization.WHITESPACE) == everything


def test_joined_whitespace_collapse_equals_per_text_split():
    """`join_collapsed` works on the joined text; a text holding a line break goes per text."""
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 10]
    alphabet = spaces * 2 + list("ab´é`'Σ") + ["  ", "   "]
    rng = random.Random(1)
    for _ in range(2000):
        texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 12))) for _ in range(4)]
        if rng.random() < 0.2:
            texts[rng.randrange(4)] += "\n" + rng.choice(alphabet)
        want = [" ".join(t.split()) for t in texts]
        assert join_collapsed(texts) == "\n".join(want), texts
        for lower in (False, True):
            assert preprocess_texts(texts, lower) == [official(t, lower) for t in texts]
    assert join_collapsed(["  x\u3000\u3000y\t", "", "\x85"]) == "x y\n\n"
    assert join_collapsed(["é\xa0ï ", "\u2028ü"], with_non_ascii=True) == (
        "é ï\nü",
        {"é", "ï", "ü"},
    )


def test_non_ascii_characters_and_accents_of_a_known_set():
    text = "naïve Ångström, ﬁne 𝔘 ① café"
    assert non_ascii_characters(text) == {c for c in text if not c.isascii()}
    assert non_ascii_characters("plain ASCII") == set()
    assert strip_accents(text, non_ascii_characters(text)) == strip_accents(text)
    assert strip_accents(text) == official(text)


def test_tensorflow_version_equals_the_reference():
    texts = DIFFERING + ["Ångström ﬁ ligature ①", "already clean", "ÉCOLE", "ΟΔΟΣ Σ"]
    for lower in (False, True):
        got = preprocess_text_tensor(tf.constant(texts), lower_case=lower).numpy()
        assert [t.decode() for t in got] == [official(t, lower) for t in texts]


def test_importing_it_does_not_import_tensorflow():
    code = (
        "import sys, albert_keras_contracts.text_normalization, albert_keras_contracts.special_tokens, "
        "albert_keras_contracts.atomic_write, albert_keras_contracts.record_format, pipelines.tokenization; "
        "print('tensorflow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
