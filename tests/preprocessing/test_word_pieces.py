"""Words -> pieces for tagging: each word's first piece labelled, the rest ignored, cut to fit."""

import numpy as np

from albert_keras.preprocessing import AlbertTokenizer
from albert_keras.preprocessing.word_pieces import IGNORED_LABEL, encode_words, split_words


def test_labels_on_first_pieces_and_words_cut_off(tiny_spm):
    tokenizer = AlbertTokenizer(str(tiny_spm))
    sentences = [["the", "cat", "sat"], ["dog"]]
    pieces = [tokenizer(np.array([w])).to_list()[0] for w in ("the", "cat", "sat", "dog")]
    inputs, labels, first = encode_words(tokenizer, sentences, 32, [[1, 2, 0], [2]])
    expected = [2] + pieces[0] + pieces[1] + pieces[2] + [3]
    assert inputs["token_ids"][0, : len(expected)].tolist() == expected
    assert inputs["padding_mask"][0].sum() == len(expected)
    assert not inputs["segment_ids"].any()
    starts = [1, 1 + len(pieces[0]), 1 + len(pieces[0]) + len(pieces[1])]
    assert first.tolist() == [starts, [1, -1, -1]]
    assert labels[0, starts].tolist() == [1, 2, 0]
    labelled = labels[0] != IGNORED_LABEL
    assert labelled.sum() == 3 and labels[1, 1] == 2 and (labels[1] != IGNORED_LABEL).sum() == 1
    # Room for the first word only: the rest have no position, [SEP] follows what fits.
    short = 2 + len(pieces[0])
    inputs, labels, first = encode_words(tokenizer, sentences[:1], short, [[1, 2, 0]])
    assert first.tolist() == [[1, -1, -1]]
    assert inputs["token_ids"][0].tolist() == [2] + pieces[0] + [3]
    assert (labels[0] != IGNORED_LABEL).sum() == 1


def test_a_word_with_no_piece_is_unk(tiny_spm):
    tokenizer = AlbertTokenizer(str(tiny_spm))
    inputs, _, first = encode_words(tokenizer, [["\u0301", "the"]], 8)
    assert inputs["token_ids"][0, first[0, 0]] == tokenizer.unk_token_id
    assert first[0, 1] == first[0, 0] + 1


def test_split_words_keeps_character_offsets():
    text = " Zoë  met\tBo. "
    assert [(w, text[s:e]) for w, s, e in split_words(text)] == [
        ("Zoë", "Zoë"), ("met", "met"), ("Bo.", "Bo."),
    ]  # fmt: skip
