"""`WordEncodingCache`: word-by-word ids equal SentencePiece's on whole prepared sentences."""

import random

import numpy as np
import pytest
import sentencepiece as spm
from release_tarball import train_tiny_sentencepiece

from pipelines.documents import iter_documents
from pipelines.tokenization import SentencePieceEncoder
from pipelines.word_encoding_cache import WordEncodingCache

SPM = "vocab/30k-clean.reconstructed.model"

# Every way a sentence's preparation or encoding could reach across a space, or a batch's joints
# could go wrong: Unicode whitespace, lone and stacked combining marks (dropped: a word can
# become empty), characters NFKD turns into a space (U+00A8, U+00B4), LaTeX quotes at word edges,
# the final sigma, upper case, ligatures, Hangul (NFKD splits, NFKC joins), characters with no
# piece (<unk>), zero-width and control characters SentencePiece drops, empty and blank
# sentences, and a very long word.
TRICKY = [
    "Hello, my dog is cute",
    "",
    "   ",
    "  ``Quoted'' text ''and`` more  ",
    "tab\tvertical\x0bsep\x1cnel\x85nbsp\u00a0thin\u2009ideo\u3000end",
    "Café Crème brûlée NAÏVE ﬁ ① Ångström",
    "a \u0301 b \u0301\u0308 c\u0301",
    "diaeresis \u00a8 acute\u00b4x y\u00a8",
    "ΟΔΟΣ ΣΟΦΟΣ όσος Σ",
    "한국어 텍스트 입니다",
    "snow \u2603\u2603 man \u2603 ☃x",
    "zero\u200bwidth \u200b \x01control\x7f \ufeffbom",
    "“curly” ‘quotes’ — dashes – and… ellipses",
    "x" * 3000 + " short",
    "Mr. Bennet's 1,234.56 e-mail: a@b.c [SEP] <unk> ▁ ▁▁x",
]


def reference(model_file, encoder, sentences):
    """SentencePiece on each whole prepared sentence: the ids the writer has always written."""
    processor = spm.SentencePieceProcessor(model_file=str(model_file))
    return processor.encode(encoder.preprocess(sentences))


def split(ids, lengths):
    return [part.tolist() for part in np.split(ids, np.cumsum(lengths)[:-1])]


@pytest.fixture(scope="module")
def release_model(shared_data):
    return shared_data / SPM


def test_release_model_is_encoded_word_by_word_with_its_ids(release_model):
    encoder = SentencePieceEncoder(str(release_model))
    assert encoder.word_cache is not None
    ids, lengths = encoder.encode(TRICKY)
    assert split(ids, lengths) == reference(release_model, encoder, TRICKY)
    assert lengths[1] == lengths[2] == 0
    assert ids.dtype == lengths.dtype == np.int32


def test_tricky_sentences_in_random_batches_and_orders(release_model):
    encoder = SentencePieceEncoder(str(release_model))
    rng = random.Random(0)
    sentences = [rng.choice(TRICKY) for _ in range(300)]
    sentences += [" ".join(rng.sample(" ".join(TRICKY).split(), 12)) for _ in range(300)]
    expected = reference(release_model, encoder, sentences)
    got, start = [], 0
    while start < len(sentences):
        size = rng.randint(1, 40)
        got += split(*encoder.encode(sentences[start : start + size]))
        start += size
    assert got == expected


def test_fuzzed_unicode_sentences(release_model):
    """Random code points up to U+3000 with spaces, quotes, ligatures, Hangul, zero-width."""
    rng = random.Random(1)
    pool = [chr(c) for c in [*range(0x20, 0x7F)] * 5 + [*range(0x80, 0x3000)]]
    pool += [chr(c) for c in [*range(0xFB00, 0xFB07), *range(0xAC00, 0xAC20), 0x200B, 0xFEFF]]
    pool += [" "] * 200 + ["``", "''"] * 20
    sentences = ["".join(rng.choices(pool, k=rng.randint(0, 60))) for _ in range(2000)]
    encoder = SentencePieceEncoder(str(release_model))
    got = []
    for start in range(0, len(sentences), 500):
        got += split(*encoder.encode(sentences[start : start + 500]))
    assert got == reference(release_model, encoder, sentences)


def test_six_books_ids_equal_whole_sentence_encoding(release_model, shared_data):
    encoder = SentencePieceEncoder(str(release_model))
    books = str(shared_data / "corpus/gutenberg/[0-9]*.txt")
    sentences = [s for document in iter_documents(books) for s in document]
    assert len(sentences) > 70_000
    expected = reference(release_model, encoder, sentences)
    got = []
    for start in range(0, len(sentences), 5000):
        got += split(*encoder.encode(sentences[start : start + 5000]))
    assert got == expected
    # Zipf: far fewer distinct words than words, so most are look-ups.
    assert len(encoder.word_cache) < 0.1 * sum(len(s.split()) for s in sentences)


