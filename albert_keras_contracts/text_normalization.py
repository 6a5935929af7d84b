"""How ALBERT prepares text before SentencePiece: the one `preprocess_text` of the project.

The official `tokenization.preprocess_text(text, lower=...)` of google-research/albert, applied
to every line before the vocabulary is trained, before pretraining data is encoded and before a
GLUE or SQuAD example is encoded, in this order:

1. whitespace collapsed: `" ".join(text.strip().split())` (any Unicode whitespace);
2. accents stripped: NFKD, then every combining character (canonical combining class != 0)
   dropped, so "café" becomes "cafe";
3. lower-cased if the vocabulary is uncased (ALBERT's release is).

Where Hugging Face differs: its `AlbertTokenizer` (and XLNet's `preprocess_text`, which it
follows) also turns the LaTeX-style quotes ``` `` ``` and `''` into `"`. ALBERT's own
`preprocess_text` does not (read google-research/albert's `tokenization.py`), and the released
weights were pretrained on its ids, so neither do we: `''` stays two apostrophes. (Before text
path version 2, `albert_keras_contracts.text_path`, this module replaced them as XLNet does.)
The second half of ALBERT's text path, the post-processing of SentencePiece's pieces, is
`albert_keras_contracts.piece_split`.

`preprocess_text` is the reference, one string at a time; `preprocess_texts` is the same for a
list, fast enough for the data writer (each step one C loop over all the strings); and
`preprocess_text_tensor` the same in TensorFlow ops, for `tf.data` and Keras layers (it imports
TensorFlow when called: this module is pure Python, as the data writer's workers need).
`tests/pipelines/test_text_normalization.py` checks the three agree.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from collections.abc import Sequence

_ASCII_BYTES = bytes(range(128))
# Every character `str.split()` splits at (`str.isspace()`; the test checks the whole of
# Unicode) but the space and the line break; the non-ASCII ones are looked up in the set of a
# text's non-ASCII characters.
_ASCII_OTHER_WHITESPACE = "\t\x0b\x0c\r\x1c\x1d\x1e\x1f"
_NON_ASCII_WHITESPACE = (
    "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_NON_ASCII_WHITESPACE_SET = frozenset(_NON_ASCII_WHITESPACE)
# Every character `str.split()` (and so step 1) splits a text at.
WHITESPACE = " \n" + _ASCII_OTHER_WHITESPACE + _NON_ASCII_WHITESPACE
# Two spaces, then any more: the literal two-space prefix is searched in C (a `"  +"` or
# `" {2,}"` pattern, or repeated `str.replace("  ", " ")`, costs more on prose).
_SPACE_RUNS = re.compile("   *")


def preprocess_text(text: str, lower_case: bool = False) -> str:
    """The official ALBERT `preprocess_text` (with its defaults `remove_space=True`).

    Args:
        text: str.
        lower_case: bool. Lower-case after stripping accents (an uncased vocabulary).

    Example:
    >>> preprocess_text("  ``Café''\\tau  lait ", lower_case=True)
    "``cafe'' au lait"
    """
    text = " ".join(text.split())  # split() drops leading and trailing space, as strip() does
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.lower() if lower_case else text


def preprocess_texts(texts: Sequence[str], lower_case: bool = False) -> list[str]:
    """`[preprocess_text(t, lower_case) for t in texts]`, in a few C loops over all of them.

    Args:
        texts: list of str.
        lower_case: bool. As `preprocess_text`.

    Example:
    >>> preprocess_texts(["Café  Ÿes", "it's ''fine''"], lower_case=True)
    ['cafe yes', "it's ''fine''"]
    """
    if not texts:
        return []
    # Joined at line breaks, which step 1 removes from inside every text: no step below can
    # then reach across two texts (a decomposition, a final-sigma context).
    # The distinct non-ASCII characters, found once, tell steps 1 and 2 what to replace.
    text, non_ascii = join_collapsed(texts, with_non_ascii=True)
    if non_ascii:
        text = strip_accents(text, non_ascii - _NON_ASCII_WHITESPACE_SET)
    if lower_case:
        text = text.lower()
    return text.split("\n")


def join_collapsed(texts: Sequence[str], with_non_ascii: bool = False):
    """`"\\n".join(" ".join(t.split()) for t in texts)`, by C scans of the joined text.

    Per-text `split` and `join` make a string per word (~60% of `preprocess_texts` on prose).
    Here the texts are stripped (`str.strip()` strips the same whitespace as `split()`), joined,
    and each kind of whitespace (most prose holds none but the space) is found by one scan (or
    in the set of the text's non-ASCII characters) and replaced; runs of spaces are then cut to
    one. A text holding a line break (the joint) goes the per-text way.

    Args:
        texts: list of str.
        with_non_ascii: bool. Also return the set of non-ASCII characters of the result.

    Example:
    >>> join_collapsed([" a \\t b", "\\u3000", "c  d "])
    'a b\\n\\nc d'
    """
    text = "\n".join(map(str.strip, texts))
    if text.count("\n") != len(texts) - 1:
        text = "\n".join(" ".join(t.split()) for t in texts)
    non_ascii = set() if text.isascii() else non_ascii_characters(text)
    for char in _ASCII_OTHER_WHITESPACE:
        if char in text:
            text = text.replace(char, " ")
    for char in non_ascii & _NON_ASCII_WHITESPACE_SET:
        text = text.replace(char, " ")
    # Stripped first, so no run of spaces touches a joint.
    text = _SPACE_RUNS.sub(" ", text)
    return (text, non_ascii - _NON_ASCII_WHITESPACE_SET) if with_non_ascii else text


def non_ascii_characters(text: str) -> set[str]:
    """The distinct non-ASCII characters of `text`, by C loops even in English text.

    Example:
    >>> sorted(non_ascii_characters("naïve café"))
    ['é', 'ï']
    """
    # Deleting every ASCII byte from the UTF-8 leaves just those (whole: their bytes are all
    # >= 0x80).
    raw = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    return set(raw.decode("utf-8", "surrogatepass"))


def strip_accents(text: str, characters: set[str] | None = None) -> str:
    """NFKD, then combining characters dropped; only the non-ASCII characters are visited.

    Args:
        text: str.
        characters: set of str or None. The non-ASCII characters of `text`, if known.

    Example:
    >>> strip_accents("naïve Ångström")
    'naive Angstrom'
    """
    if characters is None:
        characters = non_ascii_characters(text)
    for char in characters:
        # Per character, as whole-text NFKD followed by dropping the marks: NFKD decomposes each
        # character alone, and its only cross-character step (reordering runs of combining
        # marks) moves only marks, which are all dropped. A result is stable under the map, so
        # the order of the replacements does not matter.
        stripped = _strip_char(char)
        if stripped != char:
            text = text.replace(char, stripped)
    return text


@functools.lru_cache(maxsize=1 << 14)
def _strip_char(char: str) -> str:
    decomposed = unicodedata.normalize("NFKD", char)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def preprocess_text_tensor(text, lower_case: bool = False):
    """`preprocess_text` of a string tensor (any shape), in TensorFlow ops (tf.data, layers).

    Equal to `preprocess_text` (tested), except where ICU's Unicode tables are of another
    version than Python's.

    Args:
        text: a `tf.string` tensor.
        lower_case: bool. As `preprocess_text`.
    """
    import tensorflow as tf
    import tensorflow_text as tf_text

    text = tf.strings.regex_replace(text, _WHITESPACE_RUNS, " ")
    text = tf.strings.regex_replace(text, "^ | $", "")
    text = tf_text.normalize_utf8(text, "NFKD")
    text = tf.strings.regex_replace(text, _combining_class(), "")
    if lower_case:
        # ICU's lower-casing ends the text at its first NUL (a C string): lower the parts
        # between NULs, as `str.lower` sees them.
        # (reduce_join drops its separator on ragged rows: each part ends in its NUL instead.)
        parts = tf.strings.split(tf.reshape(text, [-1]), "\0")
        lowered = tf.ragged.map_flat_values(
            lambda part: tf.strings.lower(part, encoding="utf-8") + "\0", parts
        )
        joined = tf.strings.regex_replace(tf.strings.reduce_join(lowered, axis=-1), "\\x00$", "")
        text = tf.reshape(joined, tf.shape(text))
    return text


# Python's `str.split()` whitespace as an RE2 class: RE2's \s is only [\t\n\f\r ], \p{Z} adds the
# Unicode spaces and separators; \v, the information separators \x1c-\x1f and NEL complete it.
_WHITESPACE_RUNS = r"[\s\x0b\x1c-\x1f\x85\p{Z}]+"


@functools.cache
def _combining_class() -> str:
    """An RE2 class of every character with a combining class != 0 (`unicodedata.combining`):
    not RE2's \\p{Mn}, which lacks some of them and holds others with class 0."""
    ranges, start, previous = [], None, None
    for code in range(sys.maxunicode + 1):
        if unicodedata.combining(chr(code)):
            if start is None:
                start = code
            elif code != previous + 1:
                ranges.append((start, previous))
                start = code
            previous = code
    ranges.append((start, previous))
    parts = (f"\\x{{{a:x}}}" + (f"-\\x{{{b:x}}}" if b > a else "") for a, b in ranges)
    return "[" + "".join(parts) + "]"
