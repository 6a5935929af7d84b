"""A context's SentencePiece pieces, each with the span of original characters it came from.

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

from pipelines.text_normalization import preprocess_texts

_UNDERLINE = "\u2581"  # SentencePiece's word-start mark


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

    The official steps: whitespace runs become one space (ends trimmed), ``` `` ``` and `''`
    become `"`, then NFKD with combining marks dropped, then lower-casing. Accents are stripped
    one character at a time by the normalization pretraining and GLUE use
    (`pipelines.text_normalization`); whitespace and quote pairs span several characters and are
    handled here; lower-casing runs on the whole text. The result equals
    `preprocess_text(text, lower_case)` (tests check it on every shared SQuAD text).

    Returns:
        `(normalized, starts, ends)`, `starts[k]..ends[k]` the original characters of
        `normalized[k]`.

    Example:
    >>> normalize_with_offsets("  Café ``x''", lower_case=True)[0]
    'cafe "x"'
    """
    # 1. Whitespace runs -> one space; quote pairs -> '"'. Units: (text, first, last).
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
    # The official replaces every "``" first, then every "''" (left to right, no overlap).
    for pair in ("``", "''"):
        merged, k = [], 0
        while k < len(units):
            if k + 1 < len(units) and units[k][0] + units[k + 1][0] == pair:
                merged.append(('"', units[k][1], units[k + 1][2]))
                k += 2
            else:
                merged.append(units[k])
                k += 1
        units = merged
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


def encode_context(processor, text: str, lower_case: bool = True) -> ContextPieces:
    """Normalizes `text`, encodes it with SentencePiece and maps each piece back to `text`.

    Pieces are split as the official `tokenization.encode_pieces`: a piece ending in a digit
    and a comma ("▁1990,") is re-encoded without the comma, which becomes its own piece.

    Args:
        processor: `sentencepiece.SentencePieceProcessor`.
        text: str. The original context.
        lower_case: bool. Lower-case (the official `do_lower_case`, True for the release).

    Returns:
        ContextPieces.
    """
    normalized, starts, ends = normalize_with_offsets(text, lower_case)
    data = normalized.encode("utf-8")
    # Byte offset -> character index in `normalized`.
    byte_to_char = np.repeat(
        np.arange(len(normalized)), [len(c.encode("utf-8")) for c in normalized]
    )
    spans = []  # (piece, byte begin, byte end)
    for piece in processor.encode(normalized, out_type="proto").pieces:
        spans.extend(_split_digit_comma(processor, piece, data))
    pieces = [piece for piece, _, _ in spans]
    ids = np.asarray([processor.piece_to_id(piece) for piece in pieces], np.int32)
    char_starts, char_ends = [], []
    for _, begin, end in spans:
        if end > begin:
            first, last = byte_to_char[begin], byte_to_char[end - 1]
        else:  # a piece with no text of its own (a lone "▁"): sits before the next character
            first = last = byte_to_char[min(begin, len(data) - 1)] if len(data) else 0
        char_starts.append(starts[first] if len(starts) else 0)
        char_ends.append(ends[last] if len(ends) else 0)
    return ContextPieces(
        ids=ids,
        pieces=pieces,
        char_starts=np.asarray(char_starts, np.int64),
        char_ends=np.asarray(char_ends, np.int64),
    )


def encode_text(processor, text: str, lower_case: bool = True) -> list[int]:
    """A question's ids: normalized and split as a context, without the alignment."""
    normalized = normalize_with_offsets(text, lower_case)[0]
    data = normalized.encode("utf-8")
    spans = []
    for piece in processor.encode(normalized, out_type="proto").pieces:
        spans.extend(_split_digit_comma(processor, piece, data))
    return [processor.piece_to_id(piece) for piece, _, _ in spans]


def _split_digit_comma(processor, piece, data: bytes) -> list[tuple[str, int, int]]:
    text = piece.piece
    if not (len(text) > 1 and text[-1] == "," and text[-2].isdigit()):
        return [(text, piece.begin, piece.end)]
    # The official re-encodes the piece's text without the comma and without "▁".
    begin, end = piece.begin, piece.end - 1
    surface = data[begin:end]
    lead = len(surface) - len(surface.lstrip())
    inner = processor.encode(surface[lead:].decode("utf-8"), out_type="proto").pieces
    parts = [(p.piece, begin + lead + p.begin, begin + lead + p.end) for p in inner]
    if parts and text[0] != _UNDERLINE and parts[0][0].startswith(_UNDERLINE):
        first, b, e = parts[0]
        parts = parts[1:] if len(first) == 1 else [(first[1:], b, e), *parts[1:]]
    parts.append((",", end, end + 1))
    return parts