def test_each_distinct_word_is_encoded_once(release_model):
    processor = spm.SentencePieceProcessor(model_file=str(release_model))
    encoder = SentencePieceEncoder(str(release_model))
    calls = []

    def encode_texts(texts):
        calls.append(list(texts))
        return processor.encode(texts)

    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    cache = WordEncodingCache(encoder.preprocess, encode_texts, pieces)
    first = cache.encode(["the cat sat", "The cat"])
    encoded_words = sum(len(" ".join(batch).split()) for batch in calls)
    assert encoded_words == 4 and len(cache) == 4  # the, cat, sat, The
    second = cache.encode(["The cat sat", "the the the"])
    assert len(calls) == 1  # nothing new: no SentencePiece call
    assert second[0].tolist() == first[0][[3, 4, 2, 0, 0, 0]].tolist()
    assert second[1].tolist() == [3, 3]


def test_bounded_cache_empties_and_stays_exact(release_model):
    processor = spm.SentencePieceProcessor(model_file=str(release_model))
    encoder = SentencePieceEncoder(str(release_model))
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    cache = WordEncodingCache(encoder.preprocess, processor.encode, pieces, max_words=20)
    expected = reference(release_model, encoder, TRICKY)
    got = []
    for sentence in TRICKY * 3:
        got += split(*cache.encode([sentence]))
        assert len(cache) <= 20 + len(sentence.split())  # emptied once past the bound
    assert got == expected * 3
    small = WordEncodingCache(encoder.preprocess, processor.encode, pieces, max_chars=100)
    small.encode(["x" * 3000 + " y"])
    assert len(small) == 0


def test_a_sentence_holding_the_separator_is_left_to_whole_encoding(release_model):
    encoder = SentencePieceEncoder(str(release_model))
    sentences = ["before", "a \x00 nul", "after\x00"]
    ids, lengths = encoder.encode(sentences)
    assert split(ids, lengths) == reference(release_model, encoder, sentences)
    assert encoder.word_cache.encode(sentences) is None
    assert encoder.word_cache.encode([]) is None


def test_tiny_trained_model_is_exact_too(tmp_path):
    model = train_tiny_sentencepiece(tmp_path / "tiny")
    encoder = SentencePieceEncoder(str(model))
    assert encoder.word_cache is not None
    ids, lengths = encoder.encode(TRICKY)
    assert split(ids, lengths) == reference(model, encoder, TRICKY)


def test_models_that_encode_across_words_are_refused():
    def by_words(texts):
        return [[len(w) for w in t.split()] for t in texts]

    assert WordEncodingCache.supports(["<unk>", "\u2581", "\u2581it", "is"], by_words)
    # A piece spanning two words, or no lone "▁" piece (a space could merge into <unk>).
    assert not WordEncodingCache.supports(["\u2581", "\u2581new\u2581york"], by_words)
    assert not WordEncodingCache.supports(["<unk>", "\u2581it"], by_words)
    # No dummy prefix / extra spaces kept: a word alone encodes otherwise than in a sentence.
    assert not WordEncodingCache.supports(["\u2581"], lambda texts: [list(t) for t in texts])


def test_model_without_dummy_prefix_encodes_whole_sentences(tmp_path):
    model = train_tiny_sentencepiece(tmp_path / "nodummy", add_dummy_prefix=False)
    encoder = SentencePieceEncoder(str(model))
    assert encoder.word_cache is None
    ids, lengths = encoder.encode(["the cat", "it is cute"])
    assert split(ids, lengths) == reference(model, encoder, ["the cat", "it is cute"])


def test_an_error_while_encoding_new_words_leaves_the_cache_empty(release_model):
    processor = spm.SentencePieceProcessor(model_file=str(release_model))
    encoder = SentencePieceEncoder(str(release_model))
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    failing = [False]

    def encode_texts(texts):
        if failing[0]:
            raise RuntimeError("encoder failed")
        return processor.encode(texts)

    cache = WordEncodingCache(encoder.preprocess, encode_texts, pieces)
    cache.encode(["the cat"])
    failing[0] = True
    with pytest.raises(RuntimeError, match="encoder failed"):
        cache.encode(["a new dog"])
    assert len(cache) == 0
    failing[0] = False
    ids, lengths = cache.encode(["a new dog", "the cat"])
    assert split(ids, lengths) == processor.encode(["a new dog", "the cat"])
