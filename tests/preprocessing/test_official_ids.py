"""Our ids held to the official ALBERT text path (issue 42), stated here independently.

`official_ids` below is google-research/albert's `tokenization.py` as `create_pretraining_data.py`
runs it under Python 3, restated from reading that file (not from our implementation):
`preprocess_text` (whitespace collapsed, NFKD, combining characters dropped, lower-cased; no
`''` -> `"`), SentencePiece's `EncodeAsPieces`, then `encode_pieces`' split of a piece ending
in a digit and a comma (re-encoded without the comma and every "▁"; the "▁"-removal check
compares a str with bytes, so under Python 3 it never fires), then `PieceToId`. And
`official_is_start_piece` is `_is_start_piece_sp` of create_pretraining_data.py.

The data writer, the `AlbertTokenizer` layer and SQuAD's Python path must give these ids on
hand-made cases of each rule and on a random corpus; the vocabulary is trained here, so nothing
outside the repository is needed.
"""

import random
import unicodedata

import numpy as np
import pytest
import sentencepiece
from release_tarball import train_tiny_sentencepiece

from albert_keras.preprocessing import AlbertTokenizer
from albert_keras.squad.context_pieces import encode_texts
from albert_keras_contracts.piece_split import split_pieces, split_table
from albert_keras_contracts.text_path import (
    TEXT_PATH,
    UNRECORDED_TEXT_PATH,
    check_text_path,
    recorded_text_path,
)
from pipelines.tokenization import SentencePieceEncoder

# Numbers before commas (as words and inside words), LaTeX quotes, accents: enough of each
# for the vocabulary to hold pieces such as "▁12," and "1," (split_by_number=False, as the
# release vocabulary's "▁1994," shows its training allowed).
TRAINING_TEXT = " . ".join(
    [
        "in 1994, we went to the cafe",
        "by 2001, 12, and 3, cats",
        "ab1994, cd",
        "the 1,000, men said ``hello'' to her",
        "on 5 may 1994, and 2001, he ran",
        "about 12,500, maybe naive",
    ]
    * 20
)

CASES = [
    "about 12, maybe",  # a word "▁12," split: "▁1" "2" ","
    "x 2001, y",  # "1," inside a word: re-encoded as "▁1" (Python 3), then ","
    "12,,, 1,1, 12,500,",  # several commas
    "he said ``hello'' and ''ok''",  # the quotes stay (XLNet's rule maps them to ")
    "Café NAÏVE 1994, coöperate",  # accents stripped, capitals lowered
    "  a \t\u3000 b\u00a0\u2009 12,\n",  # whitespace runs and Unicode spaces
    "a\x00b 12,\x07 \x1c c\x85d",  # control characters
    "²,³, ١٢, 12\u0301,",  # digits of other kinds (str.isdigit), a mark between digit and comma
    "",
]


def official_preprocess_text(text: str) -> str:
    text = " ".join(text.strip().split())
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def official_pieces(processor, text: str) -> list[str]:
    pieces = []
    for piece in processor.encode_as_pieces(official_preprocess_text(text)):
        if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
            pieces += processor.encode_as_pieces(piece[:-1].replace("\u2581", "")) + [","]
        else:
            pieces.append(piece)
    return pieces


def official_ids(processor, text: str) -> list[int]:
    return [processor.piece_to_id(piece) for piece in official_pieces(processor, text)]


def official_is_start_piece(piece: str) -> bool:
    special = set('!"#$%&"()*+,-./:;?@[\\]^_`{|}~') | {"€", "£"}
    english = set("abcdefghijklmnopqrstuvwxyz")
    return (
        piece.startswith(("\u2581", "<"))
        or piece in special
        or not all(c.lower() in english | special for c in piece)
    )


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("official_spm") / "numbers"
    return str(train_tiny_sentencepiece(prefix, TRAINING_TEXT, 100, split_by_number=False))


@pytest.fixture(scope="module")
def processor(vocabulary):
    return sentencepiece.SentencePieceProcessor(model_file=vocabulary)


@pytest.fixture(scope="module")
def tokenizer(vocabulary):
    return AlbertTokenizer(vocabulary)


def writer_ids(vocabulary, texts):
    ids, lengths = SentencePieceEncoder(vocabulary).encode(texts)
    return [part.tolist() for part in np.split(ids, np.cumsum(lengths)[:-1])]


def random_corpus(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = TRAINING_TEXT.replace(" . ", " ").split() + ["Café", "NAÏVE", "''", "``", "x"]
    odd = ["\t", "  ", "\u3000", "\u00a0", "\x00", "\x07", "\u0301", "²", "١", ",", ",,", "'"]
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, 12)):
            kind = rng.random()
            if kind < 0.3:
                parts.append(f"{rng.randint(0, 3000)}," + rng.choice(["", "", "x", "5,"]))
            elif kind < 0.4:
                parts.append(rng.choice(odd))
            else:
                parts.append(rng.choice(words))
        texts.append(rng.choice([" ", "", "  "]).join(parts))
    return texts


