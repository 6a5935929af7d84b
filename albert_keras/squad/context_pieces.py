"""A context's SentencePiece pieces, each with the span of original characters it came from.

SQuAD reads text through the same `AlbertTokenizer` as GLUE and serving (one text path): the
normalization runs here in Python so that each character keeps its origin (the result equals the
tokenizer's TensorFlow normalization), then the tokenizer's own SentencePiece op encodes it and
gives each piece's byte span (`AlbertTokenizer.encode_normalized_with_offsets`); the official
digit-comma split replaces a piece by the ids of `AlbertTokenizer.digit_comma_splits` (the one
table, `albert_keras_contracts.piece_split`). The ids equal `tokenizer(text)` on every shared
SQuAD dev text (tests/squad/test_squad_text_path.py). Whole texts are encoded, so
SentencePiece's context-dependent ties (`uhhhh` alone vs in a sentence, issue #30) cannot differ
between the two.

The official `squad_utils` recovers this alignment after the fact: it joins the pieces back into
a string and aligns that to the context with a banded longest-common-subsequence in Python (and
drops the question on a "MISMATCH"). We keep the alignment while normalizing instead: each
character of the normalized text remembers the original characters it came from, and
SentencePiece reports the byte span of each piece in its input. The result is the same
`tok_start_to_orig_index` / `tok_end_to_orig_index` the official code builds, exact by
construction and without the quadratic search.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from albert_keras_contracts.piece_split import UNDERLINE as _UNDERLINE
from albert_keras_contracts.text_normalization import preprocess_texts


@dataclasses.dataclass(frozen=True)
class ContextPieces:
    """A text as SentencePiece ids, and where each piece lies in the original text.

    Args:
        ids: int array (pieces,). SentencePiece ids.
        pieces: list of str. The pieces.
        char_starts: int array (pieces,). The first original character of each piece (for a
            piece that starts a word, the whitespace before it: trimmed when answers are cut).
        char_ends: int array (pieces,). The last original character of each piece (inclusive).
    """

    ids: np.ndarray
    pieces: list[str]
    char_starts: np.ndarray
    char_ends: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def piece_span(self, char_start: int, char_end: int) -> tuple[int, int]:
        """The first and last piece covering original characters `char_start..char_end`
        (inclusive); a character no piece covers (dropped whitespace) moves inward, as the
        official `_convert_index`."""
        first = int(np.searchsorted(self.char_ends, char_start, side="left"))
        last = int(np.searchsorted(self.char_starts, char_end, side="right")) - 1
        return min(first, len(self) - 1), max(last, 0)


def normalize_with_offsets(text: str, lower_case: bool) -> tuple[str, np.ndarray, np.ndarray]:
    """The official `preprocess_text(text, lower=lower_case)`, keeping for each output character
    the first and last original character it came from.

    The official steps: whitespace runs become one space (ends trimmed), then NFKD with
    combining marks dropped, then lower-casing. Accents are stripped one character at a time by
    the normalization pretraining and GLUE use (`albert_keras_contracts.text_normalization`);
    whitespace runs span several characters and are handled here; lower-casing runs on the
    whole text. The result equals `preprocess_text(text, lower_case)` (tests check it on every
    shared SQuAD text).

    Returns:
        `(normalized, starts, ends)`, `starts[k]..ends[k]` the original characters of
        `normalized[k]`.

    Example:
    >>> normalize_with_offsets("  Café ``x''", lower_case=True)[0]
    "cafe ``x''"
    """
    # 1. Whitespace runs -> one space. Units: (text, first, last).
    units, index = [], 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            end = index
            while end + 1 < len(text) and text[end + 1].isspace():
                end += 1
            if units and end + 1 < len(text):  # not leading, not trailing
                units.append((" ", index, end))
            index = end + 1
        else:
            units.append((char, index, index))
            index += 1
    # 2. Accents, per character, by the shared normalization (a space unit stays a space).
    chars = [unit[0] for unit in units]
    stripped = preprocess_texts(chars, lower_case=False)
    pieces = [" " if char == " " else out for char, out in zip(chars, stripped)]
    # 3. Case on the whole text, as official (Greek final sigma depends on the next letter);
    # per piece only if lower-casing changed a length (then the whole-text map is unknown).
    if lower_case:
        joined = "".join(pieces).lower()
        if len(joined) == sum(len(p) for p in pieces):
            lowered, k = [], 0
            for piece in pieces:
                lowered.append(joined[k : k + len(piece)])
                k += len(piece)
            pieces = lowered
        else:
            pieces = [piece.lower() for piece in pieces]
    starts, ends = [], []
    for (_, first, last), out in zip(units, pieces):
        starts.extend([first] * len(out))
        ends.extend([last] * len(out))
    return "".join(pieces), np.asarray(starts, np.int64), np.asarray(ends, np.int64)


def encode_context(tokenizer, text: str) -> ContextPieces:
    """Normalizes `text`, encodes it with the tokenizer's SentencePiece, maps each piece back.

    Pieces are split as the official `tokenization.encode_pieces`: a piece ending in a digit
    and a comma ("▁1990,") is replaced by the pieces of its text without the comma, then ","
    (`albert_keras_contracts.piece_split`).

    Args:
        tokenizer: `AlbertTokenizer`. Its vocabulary and case rule (`lowercases`).
        text: str. The original context.

    Returns:
        ContextPieces.

    Example:
    >>> from albert_keras.preprocessing import AlbertTokenizer
    >>> context = encode_context(AlbertTokenizer("30k-clean.model"), "Born in 1990, Zoë")
    >>> context.pieces
    ['▁born', '▁in', '▁1990', ',', '▁zoe']
    >>> [int(i) for i in context.char_starts], [int(i) for i in context.char_ends]
    ([0, 4, 8, 12, 13], [3, 6, 11, 12, 16])
    """
    return encode_contexts(tokenizer, [text])[0]


def encode_contexts(tokenizer, texts: list[str]) -> list[ContextPieces]:
    """`encode_context` of many texts, in one call of the SentencePiece op.

    Args:
        tokenizer: `AlbertTokenizer`.
        texts: list of str.

    Returns:
        list of ContextPieces, one per text.
    """
    normalized = [normalize_with_offsets(text, tokenizer.lowercases) for text in texts]
    spans = _split_pieces(tokenizer, [norm for norm, _, _ in normalized])
    return [
        _context_pieces(norm, starts, ends, text_spans)
        for (norm, starts, ends), text_spans in zip(normalized, spans)
    ]


def encode_texts(tokenizer, texts: list[str]) -> list[list[int]]:
    """Questions' ids: normalized and split as contexts, without the alignment.

    Args:
        tokenizer: `AlbertTokenizer`.
        texts: list of str.

    Returns:
        list of lists of int ids.
    """
    normalized = [normalize_with_offsets(text, tokenizer.lowercases)[0] for text in texts]
    return [[i for i, _, _, _ in spans] for spans in _split_pieces(tokenizer, normalized)]


def _context_pieces(normalized: str, starts, ends, spans) -> ContextPieces:
    data_length = len(normalized.encode("utf-8"))
    # Byte offset -> character index in `normalized`.
    byte_to_char = np.repeat(
        np.arange(len(normalized)), [len(c.encode("utf-8")) for c in normalized]
    )
    char_starts, char_ends = [], []
    for _, _, begin, end in spans:
        if end > begin:
            first, last = byte_to_char[begin], byte_to_char[end - 1]
        else:  # a piece with no text of its own (a lone "▁"): sits before the next character
            first = last = byte_to_char[min(begin, data_length - 1)] if data_length else 0
        char_starts.append(starts[first] if len(starts) else 0)
        char_ends.append(ends[last] if len(ends) else 0)
    return ContextPieces(
        ids=np.asarray([i for i, _, _, _ in spans], np.int32),
        pieces=[piece for _, piece, _, _ in spans],
        char_starts=np.asarray(char_starts, np.int64),
        char_ends=np.asarray(char_ends, np.int64),
    )


def _split_pieces(tokenizer, normalized: list[str]) -> list[list[tuple[int, str, int, int]]]:
    """Per text, `(id, piece, byte begin, byte end)` of each piece, after the official
    digit-comma split (`tokenizer.digit_comma_splits`, the ids the layer's `tokenize` uses)."""
    vocabulary = tokenizer.get_vocabulary()
    splits = tokenizer.digit_comma_splits
    encoded = tokenizer.encode_normalized_with_offsets(normalized)
    datas = [text.encode("utf-8") for text in normalized]
    result = []
    for k, (ids, begins, ends) in enumerate(encoded):
        spans = []
        for i, begin, end in zip(ids.tolist(), begins.tolist(), ends.tolist()):
            piece = vocabulary[i]
            if i in splits:
                spans.extend(_split_spans(splits[i], vocabulary, datas[k], begin, end))
                continue
            if i == tokenizer.unk_token_id:  # its text, as SentencePiece names an unknown piece
                piece = datas[k][begin:end].decode("utf-8", "replace").replace(" ", _UNDERLINE)
            spans.append((i, piece, begin, end))
        result.append(spans)
    return result


def _split_spans(ids, vocabulary, data: bytes, begin: int, end: int):
    """The spans of a split piece's replacement `ids` (the last one its comma) within the
    piece's bytes `[begin, end)`: each part's text in turn from the number's first byte; when
    the parts' texts do not spell the number (SentencePiece's normalization changed it), each
    part covers all of it."""
    number = data[begin : end - 1].lstrip()
    begin = end - 1 - len(number)
    texts = [vocabulary[i].replace(_UNDERLINE, "").encode("utf-8") for i in ids[:-1]]
    exact = b"".join(texts) == number
    spans, at = [], begin
    for i, text in zip(ids[:-1], texts):
        stop = at + len(text) if exact else end - 1
        spans.append((i, vocabulary[i], at, stop))
        at = stop if exact else begin
    spans.append((ids[-1], vocabulary[ids[-1]], end - 1, end))
    return spans
