"""SQuAD questions -> fixed-length model features, as the official `convert_examples_to_features`.

`[CLS] question [SEP] context window [SEP]`, padded to `max_seq_length` (384): the question is
cut to `max_query_length` (64) pieces; a context longer than the rest is cut into windows that
start `doc_stride` (128) pieces apart; each window records, per context piece, the original
characters it came from and whether this window gives it the most context (the official
`_check_is_max_context`), which the post-processing needs to map spans back to text. Training
targets are the answer's first and last piece, or [CLS] (position 0) when the question is
impossible or its answer is not wholly inside the window (`is_impossible` is then 1).
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from albert_keras.squad.context_pieces import ContextPieces, encode_contexts, encode_texts
from albert_keras.squad.squad_examples import SquadExample

INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask", "p_mask")
LABEL_NAMES = ("start_positions", "end_positions", "is_impossible")


@dataclasses.dataclass
class SquadFeatures:
    """The windows of a list of questions: model inputs, targets and the way back to text.

    Arrays are (features, max_seq_length) int32 for the inputs, (features,) for the rest.
    `p_mask` is 1 where no answer can be (question, [SEP], padding), 0 on [CLS] and context.

    Args:
        inputs: dict of `token_ids`, `segment_ids`, `padding_mask`, `p_mask`.
        labels: dict of `start_positions`, `end_positions`, `is_impossible`.
        example_index: int array. The question each window belongs to.
        doc_offset: int array. The position of the window's first context piece.
        window_start: int array. The index (in the context's pieces) of that piece.
        doc_length: int array. The number of context pieces in the window.
        max_context: list of bool arrays. Per window piece: this window is its best.
        contexts: list of ContextPieces, one per question (shared between questions of one
            paragraph).
        examples: list of SquadExample.
    """

    inputs: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    example_index: np.ndarray
    doc_offset: np.ndarray
    window_start: np.ndarray
    doc_length: np.ndarray
    max_context: list[np.ndarray]
    contexts: list[ContextPieces]
    examples: list[SquadExample]

    def __len__(self) -> int:
        return len(self.example_index)

    def piece_chars(self, feature: int) -> tuple[np.ndarray, np.ndarray]:
        """The original (first, last) characters of each context piece of a window."""
        context = self.contexts[self.example_index[feature]]
        start = self.window_start[feature]
        window = slice(start, start + self.doc_length[feature])
        return context.char_starts[window], context.char_ends[window]


def make_squad_features(
    examples,
    tokenizer,
    *,
    max_seq_length: int = 384,
    doc_stride: int = 128,
    max_query_length: int = 64,
    is_training: bool = False,
    lower_case: bool | None = None,
) -> SquadFeatures:
    """Makes the model's features for SQuAD questions (the official defaults).

    Args:
        examples: iterable of SquadExample (e.g. `read_squad_json(...)`).
        tokenizer: `AlbertTokenizer` (GLUE's and serving's: a saved answerer's
            `preprocessor.tokenizer`), or the path of a SentencePiece model to make one of.
        max_seq_length: int. Length of every feature.
        doc_stride: int. Pieces between the starts of two windows of one context.
        max_query_length: int. Question pieces kept.
        is_training: bool. Compute start/end targets from the answers.
        lower_case: bool or None. The official `do_lower_case` for a path (None: True, as for
            ALBERT's uncased vocabulary); a tokenizer keeps its own rule.

    Returns:
        SquadFeatures.

    Example:
    >>> from albert_keras.squad import read_squad_json
    >>> dev = read_squad_json("squad-dev.json", is_training=False)  # part of dev-v2.0.json
    >>> features = make_squad_features(dev[:20], "30k-clean.model", max_seq_length=128)
    >>> features.inputs["token_ids"].shape  # 20 questions; a long context takes several windows
    (45, 128)
    """
    tokenizer = squad_tokenizer(tokenizer, lower_case)
    if max_query_length < 1 or doc_stride < 1:
        raise ValueError(f"max_query_length={max_query_length}, doc_stride={doc_stride}: both > 0")
    if max_seq_length < max_query_length + 4:
        raise ValueError(
            f"max_seq_length={max_seq_length} leaves no room for a context after a "
            f"{max_query_length}-piece question and [CLS] [SEP] [SEP]"
        )
    examples = list(examples)
    distinct = list(dict.fromkeys(example.context_text for example in examples))
    encoded = dict(zip(distinct, encode_contexts(tokenizer, distinct)))
    queries = encode_texts(tokenizer, [example.question_text for example in examples])
    rows = {name: [] for name in (*INPUT_NAMES, *LABEL_NAMES)}
    meta = {"example_index": [], "doc_offset": [], "window_start": [], "doc_length": []}
    max_context, contexts = [], []
    for example_index, example in enumerate(examples):
        context = encoded[example.context_text]
        contexts.append(context)
        query = queries[example_index][:max_query_length]
        answer = None
        if is_training and not example.is_impossible:
            answer = context.piece_span(
                example.answer_start, example.answer_start + len(example.answer_text) - 1
            )
        windows = _windows(len(context), max_seq_length - len(query) - 3, doc_stride)
        for start, length in windows:
            _add_window(rows, tokenizer, query, context, start, length, max_seq_length, answer)
            meta["example_index"].append(example_index)
            meta["doc_offset"].append(len(query) + 2)
            meta["window_start"].append(start)
            meta["doc_length"].append(length)
            max_context.append(_is_max_context(windows, start, length))
    arrays = {name: np.asarray(values, np.int32) for name, values in rows.items()}
    for name in INPUT_NAMES:
        arrays[name] = arrays[name].reshape(-1, max_seq_length)
    return SquadFeatures(
        inputs={name: arrays[name] for name in INPUT_NAMES},
        labels={name: arrays[name] for name in LABEL_NAMES},
        **{name: np.asarray(values, np.int64) for name, values in meta.items()},
        max_context=max_context,
        contexts=contexts,
        examples=examples,
    )


def _add_window(rows, tokenizer, query, context, start, length, max_seq_length, answer) -> None:
    """Appends one window's `[CLS] question [SEP] context [SEP]` row and its targets."""
    doc_offset = len(query) + 2
    tokens = [tokenizer.cls_token_id, *query, tokenizer.sep_token_id,
              *context.ids[start : start + length], tokenizer.sep_token_id]  # fmt: skip
    padding = max_seq_length - len(tokens)
    rows["token_ids"].append(tokens + [tokenizer.pad_token_id] * padding)
    rows["segment_ids"].append([0] * doc_offset + [1] * (length + 1) + [0] * padding)
    rows["padding_mask"].append([1] * len(tokens) + [0] * padding)
    rows["p_mask"].append([0] + [1] * (len(query) + 1) + [0] * length + [1] * (padding + 1))
    target = (0, 0)
    if answer is not None and start <= answer[0] and answer[1] < start + length:
        target = (answer[0] - start + doc_offset, answer[1] - start + doc_offset)
    rows["start_positions"].append(target[0])
    rows["end_positions"].append(target[1])
    rows["is_impossible"].append(int(target == (0, 0)))


def _windows(num_pieces: int, max_length: int, stride: int) -> list[tuple[int, int]]:
    """(start, length) of each window, as the official sliding window: each starts
    `min(length, stride)` after the last, and the last one reaches the end."""
    windows, start = [], 0
    while start < num_pieces:
        length = min(num_pieces - start, max_length)
        windows.append((start, length))
        if start + length == num_pieces:
            break
        start += min(length, stride)
    return windows


def _is_max_context(windows, start: int, length: int) -> np.ndarray:
    """For each piece of the window at `start`: whether it scores best here, the score being
    min(left, right context) + 0.01 * window length (the official `_check_is_max_context`;
    the first window wins ties)."""
    positions = np.arange(start, start + length)
    best_score = np.full(length, -np.inf)
    best_start = np.full(length, -1)
    for other_start, other_length in windows:
        end = other_start + other_length - 1
        inside = (positions >= other_start) & (positions <= end)
        score = np.minimum(positions - other_start, end - positions) + 0.01 * other_length
        better = inside & (score > best_score)
        best_score[better] = score[better]
        best_start[better] = other_start
    return best_start == start


def squad_preprocessor(spm_model, sequence_length: int, lower_case: bool | None = None):
    """The `AlbertPreprocessor` a question answerer is saved with: `squad_tokenizer(spm_model)`
    and the length its features have, so the loaded model reads text as it was trained.

    Args:
        spm_model: str or path. The SentencePiece `.model`.
        sequence_length: int. The features' `max_seq_length`.
        lower_case: bool or None. As `squad_tokenizer`.

    Example:
    >>> squad_preprocessor("30k-clean.model", 384).sequence_length
    384
    """
    from albert_keras.preprocessing.albert_preprocessor import AlbertPreprocessor

    return AlbertPreprocessor(squad_tokenizer(spm_model, lower_case), sequence_length)


def squad_tokenizer(tokenizer, lower_case: bool | None = None):
    """The `AlbertTokenizer` SQuAD reads text with: `tokenizer` itself, or one made from the
    SentencePiece model at that path (lower-casing unless `lower_case=False`).

    Args:
        tokenizer: `AlbertTokenizer`, or a path to a SentencePiece `.model`.
        lower_case: bool or None. For a path: the official `do_lower_case` (None: True).

    Returns:
        AlbertTokenizer.

    Example:
    >>> squad_tokenizer("30k-clean.model").cls_token_id
    2
    """
    from albert_keras.preprocessing.albert_tokenizer import AlbertTokenizer

    if isinstance(tokenizer, AlbertTokenizer):
        if lower_case is not None and bool(lower_case) != tokenizer.lowercases:
            raise ValueError(
                f"lower_case={lower_case}, but the tokenizer lower-cases: {tokenizer.lowercases}"
            )
        return tokenizer
    path = os.fspath(tokenizer)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: SentencePiece model not found")
    lowercase = True if lower_case is None else bool(lower_case)
    try:
        return AlbertTokenizer(path, lowercase=lowercase)
    except ValueError as error:  # no [CLS] / [SEP] ...: not an ALBERT vocabulary
        raise ValueError(f"{path}: {error}") from None
    except Exception as error:  # noqa: BLE001 (SentencePiece's parse errors have no one type)
        raise ValueError(f"{path}: not a SentencePiece model ({error})") from None
