"""Words -> SentencePiece pieces for token tagging: labels on each word's first piece.

The usual recipe for tagging with a subword model (BERT's NER, Hugging Face's `run_ner.py`
with `is_split_into_words=True`): every word is encoded on its own (SentencePiece then starts
it with `▁`, as a word after a space), the pieces are packed `[CLS] pieces [SEP]`, and a word's
tag sits on its first piece; the other pieces, `[CLS]`, `[SEP]` and padding carry
`IGNORED_LABEL`, which the loss skips. A sentence longer than the sequence keeps the words
whose pieces fit; the rest have no position (`-1`).
"""

from __future__ import annotations

import re

import numpy as np

# Hugging Face's `-100`: the label no loss or metric counts.
IGNORED_LABEL = -100
_WORD = re.compile(r"\S+")


def split_words(text: str) -> list[tuple[str, int, int]]:
    """The whitespace-separated words of `text` with their character offsets `[start, end)`.

    Example:
    >>> split_words("Anna  lives in Oslo.")
    [('Anna', 0, 4), ('lives', 6, 11), ('in', 12, 14), ('Oslo.', 15, 20)]
    """
    return [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def encode_words(
    tokenizer,
    sentences: list[list[str]],
    sequence_length: int,
    tag_ids: list[list[int]] | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray | None, np.ndarray]:
    """Packs sentences of words as the backbone's inputs, labels on each word's first piece.

    Args:
        tokenizer: `AlbertTokenizer`. Each word is encoded separately (a word whose text
            encodes to no piece, such as a lone accent, becomes `<unk>`).
        sentences: list of list of str. The words of each sentence.
        sequence_length: int. The packed length, `[CLS]` and `[SEP]` included.
        tag_ids: list of list of int, or None. One tag id per word.

    Returns:
        `(inputs, labels, first_pieces)`: int32 `token_ids`, `segment_ids`, `padding_mask`
        (rows, sequence_length); the labels (rows, sequence_length), `IGNORED_LABEL` off the
        first pieces (None without `tag_ids`); and int32 (rows, most words) positions of each
        word's first piece, -1 for a word cut off (or a padding slot).

    Example:
    >>> from albert_keras.preprocessing import AlbertTokenizer
    >>> tokenizer = AlbertTokenizer("30k-clean.model")
    >>> inputs, labels, first = encode_words(tokenizer, [["Hello", "world"]], 6, [[1, 0]])
    >>> inputs["token_ids"].tolist(), labels.tolist(), first.tolist()
    ([[2, 10975, 126, 3, 0, 0]], [[-100, 1, 0, -100, -100, -100]], [[1, 2]])
    """
    if sequence_length < 3:
        raise ValueError(f"sequence_length={sequence_length} leaves no room for a word")
    pieces = _word_pieces(tokenizer, sentences)
    rows = len(sentences)
    token_ids = np.full((rows, sequence_length), tokenizer.pad_token_id, np.int32)
    labels = np.full((rows, sequence_length), IGNORED_LABEL, np.int32)
    first_pieces = np.full((rows, max((len(s) for s in sentences), default=0)), -1, np.int32)
    budget = sequence_length - 2  # [CLS] and [SEP]
    for row, words in enumerate(pieces):
        position = 1
        for index, word in enumerate(words):
            if position - 1 + len(word) > budget:
                break  # this word and the rest do not fit
            token_ids[row, position : position + len(word)] = word
            first_pieces[row, index] = position
            if tag_ids is not None:
                labels[row, position] = tag_ids[row][index]
            position += len(word)
        token_ids[row, 0] = tokenizer.cls_token_id
        token_ids[row, position] = tokenizer.sep_token_id
    inputs = {
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": (token_ids != tokenizer.pad_token_id).astype(np.int32),
    }
    return inputs, (labels if tag_ids is not None else None), first_pieces


def _word_pieces(tokenizer, sentences: list[list[str]]) -> list[list[list[int]]]:
    """Each word's SentencePiece ids, in one tokenizer call over all words."""
    import tensorflow as tf

    flat = [word for words in sentences for word in words]
    ids = tokenizer(tf.constant(flat, tf.string)).to_list() if flat else []
    ids = [word or [tokenizer.unk_token_id] for word in ids]
    out, at = [], 0
    for words in sentences:
        out.append(ids[at : at + len(words)])
        at += len(words)
    return out
