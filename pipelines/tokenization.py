"""`SentencePieceEncoder`: sentences -> SentencePiece ids, plus which ids start a word.

Text is prepared by `albert_keras_contracts.text_normalization.preprocess_texts` (the official ALBERT
`preprocess_text`: whitespace collapsed, accents stripped, lower-cased for an uncased vocabulary)
and encoded by SentencePiece's C++ batch encoder: per-token Python is what made the official
script slow. The official `encode_pieces` then re-splits a piece ending in a digit and a comma
(`▁1994,` -> `▁1994` `,`, `albert_keras_contracts.piece_split`): such pieces are rare, so one
array lookup over a batch's ids finds them and only those are replaced, by ids listed once per
vocabulary. The ids equal the official code's on every line; `token_boundary`
(`pipelines.sop_pairs`) is the official `_is_start_piece` of the split pieces, as it is looked
up by id.

Each sentence is encoded whole, as the official script does. A word's pieces can depend on the
sentence before it: SentencePiece's unigram Viterbi sums float32 scores from the sentence's start,
so two segmentations of a word with equal or nearly equal scores (`uhhhh` as `▁uh h hh` or
`▁uh hh h`: the same pieces) are told apart by how float32 rounds after the words before it
(`▁uh h hh` alone, `▁uh hh h` in `girl #2: uhhhh marshall no.`). An encoder that encodes each
distinct word once (the former `pipelines/word_encoding_cache.py`) cannot give SentencePiece's
ids, and writers that batch a corpus differently wrote different bytes (see
`tests/pipelines/test_tie_corpus.py`). Telling which words are safe to encode once takes
SentencePiece's lattice (`nbest_encode`) for each distinct word, which cost about what encoding
whole sentences costs on the books.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from itertools import chain

import numpy as np
import sentencepiece as spm

from albert_keras_contracts import special_tokens
from albert_keras_contracts.piece_split import split_table
from albert_keras_contracts.special_tokens import CLS_ID, MASK_ID, SEP_ID
from albert_keras_contracts.text_normalization import preprocess_texts
from albert_keras_contracts.vocabulary_identity import file_sha256

# The pieces a vocabulary must hold besides <pad> / <unk> (`albert_keras_contracts.special_tokens`).
SPECIAL_PIECES = tuple(special_tokens.SPECIAL_PIECES[i] for i in (CLS_ID, SEP_ID, MASK_ID))

# The official `_is_start_piece_sp`: besides a piece that starts with "▁" (or "<"), a lone
# punctuation piece and any piece with a character outside a-z and this set starts a word. We
# keep the rule so our `token_boundary` (and so whole-word spans) match official records.
_OFFICIAL_PUNCTUATION = frozenset('!"#$%&()*+,-./:;?@[\\]^_`{|}~')
_ENGLISH_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
# Sentences prepared at a time (see `_encode_texts`) and encoded at a time (see `encode`).
_PREPROCESS_SENTENCES = 512
_ENCODE_SENTENCES = 2048
_ALLOWED_BYTES = "".join(sorted(_ENGLISH_LETTERS | _OFFICIAL_PUNCTUATION)).encode()


class SentencePieceEncoder:
    """Encodes sentences with a SentencePiece model into ids, as ALBERT's data script does.

    Args:
        model_file: str. Path to a SentencePiece `.model` holding `[CLS]`, `[SEP]`, `[MASK]`.
        lower_case: bool or None. Lower-case the text first; None decides from the vocabulary
            (a vocabulary without upper-case letters, like ALBERT's, is uncased).

    Example:
    >>> encoder = SentencePieceEncoder("30k-clean.model")
    >>> ids, lengths = encoder.encode(["Hello, my dog is cute", "Hi."])
    >>> ids[: lengths[0]].tolist()
    [10975, 15, 51, 1952, 25, 10901]
    """

    def __init__(self, model_file: str, lower_case: bool | None = None):
        if os.path.isdir(model_file):
            raise ValueError(
                f"SentencePiece model {model_file!r} is a folder: give the .model file"
            )
        if not os.path.isfile(model_file):
            raise FileNotFoundError(f"SentencePiece model {model_file!r} does not exist")
        self.model_file = model_file
        # The vocabulary's identity, which stats.json records (Beam's copy is gone after load).
        self.model_sha256 = file_sha256(model_file)
        self._processor = spm.SentencePieceProcessor()
        try:
            self._processor.Load(model_file)
        except (OSError, RuntimeError) as error:
            raise ValueError(
                f"{model_file!r} is not a SentencePiece model ({error}); "
                "train one with `python -m pipelines.train_vocab`"
            ) from None
        # A list of ids is looked up in one C++ call.
        pieces = self._processor.id_to_piece(list(range(self.vocabulary_size)))
        ids = {piece: self._processor.piece_to_id(piece) for piece in SPECIAL_PIECES}
        missing = [p for p, i in ids.items() if pieces[i] != p]
        if missing:
            raise ValueError(
                f"SentencePiece model {model_file!r} has no {', '.join(missing)} piece; "
                "train it with `python -m pipelines.train_vocab`"
            )
        self.cls_id, self.sep_id, self.mask_id = ids["[CLS]"], ids["[SEP]"], ids["[MASK]"]
        self.pad_id = max(self._processor.pad_id(), 0)
        specials = [self.pad_id, self._processor.unk_id(), self.cls_id, self.sep_id, self.mask_id]
        # Random replacements come from [first_normal_id, vocabulary_size), as the reader's
        # dynamic masking: a random [CLS]/[SEP]/<pad> would fake structure, <unk> teaches nothing.
        self.first_normal_id = max(specials) + 1
        if lower_case is None:
            lower_case = not self._has_upper_case(pieces)
        self.lower_case = bool(lower_case)
        self.word_starts = _word_starts(pieces)
        # The official digit-comma split: the ids replacing each id whose piece is split.
        self._splits = split_table(
            pieces, lambda texts: self._processor.encode(texts), self._processor.piece_to_id(",")
        )
        self._splits_id = np.zeros(len(pieces), bool)
        self._splits_id[list(self._splits)] = True

    def _has_upper_case(self, pieces: list[str]) -> bool:
        """Whether a piece other than a control piece ([CLS], ...) holds a letter A-Z."""
        text = "\n".join(pieces)
        if text.count("\n") == len(pieces) - 1:
            # One C scan of all pieces; only the hits are mapped back to their piece.
            return any(
                not self._processor.is_control(text.count("\n", 0, match.start()))
                for match in re.finditer("[A-Z]", text)
            )
        ordinary = "".join(p for i, p in enumerate(pieces) if not self._processor.is_control(i))
        return re.search("[A-Z]", ordinary) is not None

    def __reduce__(self):
        # Pickled as its arguments (for spawned workers); a forked worker inherits the loaded one.
        return type(self), (self.model_file, self.lower_case)

    @property
    def vocabulary_size(self) -> int:
        return self._processor.get_piece_size()

    def preprocess(self, sentences: Sequence[str]) -> list[str]:
        """Normalizes sentences as the official `preprocess_text` (one pass over all of them)."""
        return preprocess_texts(sentences, self.lower_case)

    def encode(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Encodes sentences into one flat id array and the length of each sentence.

        Args:
            sentences: list of str.

        Returns:
            `(ids, lengths)`: int32 arrays; sentence i is `ids[sum(lengths[:i]):][:lengths[i]]`.
            A sentence can encode to nothing (length 0).
        """
        # ~2048 sentences at a time, encoded and made arrays before the next: SentencePiece
        # returns Python ints (~40 bytes each), so a whole batch's lists (~20 MB for 2 MB of
        # text) would grow each worker's heap by that much, one page fault at a time.
        id_parts, length_parts = [], []
        for start in range(0, len(sentences), _ENCODE_SENTENCES):
            id_lists = self._encode_texts(sentences[start : start + _ENCODE_SENTENCES])
            lengths = np.fromiter(map(len, id_lists), np.int32, len(id_lists))
            ids = np.fromiter(chain.from_iterable(id_lists), np.int32, int(lengths.sum()))
            ids, lengths = self._split_digit_commas(ids, lengths)
            id_parts.append(ids)
            length_parts.append(lengths)
        if not length_parts:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        return np.concatenate(id_parts), np.concatenate(length_parts)

    def _split_digit_commas(self, ids: np.ndarray, lengths: np.ndarray):
        """The official `encode_pieces` split of flat ids: each id of a piece like `▁1994,`
        replaced by its `split_table` ids (one vectorized lookup; a loop over the few hits)."""
        at = np.flatnonzero(self._splits_id[ids])
        if not len(at):
            return ids, lengths
        replacements = [self._splits[int(i)] for i in ids[at]]
        counts = np.ones(len(ids), np.int64)
        counts[at] = [len(r) for r in replacements]
        out = np.repeat(ids, counts)
        starts = np.cumsum(counts) - counts
        for start, replacement in zip(starts[at], replacements):
            out[start : start + len(replacement)] = replacement
        sentence = np.searchsorted(np.cumsum(lengths), at, side="right")
        lengths = lengths + np.bincount(
            sentence, weights=counts[at] - 1, minlength=len(lengths)
        ).astype(lengths.dtype)
        return out, lengths

    def _encode_texts(self, texts: Sequence[str]) -> list[list[int]]:
        """Raw sentences -> their id lists, prepared as `preprocess` does."""
        # Prepared ~512 texts at a time: bigger texts make str.replace and lower slower per
        # character (more distinct accented letters to replace, wider characters), smaller
        # ones pay per call.
        prepared = []
        for start in range(0, len(texts), _PREPROCESS_SENTENCES):
            prepared += self.preprocess(texts[start : start + _PREPROCESS_SENTENCES])
        # One thread: parallelism comes from worker processes, one per core.
        return self._processor.encode(prepared, num_threads=1)


def spm_vocabulary_size(model_file: str, flag: str = "--spm_model") -> int:
    """The number of pieces of an ALBERT SentencePiece model, after checking it is one.

    Args:
        model_file: str. The `.model` file.
        flag: str. How the one-line error names the input.

    Raises:
        FileNotFoundError / ValueError: no such file; not a SentencePiece model; no `[CLS]`,
            `[SEP]` or `[MASK]` piece.

    Example:
    >>> spm_vocabulary_size("30k-clean.model")
    30000
    """
    try:
        return SentencePieceEncoder(str(model_file)).vocabulary_size
    except (FileNotFoundError, ValueError) as error:
        raise type(error)(f"{flag}: {error}") from None


def _word_starts(pieces: list[str]) -> np.ndarray:
    """`_starts_word` of every piece, by C calls over all of them (30k pieces: ~3x faster)."""
    starts = np.ones(len(pieces), bool)
    rest = [i for i, p in enumerate(pieces) if not p.startswith(("\u2581", "<"))]
    rest = [i for i in rest if pieces[i] not in _OFFICIAL_PUNCTUATION]
    # Lower-casing is per character but for the final sigma, which is no English letter either
    # way; deleting the allowed (ASCII) bytes from the UTF-8 leaves the rest of each piece.
    text = "\n".join(pieces[i] for i in rest).lower()
    leftover = text.encode("utf-8", "surrogatepass").translate(None, _ALLOWED_BYTES).split(b"\n")
    if len(leftover) != len(rest):  # a piece holds a line break: piece by piece
        return np.array([_starts_word(p) for p in pieces], dtype=bool)
    starts[rest] = np.fromiter(map(bool, leftover), bool, len(rest))
    return starts


def _starts_word(piece: str) -> bool:
    if piece.startswith(("\u2581", "<")) or piece in _OFFICIAL_PUNCTUATION:
        return True
    return not all(c.lower() in _ENGLISH_LETTERS or c in _OFFICIAL_PUNCTUATION for c in piece)
