"""`MaskingSettings`: how dynamic n-gram whole-word masking draws its masks, in one object.

`pipelines.dynamic_masking.mask_whole_word_ngrams` and `remask_batch` take it, and so does the
reader (`read_pretraining_records(..., dynamic_masking=MaskingSettings(...))`). Pure Python (no
TensorFlow import).
"""

from __future__ import annotations

import dataclasses

from albert_keras_contracts.special_tokens import CLS_ID, FIRST_NORMAL_ID, MASK_ID, PAD_ID, SEP_ID


@dataclasses.dataclass(frozen=True)
class MaskingSettings:
    """The settings of dynamic n-gram whole-word masking (the official script's, by default).

    Args:
        vocabulary_size: int or None. Random replacements are drawn from
            [first_random_id, vocabulary_size). None: the reader takes it from the writer's
            `stats.json` beside the records; `mask_whole_word_ngrams` needs it given.
        masked_lm_prob: float. Share of the tokens to predict (before the cap P).
        max_ngram: int. Longest masked span, in words (the paper's section 4.1).
        pad_id, cls_id, sep_id: int. Ids never masked.
        mask_id: int. The id of `[MASK]`.
        first_random_id: int. The smallest id a random replacement may take.

    Example:
    >>> settings = MaskingSettings(vocabulary_size=30000)
    >>> settings.masked_lm_prob, settings.max_ngram, settings.mask_id
    (0.15, 3, 4)
    >>> dataclasses.replace(settings, max_ngram=1).max_ngram
    1
    """

    vocabulary_size: int | None = None
    masked_lm_prob: float = 0.15
    max_ngram: int = 3
    pad_id: int = PAD_ID
    cls_id: int = CLS_ID
    sep_id: int = SEP_ID
    mask_id: int = MASK_ID
    first_random_id: int = FIRST_NORMAL_ID
