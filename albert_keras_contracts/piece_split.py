"""The second half of ALBERT's text path: the official post-processing of SentencePiece pieces.

ALBERT's released weights were pretrained on the ids of google-research/albert's
`tokenization.FullTokenizer.tokenize`, as `create_pretraining_data.py` and `classifier_utils.py`
call it under Python 3: `preprocess_text(line, lower=...)` (our
`albert_keras_contracts.text_normalization`), then `encode_pieces(sp_model, text)`, which takes
SentencePiece's pieces and re-splits one kind of piece:

- a piece of more than one character that ends in a comma after a digit (`str.isdigit`), such
  as `▁1994,` or `b12,`, is replaced by SentencePiece's pieces of its text less the comma and
  with every `▁` removed (`"1994"`), followed by a lone `,` piece.

SentencePiece encodes that text as a sentence of its own, so its first piece gets the model's
word-start `▁` (`"1994"` -> `▁1994`), also when the piece came from inside a word (`b12,` ->
`▁12` `,`). The official code means to remove that `▁` for a piece that did not start a word,
but it compares a `str` character with the bytes `"▁".encode("utf-8")`, which under Python 3
is never equal: the check never fires, so we do not remove it either (the released weights saw
what Python 3 produced). Hugging Face's `AlbertTokenizer` does the same split, but its check is
between strings and fires (`b12,` -> `12` `,` there); keras-hub's `AlbertTokenizer` does no
split (and no normalization).

The re-encoding depends on the piece alone (SentencePiece sees the piece's text and nothing
else), so every split a vocabulary can make is known in advance: `split_table` lists, for each
id whose piece splits, the ids that replace it. The data writer (`pipelines.tokenization`), the
tokenizer layer (`albert_keras.preprocessing.AlbertTokenizer`: GLUE, `predict`, exported
SavedModels, distillation, the study) and SQuAD (`albert_keras.squad.context_pieces`,
`albert_keras.serving.squad_text_graph`) all replace ids by this one table (or this rule).
Pure Python, no TensorFlow; `encode` is whatever SentencePiece the caller holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

UNDERLINE = "\u2581"  # SentencePiece's word-start mark


def splits_after_digit(piece: str) -> bool:
    """Whether the official `encode_pieces` re-splits this piece: longer than one character,
    ending in a comma after a digit (`str.isdigit`, any script).

    Example:
    >>> [splits_after_digit(p) for p in ["\u25811994,", "\u25811,000", "b12,", "1", ","]]
    [True, False, True, False, False]
    """
    return len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit()


def resplit_text(piece: str) -> str:
    """The text the official code re-encodes for a piece that `splits_after_digit`: the piece
    less its final comma, every `▁` removed.

    Example:
    >>> resplit_text("\u25811994,")
    '1994'
    """
    return piece[:-1].replace(UNDERLINE, "")


def split_pieces(pieces: Sequence[str], encode_as_pieces: Callable[[str], list[str]]) -> list[str]:
    """The official `encode_pieces` post-processing of one text's pieces (Python 3 semantics).

    Args:
        pieces: list of str. SentencePiece's pieces of a normalized text.
        encode_as_pieces: callable. str -> list of str, SentencePiece's `encode_as_pieces` of
            the same vocabulary.

    Example:
    >>> split_pieces(["\u2581in", "\u25811994,", "\u2581we"], lambda t: ["\u2581" + t])
    ['▁in', '▁1994', ',', '▁we']
    """
    out: list[str] = []
    for piece in pieces:
        if splits_after_digit(piece):
            out.extend(encode_as_pieces(resplit_text(piece)))
            out.append(",")
        else:
            out.append(piece)
    return out


def split_table(
    vocabulary: Sequence[str],
    encode: Callable[[list[str]], list[list[int]]],
    comma_id: int,
) -> dict[int, tuple[int, ...]]:
    """For every id whose piece `splits_after_digit`, the ids that replace it.

    Args:
        vocabulary: list of str. The pieces, by id.
        encode: callable. A list of texts -> their SentencePiece id lists (the same vocabulary;
            one batch call).
        comma_id: int. The id of the piece `,` (the unknown id where the vocabulary has none,
            as the official `PieceToId(",")`).

    Returns:
        dict `{id: (ids...)}`, the replacement ending in `comma_id`; ids not in it are kept.

    Example:
    >>> vocabulary = ["<unk>", ",", "\u25811994", "\u25811994,", "\u2581we"]
    >>> split_table(vocabulary, lambda texts: [[2] for _ in texts], comma_id=1)
    {3: (2, 1)}
    """
    split_ids = [i for i, piece in enumerate(vocabulary) if splits_after_digit(piece)]
    encoded = encode([resplit_text(vocabulary[i]) for i in split_ids]) if split_ids else []
    return {i: (*map(int, ids), int(comma_id)) for i, ids in zip(split_ids, encoded)}
