"""ALBERT's special pieces and their ids, as in the release vocabulary (`30k-clean.model`).

`<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4. `pipelines.train_vocab` trains a
vocabulary with this layout, `pipelines.tokenization` checks a vocabulary has it, the writer and
the reader's dynamic masking use the ids.
"""

PAD_ID = 0
UNK_ID = 1
CLS_ID = 2
SEP_ID = 3
MASK_ID = 4

# id -> piece, as in the release vocabulary (checked against it by the tests).
SPECIAL_PIECES = {
    PAD_ID: "<pad>",
    UNK_ID: "<unk>",
    CLS_ID: "[CLS]",
    SEP_ID: "[SEP]",
    MASK_ID: "[MASK]",
}

# Random replacements in masking are drawn from [FIRST_NORMAL_ID, vocabulary_size): the official
# code draws from the whole vocabulary, but a random [CLS]/[SEP]/<pad> inside a sentence would
# fake structure the model is told to rely on, and <unk> teaches nothing.
FIRST_NORMAL_ID = 5