def test_the_vocabulary_holds_pieces_of_each_split_kind(processor, tokenizer):
    """The hand-made cases exercise both kinds: a split piece that starts a word ("▁12,") and
    one inside a word ("1,"), whose re-encoding keeps SentencePiece's "▁" under Python 3."""
    vocab = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    split = {vocab[i] for i in tokenizer.digit_comma_splits}
    assert "\u258112," in split and "1," in split
    # "▁", "x", "▁", "2", "00", "1,", "▁", "y": the "1," re-encoded alone is "▁1".
    assert official_pieces(processor, "x 2001, y")[3:7] == ["2", "00", "\u25811", ","]
    # "▁ab", "o", "u", "t", "▁12,", ...: "12" re-encoded alone is "▁1" "2".
    assert official_pieces(processor, "about 12, maybe")[4:7] == ["\u25811", "2", ","]


@pytest.mark.parametrize("text", CASES)
def test_each_rule_gives_the_official_ids(vocabulary, processor, tokenizer, text):
    expected = official_ids(processor, text)
    assert writer_ids(vocabulary, [text]) == [expected]
    assert tokenizer([text]).to_list() == [expected]
    assert tokenizer(text).numpy().tolist() == expected
    assert encode_texts(tokenizer, [text]) == [expected]


def test_quotes_are_kept_as_alberts_preprocess_text_keeps_them(processor, tokenizer):
    """XLNet's and Hugging Face's `''` -> `"` is not ALBERT's rule."""
    ids = tokenizer(["''he'' ``we``"]).to_list()[0]
    assert processor.decode(ids) == "''he'' ``we``"
    assert '"' not in processor.decode(tokenizer(["``Hello''"]).to_list()[0])


def test_a_random_corpus_gives_the_official_ids_and_word_starts(vocabulary, processor, tokenizer):
    texts = random_corpus(1500, seed=42)
    expected = [official_ids(processor, text) for text in texts]
    assert sum(ids != processor.encode(official_preprocess_text(t)) for t, ids in zip(texts, expected)) > 300  # fmt: skip
    assert writer_ids(vocabulary, texts) == expected
    # The layer (tf-text's SentencePiece op) differs only on exact ties: two segmentations of
    # equal score, such as "000" as "0" "00" (Python SentencePiece) or "00" "0" (tf-text's),
    # which this tiny vocabulary makes common (the release vocabulary: docs/text_path.md).
    layer = tokenizer(texts).to_list()
    differing = [i for i, (a, b) in enumerate(zip(layer, expected)) if a != b]
    assert len(differing) < len(texts) // 10
    for i in differing:
        ours, theirs = layer[i], expected[i]
        assert processor.decode(ours) == processor.decode(theirs)
        assert sorted(ours) == sorted(theirs)  # the same pieces, in another order
        score = [sum(processor.get_score(piece) for piece in ids) for ids in (ours, theirs)]
        assert score[0] == pytest.approx(score[1], rel=1e-6)
    assert encode_texts(tokenizer, texts) == layer  # SQuAD: the layer's op and split
    # token_boundary is looked up by id: the official `_is_start_piece` of the split pieces
    # (an unknown piece's surface aside: the official code sees its text, the records <unk>).
    encoder = SentencePieceEncoder(vocabulary)
    unknown = processor.unk_id()
    for text in texts:
        pieces = official_pieces(processor, text)
        ids = [processor.piece_to_id(p) for p in pieces]
        ours = encoder.word_starts[ids].tolist()
        theirs = [official_is_start_piece(p) for p in pieces]
        assert [a for a, i in zip(ours, ids) if i != unknown] == [
            b for b, i in zip(theirs, ids) if i != unknown
        ]


def test_split_table_is_the_official_rule_piece_by_piece(processor):
    vocab = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    table = split_table(vocab, processor.encode, processor.piece_to_id(","))
    for i, piece in enumerate(vocab):
        pieces = split_pieces([piece], processor.encode_as_pieces)
        want = [processor.piece_to_id(p) for p in pieces]
        assert list(table.get(i, (i,))) == want, piece
    assert len(table) >= 2


def test_the_tokenizer_records_its_text_path(tokenizer):
    config = tokenizer.get_config()
    assert config["text_path"] == TEXT_PATH
    assert AlbertTokenizer.from_config(config).text_path == TEXT_PATH
    older = {key: value for key, value in config.items() if key != "text_path"}
    assert AlbertTokenizer.from_config(older).text_path == UNRECORDED_TEXT_PATH
    assert recorded_text_path(older) == UNRECORDED_TEXT_PATH


def test_an_older_text_path_is_refused_in_one_line_unless_accepted():
    check_text_path(TEXT_PATH, "records/stats.json")
    check_text_path(UNRECORDED_TEXT_PATH, "records/stats.json", accept=True)
    with pytest.raises(ValueError) as error:
        check_text_path(UNRECORDED_TEXT_PATH, "records/stats.json")
    message = str(error.value)
    assert "\n" not in message
    assert UNRECORDED_TEXT_PATH in message and TEXT_PATH in message
    assert "records/stats.json" in message and "--accept_old_text_path" in message
