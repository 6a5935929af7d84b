"""`WordEncodingCache`: SentencePiece ids of a batch of raw sentences, word by word, memoized.

ALBERT's text preparation and SentencePiece's encoding both act on a sentence one word at a
time, so a sentence's ids are its words' ids laid end to end:
- `preprocess_text` (`pipelines.text_normalization`) collapses whitespace, and its other steps
  never reach across a space: the quote pairs hold no space, NFKD and the dropping of combining
  marks are per character, and lower-casing's one context rule (the final sigma) stops at a
  space;
- SentencePiece (with `add_dummy_prefix` and `remove_extra_whitespaces`, both on in ALBERT's
  model and in every model `pipelines.train_vocab` makes) turns each run of spaces into one "▁"
  before the next word; when "▁" is a piece and no piece holds a "▁" after its first character,
  no piece spans two words, so the best segmentation of a sentence is that of each word.
Prose repeats its words (Zipf): the six books of `../shared/data` hold 1.5M words but 94k
distinct ones, so each distinct word is prepared and encoded once and every other occurrence is a
look-up (`pipelines.word_table.WordTable`: all the words of a batch at once, in NumPy).
Neither SentencePiece (its Python API encodes whole strings) nor HF `tokenizers` (whose Unigram
gives the same ids but ran 8x slower per core here) does this, hence by hand.

The cache holds raw words, as the reader gives them, and is emptied once it holds `max_words`
distinct words or `max_chars` characters, so a worker's memory stays bounded on any corpus.
`SentencePieceEncoder` uses it when `supports` says the decomposition holds for its model, and
encodes whole sentences otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, repeat

import numpy as np

from pipelines.word_table import WordTable

# Stands between two sentences in the joined batch: a word of its own, which encodes to nothing.
# A batch where a sentence holds it (the reader never gives one: a NUL byte marks a binary file,
# skipped) is left to the caller.
_SEPARATOR = "\x00"
_JOINT = f" {_SEPARATOR} "
_SPACE_PIECE = "\u2581"
# New words are encoded this many to a SentencePiece call, joined by spaces: one string per
# word costs SentencePiece's Python API twice as much.
_WORDS_PER_TEXT = 16


class WordEncodingCache:
    """Encodes raw sentences as `encode_texts(prepare(sentences))`, one look-up per word.

    Args:
        prepare: callable. Raw texts -> the texts SentencePiece encodes (`preprocess_texts`).
        encode_texts: callable. Prepared texts -> their id lists (SentencePiece).
        pieces: list of str. The model's pieces, to tell where a word starts in joined words.
        max_words: int. Distinct words held before the cache is emptied.
        max_chars: int. Characters of those words held before it is emptied.

    Example:
    >>> import sentencepiece as spm
    >>> processor = spm.SentencePieceProcessor(model_file="30k-clean.model")
    >>> pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    >>> cache = WordEncodingCache(lambda texts: [t.lower() for t in texts], processor.encode, pieces)
    >>> ids, lengths = cache.encode(["Hello, my dog", "is  cute"])
    >>> ids.tolist(), lengths.tolist()
    ([10975, 15, 51, 1952, 25, 10901], [4, 2])
    """

    def __init__(
        self,
        prepare: Callable[[list[str]], list[str]],
        encode_texts: Callable[[list[str]], list[list[int]]],
        pieces: Sequence[str],
        max_words: int = 1 << 18,
        max_chars: int = 1 << 22,
    ):
        self._prepare = prepare
        self._encode_texts = encode_texts
        self._starts_word = _starts_with_space(pieces)
        self.max_words = max_words
        self.max_chars = max_chars
        self.clear()

    @staticmethod
    def supports(pieces: Sequence[str], encode_texts: Callable[[list[str]], list]) -> bool:
        """Whether a SentencePiece model encodes a sentence word by word (see above).

        Args:
            pieces: list of str. The model's pieces.
            encode_texts: callable. Texts -> their id lists, by the model.
        """
        # "▁" is a piece and no piece holds one but at its start: as many as start with one.
        if _SPACE_PIECE not in pieces:
            return False
        if "".join(pieces).count(_SPACE_PIECE) != _starts_with_space(pieces).sum():
            return False
        # add_dummy_prefix and remove_extra_whitespaces: words encode alone as in a sentence.
        whole, spaced, first, second = encode_texts(["it is", " it   is ", "it", "is"])
        return whole == spaced == first + second

    def clear(self) -> None:
        """Forgets every word."""
        self._table = WordTable()
        self._table.number(_SEPARATOR)  # number 0
        self._chars = 0
        self._tokens = np.zeros(0, np.int32)
        self._starts = np.zeros(1, np.int64)  # the separator's (empty) run
        self._lengths = np.zeros(1, np.int64)

    def __len__(self) -> int:
        return len(self._table) - 1

    def encode(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """Encodes raw sentences into one flat id array and each sentence's length.

        Args:
            sentences: list of str.

        Returns:
            `(ids, lengths)`: int32 arrays, as `SentencePieceEncoder.encode`; None for no
            sentences or when one holds a NUL character (the separator: encode those whole).
        """
        text = _JOINT.join(sentences)
        if text.count(_SEPARATOR) != len(sentences) - 1:
            return None
        word_ids, new_words = self._table.number(text)
        if new_words:
            try:
                self._add(new_words)
            except BaseException:  # numbered words without ids must not outlive an error
                self.clear()
                raise
        counts = self._lengths[word_ids]
        ends = np.cumsum(counts)
        total = int(ends[-1]) if len(ends) else 0
        # Each word's ids copied from its stored run: a ragged gather in whole-array steps.
        runs = np.repeat(self._starts[word_ids] - (ends - counts), counts)
        ids = self._tokens[runs + np.arange(total)]
        sentence_ends = np.concatenate([[0], ends[word_ids == 0], [total]])
        if len(self._table) > self.max_words or self._chars > self.max_chars:
            self.clear()
        return ids, np.diff(sentence_ends).astype(np.int32)

    def _add(self, words: list[str]) -> None:
        """Encodes new words and stores their ids after the others, in the index's order."""
        prepared = self._prepare(words)
        tokens, lengths = self._encode_joined(prepared)
        self._chars += len("".join(words))
        self._starts = np.concatenate(
            [self._starts, len(self._tokens) + np.cumsum(lengths) - lengths]
        )
        self._lengths = np.concatenate([self._lengths, lengths])
        self._tokens = np.concatenate([self._tokens, tokens])

    def _encode_joined(self, prepared: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Prepared words -> `(ids, lengths)` as `flatten_id_lists` of one string per word.

        A word prepared into printable ASCII, not empty and with no space, encodes to one piece
        starting with "▁" followed by pieces that do not (SentencePiece's normalization keeps
        it as it is). Such words go `_WORDS_PER_TEXT` to a string, joined by spaces, and are cut
        where a piece starts with "▁"; others go one to a string, as do all should the cut not
        come out one per word.
        """
        count = len(prepared)
        plain = np.fromiter(map(str.isascii, prepared), bool, count)
        plain &= np.fromiter(map(str.isprintable, prepared), bool, count)
        plain &= np.fromiter(map(str.count, prepared, repeat(" ")), np.int64, count) == 0
        plain &= np.fromiter(map(len, prepared), np.int64, count) > 0
        joined = [prepared[i] for i in np.flatnonzero(plain)]
        texts = [
            " ".join(joined[i : i + _WORDS_PER_TEXT])
            for i in range(0, len(joined), _WORDS_PER_TEXT)
        ]
        others = [prepared[i] for i in np.flatnonzero(~plain)]
        encoded = self._encode_texts(texts + others)
        plain_ids, _ = flatten_id_lists(encoded[: len(texts)])
        starts = np.flatnonzero(self._starts_word[plain_ids])
        if len(starts) != len(joined) or (len(starts) and starts[0] != 0):
            return flatten_id_lists(self._encode_texts(prepared))
        other_ids, other_lengths = flatten_id_lists(encoded[len(texts) :])
        lengths = np.zeros(count, np.int64)
        lengths[plain] = np.diff(starts, append=len(plain_ids))
        lengths[~plain] = other_lengths
        # The ids in the index's order: the plain words' runs and the others' interleaved.
        tokens = np.empty(int(lengths.sum()), np.int32)
        is_plain = np.repeat(plain, lengths)
        tokens[is_plain] = plain_ids
        tokens[~is_plain] = other_ids
        return tokens, lengths


def _starts_with_space(pieces: Sequence[str]) -> np.ndarray:
    return np.fromiter(map(str.startswith, pieces, repeat(_SPACE_PIECE)), bool, len(pieces))


def flatten_id_lists(id_lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """SentencePiece's id lists -> `(ids, lengths)`: all ids in one int32 array, and each list's
    length (int64).

    Example:
    >>> ids, lengths = flatten_id_lists([[5, 6], [], [7]])
    >>> ids.tolist(), lengths.tolist()
    ([5, 6, 7], [2, 0, 1])
    """
    lengths = np.fromiter(map(len, id_lists), np.int64, len(id_lists))
    return np.fromiter(chain.from_iterable(id_lists), np.int32, int(lengths.sum())), lengths
