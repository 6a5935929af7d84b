"""SQuAD's text path in TensorFlow ops: pieces and the original characters each came from.

The graph twin of `albert_keras.squad.context_pieces` (normalize keeping each character's
origin, SentencePiece with byte offsets, the official digit-comma split), so an exported
question answerer reads a context in its SavedModel as `answer_questions` reads it in Python:
the same ids, and each piece's first and last original character. Step by step as there:

1. whitespace runs become one space (none at the ends), each kept non-space character is a
   unit;
2. each unit loses its accents alone (`preprocess_text_tensor` of the unit: NFKD, combining
   marks dropped), as `normalize_with_offsets` does per character;
3. the joined text is lower-cased whole (Greek final sigma), or unit by unit where that
   changes its length;
4. SentencePiece encodes it with byte offsets; a piece ending in a digit and a comma is
   replaced by the ids of `AlbertTokenizer.digit_comma_splits` (the official `encode_pieces`,
   `albert_keras_contracts.piece_split`), each part spanning its own text of the number;
5. byte offsets become characters of the normalized text, then original characters.

Everything is vectorized over a batch of texts (ragged tensors), for a `tf.function`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf

from albert_keras_contracts.piece_split import UNDERLINE as _UNDERLINE
from albert_keras_contracts.text_normalization import preprocess_text_tensor

# `str.isspace()` as an RE2 class, one character (as `text_normalization`'s runs pattern).
WHITESPACE_CHAR = r"[\s\x0b\x1c-\x1f\x85\p{Z}]"
# `bytes.lstrip()`'s whitespace, for the digit-comma re-encoding.
_ASCII_LEADING_WHITESPACE = "^[ \\t\\n\\r\\x0b\\x0c]+"


@dataclasses.dataclass(frozen=True)
class PieceTables:
    """What the digit-comma split needs to know of each vocabulary id, as constants.

    Args:
        split_row: int array. For each id, its row of `parts` (-1: the piece is not split).
        parts: tuple `(values, row_splits)` of int64 arrays. Per split piece, the ids that
            replace it less the final comma (`AlbertTokenizer.digit_comma_splits`).
        text: str array. Each piece without its `▁` marks (what it covers of the text).
        comma_id: int. The id of `","` (the last id of every replacement).
    """

    split_row: np.ndarray
    parts: tuple
    text: np.ndarray
    comma_id: int


def piece_tables(tokenizer) -> PieceTables:
    """`PieceTables` of an `AlbertTokenizer`'s vocabulary.

    Example:
    >>> from albert_keras.preprocessing import AlbertTokenizer
    >>> tables = piece_tables(AlbertTokenizer("30k-clean.model"))
    >>> int((tables.split_row >= 0).sum()) > 0, tables.text[tables.comma_id]
    (True, ',')
    """
    vocabulary = tokenizer.get_vocabulary()
    splits = tokenizer.digit_comma_splits
    split_row = np.full(len(vocabulary), -1, np.int64)
    split_row[list(splits)] = np.arange(len(splits))
    lengths = [len(ids) - 1 for ids in splits.values()]
    values = np.asarray([i for ids in splits.values() for i in ids[:-1]], np.int64)
    comma_ids = {ids[-1] for ids in splits.values()}
    return PieceTables(
        split_row=split_row,
        parts=(values, np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])),
        text=np.asarray([p.replace(_UNDERLINE, "") for p in vocabulary], object),
        comma_id=comma_ids.pop() if comma_ids else int(tokenizer.token_to_id(",")),
    )


def normalize_with_offsets(texts, lower_case: bool):
    """`context_pieces.normalize_with_offsets` of a batch of strings, in TensorFlow ops.

    Args:
        texts: 1-D `tf.string` tensor.
        lower_case: bool.

    Returns:
        `(normalized, starts, ends, is_space)`: the normalized strings (batch,); ragged
        (batch, (normalized characters)) int64 of the first and last original character of
        each; ragged (batch, (original characters)) bool, `str.isspace()` of each original one.
    """
    chars = tf.strings.unicode_split(texts, "UTF-8")
    flat, rows, nrows = chars.flat_values, chars.value_rowids(), chars.nrows()
    position = tf.range(tf.size(flat, out_type=tf.int64))
    in_text = position - tf.gather(chars.row_starts(), rows)  # the character's index in its text
    is_space = tf.strings.regex_full_match(flat, WHITESPACE_CHAR)
    joined = tf.concat([[False], rows[1:] == rows[:-1]], 0)  # same text as the one before
    run_start = is_space & ~(tf.concat([[False], is_space[:-1]], 0) & joined)
    # A whitespace run is one space unit between two non-space characters of its text.
    solid = tf.cast(~is_space, tf.int64)
    counted = tf.cumsum(solid, exclusive=True)
    before = counted - tf.gather(counted, tf.gather(chars.row_starts(), rows))
    after = tf.gather(tf.math.unsorted_segment_sum(solid, rows, nrows), rows) - before - solid
    space_unit = run_start & (before > 0) & (after > 0)
    keep = ~is_space | space_unit
    # Accents are stripped one character at a time (as context_pieces does).
    text = tf.where(space_unit, " ", preprocess_text_tensor(flat))
    last = tf.where(space_unit, _run_ends(is_space, run_start, in_text), in_text)
    unit_rows = tf.boolean_mask(rows, keep)
    units = tf.RaggedTensor.from_value_rowids(tf.boolean_mask(text, keep), unit_rows, nrows)
    normalized = tf.strings.reduce_join(units, axis=1)
    lengths = tf.strings.length(units.flat_values, unit="UTF8_CHAR")
    if lower_case:
        # The whole text, as `str.lower` (Greek final sigma), unless that changes its length:
        # then unit by unit, so each character keeps its origin.
        lowered_units = _lower(units.flat_values)
        lowered_whole = _lower(normalized)
        same = tf.equal(
            tf.strings.length(lowered_whole, unit="UTF8_CHAR"),
            tf.strings.length(normalized, unit="UTF8_CHAR"),
        )
        per_unit = tf.strings.length(lowered_units, unit="UTF8_CHAR")
        lengths = tf.where(tf.gather(same, unit_rows), lengths, per_unit)
        lowered = tf.strings.reduce_join(units.with_flat_values(lowered_units), axis=1)
        normalized = tf.where(same, lowered_whole, lowered)
    lengths = tf.cast(lengths, tf.int64)
    row_lengths = tf.math.unsorted_segment_sum(lengths, unit_rows, nrows)
    starts, ends = (
        tf.RaggedTensor.from_row_lengths(tf.repeat(tf.boolean_mask(v, keep), lengths), row_lengths)
        for v in (in_text, last)
    )
    return normalized, starts, ends, chars.with_flat_values(is_space)


def _run_ends(is_space, run_start, in_text):
    """For each character, the index (in its text) of the last character of its whitespace
    run (meaningful at the run's start)."""
    run = tf.maximum(tf.cumsum(tf.cast(run_start, tf.int64)) - 1, 0)
    size = tf.size(is_space, out_type=tf.int64) + 1
    ends = tf.math.unsorted_segment_max(tf.where(is_space, in_text, -1), run, size)
    return tf.gather(ends, run)


def _lower(text):
    """`str.lower` of a string tensor: ICU's lower-casing stops at a NUL (a C string), so the
    parts between NULs are lowered (as `preprocess_text_tensor` does)."""
    parts = tf.strings.split(text, "\0")
    lowered = tf.ragged.map_flat_values(
        lambda part: tf.strings.lower(part, encoding="utf-8") + "\0", parts
    )
    return tf.strings.regex_replace(tf.strings.reduce_join(lowered, axis=-1), "\\x00$", "")


def encode_with_offsets(texts, sentencepiece, tables: PieceTables, lower_case: bool):
    """`context_pieces.encode_contexts` of a batch of strings, in TensorFlow ops.

    Args:
        texts: 1-D `tf.string` tensor.
        sentencepiece: `tensorflow_text.SentencepieceTokenizer` of the vocabulary (int32 ids).
        tables: PieceTables of the same vocabulary.
        lower_case: bool. The tokenizer's `lowercases`.

    Returns:
        `(ids, char_starts, char_ends, is_space)`: ragged (batch, (pieces)) ids and first /
        last original character of each piece (int64), and `normalize_with_offsets`'s
        `is_space`.
    """
    normalized, starts, ends, is_space = normalize_with_offsets(texts, lower_case)
    ids, begins, stops = _split_digit_commas(normalized, sentencepiece, tables)
    # Byte offset -> character of the normalized text -> original character.
    _, char_bytes = tf.strings.unicode_decode_with_offsets(normalized, "UTF-8")
    char_bytes = tf.cast(char_bytes, tf.int64)
    size = tf.strings.length(normalized)  # bytes
    padded = char_bytes.to_tensor(default_value=tf.int64.max)

    last_byte = tf.maximum(tf.expand_dims(tf.cast(size, tf.int64), 1) - 1, 0)
    first = _character(padded, tf.minimum(begins, last_byte))
    # A piece with no text of its own (a lone "▁") sits before the next character.
    last = tf.where(stops > begins, _character(padded, tf.maximum(stops - 1, 0)), first)
    base = tf.expand_dims(starts.row_starts(), 1)
    char_starts = tf.gather(starts.flat_values, first + base)
    char_ends = tf.gather(ends.flat_values, last + base)
    return ids, char_starts, char_ends, is_space


def _character(char_bytes, byte_offsets):
    """The character holding each byte offset: `char_bytes` (batch, characters) are the
    characters' first bytes (padded with the largest int64), `byte_offsets` ragged (batch,
    (pieces))."""
    found = tf.searchsorted(char_bytes, byte_offsets.to_tensor(), side="right", out_type=tf.int64)
    return tf.RaggedTensor.from_tensor(found - 1, lengths=byte_offsets.row_lengths())


def _split_digit_commas(normalized, sentencepiece, tables: PieceTables):
    """SentencePiece ids and byte spans of normalized texts, with the official digit-comma
    split: a piece such as "▁1990," is replaced by its `PieceTables.parts` and ",", each part
    spanning its own text from the number's first byte (as `context_pieces._split_spans`:
    all of the number when the parts' texts do not spell it)."""
    ids, begins, ends = sentencepiece.tokenize_with_offsets(normalized)
    ids = tf.cast(ids, tf.int64)
    begins, ends = tf.cast(begins, tf.int64), tf.cast(ends, tf.int64)
    flat_ids, flat_begins, flat_ends = ids.flat_values, begins.flat_values, ends.flat_values
    row = tf.gather(tables.split_row, flat_ids)
    split = row >= 0
    chosen = tf.where(split)[:, 0]
    begin, end = tf.gather(flat_begins, chosen), tf.gather(flat_ends, chosen)
    surface = tf.strings.substr(
        tf.gather(normalized, tf.gather(ids.value_rowids(), chosen)), begin, end - 1 - begin
    )
    stripped = tf.strings.regex_replace(surface, _ASCII_LEADING_WHITESPACE, "")
    begin += tf.cast(tf.strings.length(surface) - tf.strings.length(stripped), tf.int64)
    values, row_splits = tables.parts
    table = tf.RaggedTensor.from_row_splits(
        tf.constant(values, tf.int64), tf.constant(row_splits, tf.int64), validate=False
    )
    part_ids = tf.gather(table, tf.gather(row, chosen))
    texts = tf.gather(tf.constant(tables.text.astype(str)), part_ids)
    exact = tf.equal(tf.strings.reduce_join(texts, axis=1), stripped)
    lengths = tf.cast(tf.strings.length(texts.flat_values), tf.int64)
    rows = part_ids.value_rowids()
    within = tf.cumsum(lengths, exclusive=True)
    within -= tf.gather(within, tf.gather(part_ids.row_starts(), rows))
    part_exact = tf.gather(exact, rows)
    part_begins = tf.gather(begin, rows) + tf.where(part_exact, within, tf.zeros_like(within))
    part_ends = tf.where(part_exact, part_begins + lengths, tf.gather(end, rows) - 1)
    parts = tf.RaggedTensor.from_value_rowids(
        tf.stack([part_ids.flat_values, part_begins, part_ends], axis=1),
        rows,
        tf.size(chosen, tf.int64),
    )
    comma = tf.stack([tf.fill(tf.shape(end), tf.constant(tables.comma_id, tf.int64)), end - 1,
                      end], axis=1)  # fmt: skip
    comma = tf.RaggedTensor.from_row_lengths(comma, tf.ones_like(end))
    # Each piece's row: itself, or (when split) its parts and the comma.
    own = tf.stack([flat_ids, flat_begins, flat_ends], axis=1)
    pool = tf.concat(
        [tf.RaggedTensor.from_row_lengths(own, tf.ones_like(flat_ids)),
         tf.concat([parts, comma], axis=1)], axis=0,
    )  # fmt: skip
    count = tf.size(flat_ids, out_type=tf.int64)
    rank = tf.cumsum(tf.cast(split, tf.int64)) - 1
    rows_of_pieces = tf.gather(pool, tf.where(split, count + rank, tf.range(count)))
    merged = tf.RaggedTensor.from_row_splits(
        rows_of_pieces.values, tf.gather(rows_of_pieces.row_splits, ids.row_splits)
    )
    return merged[:, :, 0], merged[:, :, 1], merged[:, :, 2]
