"""The official ALBERT `tokenization.preprocess_text`, in TensorFlow ops (graph, tf.data, SavedModel)."""

import functools
import sys
import unicodedata

import tensorflow as tf
import tensorflow_text as tf_text

# What Python's `str.split()` splits on: RE2's `\s` ([\t\n\f\r ]), plus the vertical tab, the
# ASCII separators \x1c-\x1f, NEL, and every Unicode space and line/paragraph separator (\p{Z}).
_WHITESPACE = r"[\s\x0b\x1c-\x1f\x85\p{Z}]+"


def preprocess_text(text: tf.Tensor, lowercase: bool = True) -> tf.Tensor:
    """Normalizes strings as the official `preprocess_text(remove_space=True, lower=lowercase)`.

    In order, as the official code: whitespace runs collapse to one space and the ends are
    stripped; ``` `` ``` and `''` become `"`; NFKD, then combining marks (accents) dropped;
    lower-cased if `lowercase`. Pure TensorFlow / tf-text ops, so it runs in a graph, in
    `tf.data` and in an exported SavedModel.

    Args:
        text: string `tf.Tensor` of any shape (or a Python string / list of strings).
        lowercase: bool. Lower-case last (ALBERT's release vocabulary is uncased).

    Returns:
        A string `tf.Tensor` of the same shape.

    Example:
    >>> preprocess_text(tf.constant(["  Caf\u00e9 ``ol\u00e9''  "])).numpy()
    array([b'cafe "ole"'], dtype=object)
    """
    text = tf.convert_to_tensor(text, tf.string)
    text = tf.strings.strip(tf.strings.regex_replace(text, _WHITESPACE, " "))
    text = tf.strings.regex_replace(text, "``|''", '"')
    text = tf_text.normalize_utf8(text, "NFKD")
    text = tf.strings.regex_replace(text, _combining_class(), "")
    if lowercase:
        text = tf.strings.lower(text, encoding="utf-8")
    return text


@functools.lru_cache(maxsize=1)
def _combining_class() -> str:
    """An RE2 class of exactly the characters the official code drops: `unicodedata.combining`.

    Not `\\p{Mn}`: ~1,000 nonspacing marks have combining class 0 (Indic vowel signs, for
    example), which the official code keeps; RE2 has no property for the class itself. Built
    from Python's own Unicode tables (~0.3 s, once), so both sides use the same Unicode version.
    """
    ranges = []
    for code in range(sys.maxunicode + 1):
        if unicodedata.combining(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "[" + "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in ranges) + "]"
