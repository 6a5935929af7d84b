"""RoBERTa's inputs (Liu et al. 2019, section 4.2): whole sentences packed up to the length.

`full_sentences`: contiguous sentences fill each example up to `max_seq_length - 2` tokens
([CLS] ... [SEP]); at a document's end packing goes on into the next document of the group with
an extra `[SEP]` between them. `doc_sentences`: the same, but an example never crosses a
document's end (the last one of a document may be short). One segment, label 0, no random
target lengths. A sentence longer than an example is cut into full-length pieces.

Examples are spans of one flat token array, as `pipelines.sop_pairs`: for `full_sentences` that
array holds a `[SEP]` after every document (`separated_tokens`), so an example that crosses
documents is still one contiguous run, and `pack_pairs` makes `[CLS] run [SEP]` with NumPy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from albert_keras_settings.choices import PACKINGS
from pipelines.sop_pairs import SentencePairs


def separated_tokens(tokens: np.ndarray, document_ends: Sequence[int], sep_id: int) -> np.ndarray:
    """`tokens` with `sep_id` inserted at each offset of `document_ends` (the token offset just
    past a document's last sentence).

    Example:
    >>> separated_tokens(np.array([7, 8, 9]), [2, 3], 3).tolist()
    [7, 8, 3, 9, 3]
    """
    return np.insert(tokens, np.asarray(document_ends, np.int64), sep_id).astype(tokens.dtype)


def pack_sentences(
    documents: Sequence[Sequence[int]], *, max_seq_length: int, packing: str
) -> SentencePairs:
    """Packs the sentences of `documents` into examples; returns their spans as `SentencePairs`.

    Args:
        documents: list of documents, each a list of its sentences' token lengths (all > 0).
            Their tokens follow each other in one flat array, with one separator token after
            every document for `full_sentences` (see `separated_tokens`).
        max_seq_length: int. Length of a packed example, [CLS] and the last [SEP] included.
        packing: str. `"full_sentences"` or `"doc_sentences"`.

    Returns:
        `SentencePairs` with the runs in `a_start`/`a_length`; B empty, label 0.

    Example:
    >>> pairs = pack_sentences([[3, 4], [2]], max_seq_length=12, packing="full_sentences")
    >>> pairs.a_start.tolist(), pairs.a_length.tolist()
    ([0], [10])
    >>> pairs = pack_sentences([[3, 4], [2]], max_seq_length=12, packing="doc_sentences")
    >>> pairs.a_start.tolist(), pairs.a_length.tolist()
    ([0, 7], [7, 2])
    """
    if packing not in PACKINGS:
        raise ValueError(f"packing={packing!r}; expected one of {PACKINGS}")
    capacity = max_seq_length - 2
    if capacity < 1:
        raise ValueError(f"max_seq_length={max_seq_length} leaves no room for a token")
    crossing = packing == "full_sentences"
    runs: list[tuple[int, int]] = []
    # The open run: its first token, its length (0: none open), whether it ends with a separator
    # (dropped if the run closes there: no example ends with "[SEP] [SEP]").
    start, length, trailing = 0, 0, False
    position = 0  # the next sentence's first token
    for sentences in documents:
        for size in sentences:
            if length and length + size > capacity:
                runs.append((start, length - trailing))
                length = 0
            if not length:
                start = position
            length, trailing = length + size, False
            position += size
            # A sentence longer than an example: full-length pieces, the rest stays open.
            while length > capacity:
                runs.append((start, capacity))
                start, length = start + capacity, length - capacity
        if crossing:
            position += 1  # the separator after the document
            if length + 1 >= capacity:
                # No sentence could follow the separator: the run ends with the document.
                if length:
                    runs.append((start, length))
                length = 0
            elif length:
                length, trailing = length + 1, True
        elif length:
            runs.append((start, length))
            length = 0
    if length:
        runs.append((start, length - trailing))
    columns = np.array([(a, n, 0, 0, 0) for a, n in runs], np.int64).reshape(-1, 5).T
    return SentencePairs(*columns)
