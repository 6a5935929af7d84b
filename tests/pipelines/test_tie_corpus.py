"""The writer's ids equal SentencePiece's on whole sentences, on a corpus of unigram ties.

SentencePiece's unigram encoder keeps, at each byte of the sentence, the best float32 score of a
path ending there, summed left to right from the sentence's start. Two segmentations of a word
with equal (or nearly equal) real scores, such as `▁uh h hh` and `▁uh hh h` (the same pieces in
another order), are then told apart by how float32 rounds each sum, which depends on the score
of everything before the word: `uhhhh` alone and inside a sentence can give different pieces. An
encoder that encodes each distinct word once (the former word cache) cannot give SentencePiece's
ids, and two writers that batch a corpus differently (local and Beam) wrote different bytes.
"""

import random
from itertools import chain

import numpy as np
import pytest
import sentencepiece as spm
from release_tarball import train_tiny_sentencepiece

from pipelines.pretraining_data import main, write_pretraining_data
from pipelines.tokenization import SentencePieceEncoder

SPM = "vocab/30k-clean.reconstructed.model"
TIE_WORDS = [
    "uhhhh", "uhhhhhhh", "aaaaaaaaaaaa", "zzzzzzz", "!!!!!!", "?!?!?!", "......", "----",
    "hmmmmm", "noooooo", "--", "...", "ha-ha-ha-ha", "lalalala", "xxxxxxxxxxxxxxxxxxxxxxx",
]  # fmt: skip
_PROSE_LINES = [
    "girl #2: uhhhh marshall no. It was the best of times, it was the worst of times; the cat",
    "sat on the mat and the dog barked at the postman. Overruling the objection, the judge",
    "said nothing imaginable would change his mind. She laughed and said so softly, then left.",
]
PROSE = [word for line in _PROSE_LINES for word in line.split()]
# Training text (" . " between sentences) where doubled characters sit inside words, so that the
# tiny model holds pieces such as "hh" beside "h": the ties of `uhhhh` in a 48-piece model.
_DOUBLES = ["hh", "aa", "zz", "!!", "..", "--", "oo"]
_TINY_WORDS = [c + d + c for d in _DOUBLES for c in "bcdkmst"] + [
    c + d for d in _DOUBLES for c in "uoe"
]
TINY_TRAINING_TEXT = " . ".join(
    [" ".join(_TINY_WORDS[i : i + 6]) for i in range(0, len(_TINY_WORDS), 6)] * 20
    + ["the cat sat on the mat", "a dog barked at the cat"] * 20
)


def tie_corpus(count: int, seed: int) -> list[str]:
    """Sentences mixing tie words with prose at random places: each tie word meets many
    prefixes (so many float32 scores before it)."""
    rng = random.Random(seed)
    sentences = ["girl #2: uhhhh marshall no.", "uhhhh", "uhhhh marshall", *TIE_WORDS]
    for _ in range(count):
        words = rng.choices(PROSE, k=rng.randint(0, 60))
        for _ in range(rng.randint(1, 4)):
            words.insert(rng.randint(0, len(words)), rng.choice(TIE_WORDS))
        sentences.append(" ".join(words))
    return sentences


def fuzzed_corpus(count: int, seed: int) -> list[str]:
    """Random strings over a small alphabet, made of runs of one character or of a short motif."""
    rng = random.Random(seed)
    alphabet = "ahuzo!?.- "
    sentences = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 25)):
            motif = "".join(rng.choices(alphabet, k=rng.choice([1, 1, 2, 3])))
            parts.append(motif * rng.randint(1, 9))
        sentences.append("".join(parts))
    return sentences


def split(ids, lengths):
    return [part.tolist() for part in np.split(ids, np.cumsum(lengths)[:-1])]


def whole_sentence_ids(model_file, encoder, sentences):
    """SentencePiece on each whole prepared sentence."""
    processor = spm.SentencePieceProcessor(model_file=str(model_file))
    return processor.encode(encoder.preprocess(sentences))


@pytest.fixture(scope="module")
def tiny_tie_model(tmp_path_factory):
    return train_tiny_sentencepiece(
        tmp_path_factory.mktemp("tie") / "tiny", text=TINY_TRAINING_TEXT, vocab_size=100
    )


@pytest.fixture(scope="module", params=["tiny", "release"])
def model_file(request, tiny_tie_model):
    if request.param == "tiny":
        return tiny_tie_model
    return request.getfixturevalue("shared_data") / SPM


def piece_scores(processor, dtype) -> dict:
    """Each piece's UTF-8 bytes -> (id, score as `dtype`), for the pieces text can hold."""
    scores = {}
    for i in range(processor.get_piece_size()):
        if not (processor.is_control(i) or processor.is_unknown(i) or processor.is_unused(i)):
            scores[processor.id_to_piece(i).encode()] = (i, dtype(processor.get_score(i)))
    return scores


def viterbi(scores: dict, normalized: str, dtype) -> list[int]:
    """SentencePiece's optimized unigram Viterbi (`Model::EncodeOptimized`), re-done in Python:
    for each byte where a character starts, every piece from there updates the best path ending
    where it ends when `score + best_so_far` (in `dtype`) is strictly greater, so the earliest
    start wins an exact tie. `normalized` holds no unknown character."""
    text = normalized.encode()
    longest = max(map(len, scores))
    best = [[dtype(0), -1, -1] for _ in range(len(text) + 1)]  # score, id, start
    for start in range(len(text)):
        if 0x80 <= text[start] < 0xC0:
            continue  # not the first byte of a character
        for end in range(start + 1, min(len(text), start + longest) + 1):
            piece = scores.get(text[start:end])
            if piece is not None:
                candidate = piece[1] + best[start][0]
                if best[end][2] == -1 or candidate > best[end][0]:
                    best[end] = [candidate, piece[0], start]
    ids, end = [], len(text)
    while end > 0:
        ids.append(best[end][1])
        end = best[end][2]
    return ids[::-1]


def test_sentencepiece_breaks_a_tie_by_the_score_before_the_word(shared_data):
    processor = spm.SentencePieceProcessor(model_file=str(shared_data / SPM))
    pieces = processor.encode(["uhhhh", "girl #2: uhhhh marshall no."], out_type=str)
    assert pieces[0] == ["\u2581uh", "h", "hh"]
    assert pieces[1][3:6] == ["\u2581uh", "hh", "h"]
    # The two orders score the same in real numbers ...
    h, hh = (processor.get_score(processor.piece_to_id(p)) for p in ("h", "hh"))
    assert (h + hh) - (hh + h) == 0
    # ... and float32 sums from the sentence's start reproduce SentencePiece, float64 ones not.
    sentences = tie_corpus(300, seed=3)
    expected = processor.encode(sentences)
    # The re-done Viterbi has no <unk> node: sentences with an unknown character are left out.
    sentences = [s for s, ids in zip(sentences, expected) if processor.unk_id() not in ids]
    expected = processor.encode(sentences)
    normalized = ["".join(p) for p in processor.encode(sentences, out_type=str)]
    assert len(sentences) > 100
    float32, float64 = (piece_scores(processor, dtype) for dtype in (np.float32, np.float64))
    in_float32 = [viterbi(float32, text, np.float32) for text in normalized]
    in_float64 = [viterbi(float64, text, np.float64) for text in normalized]
    assert in_float32 == expected
    assert sum(a != b for a, b in zip(in_float64, expected)) > 10


def test_a_near_tie_of_different_pieces_also_depends_on_the_sentence(shared_data):
    """Not only runs of a repeated character: `overruling`'s two best segmentations differ by
    8.9e-5, which float32 rounding after a long prefix (|score| ~ 1e4) can overturn."""
    processor = spm.SentencePieceProcessor(model_file=str(shared_data / SPM))
    best, second = processor.nbest_encode("overruling", nbest_size=2)
    alone = processor.encode("overruling")
    rng = random.Random(0)
    flipped = 0
    for _ in range(10):
        prefix = " ".join(rng.choices(PROSE, k=1000))
        before = processor.encode(prefix)
        flipped += processor.encode(prefix + " overruling")[len(before) :] != alone
    assert best != second and flipped > 0


@pytest.mark.parametrize("corpus", [tie_corpus, fuzzed_corpus])
def test_ids_equal_whole_sentence_sentencepiece_in_any_batches(model_file, corpus):
    encoder = SentencePieceEncoder(str(model_file))
    sentences = corpus(1500, seed=1)
    expected = whole_sentence_ids(model_file, encoder, sentences)
    rng = random.Random(2)
    for _ in range(2):  # the same ids whatever the batches (the local writer's and Beam's)
        got, start = [], 0
        while start < len(sentences):
            size = rng.choice([1, 7, 100, 1000])
            got += split(*encoder.encode(sentences[start : start + size]))
            start += size
        assert got == expected


def test_the_tiny_model_has_ties_the_test_can_meet(tiny_tie_model):
    """The tiny model's runs do tie: some fuzzed word encodes otherwise inside its sentence."""
    processor = spm.SentencePieceProcessor(model_file=str(tiny_tie_model))
    sentences = fuzzed_corpus(1500, seed=1) + tie_corpus(1500, seed=1)
    whole = processor.encode(sentences)
    by_word = [list(chain.from_iterable(processor.encode(s.split()))) for s in sentences]
    assert sum(a != b for a, b in zip(whole, by_word)) > 0


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_beam_writes_the_local_writers_bytes_on_a_tie_corpus(shared_data, tmp_path):
    """Two documents per group, several groups per worker: the local writer and two Beam
    workers see the corpus in different batches."""
    documents = []
    for seed in range(40):
        sentences = tie_corpus(60, seed) + fuzzed_corpus(20, seed)
        documents.append("\n".join(sentences))
    corpus = tmp_path / "ties.txt"
    corpus.write_text("\n\n".join(documents) + "\n")
    settings = {"max_seq_length": 64, "num_shards": 2, "group_chars": 1 << 14, "dupe_factor": 1}
    spm_model = str(shared_data / SPM)
    local = write_pretraining_data(
        input=str(corpus),
        spm_model=spm_model,
        output_dir=str(tmp_path / "local"),
        progress=False,
        **settings,
    )
    arguments = ["--input", str(corpus), "--spm_model", spm_model, "--quiet"]
    arguments += ["--output_dir", str(tmp_path / "beam")]
    arguments += [f"--{name}={value}" for name, value in settings.items()]
    arguments += ["--runner", "DirectRunner", "--direct_num_workers=2"]
    arguments += ["--direct_running_mode=multi_processing"]
    assert main(arguments) == 0
    shards = sorted(p.name for p in (tmp_path / "local").glob("*.tfrecord"))
    assert len(shards) == 2 and local["examples"] > 300
    for name in shards:
        assert (tmp_path / "beam" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def test_flat_ids_and_lengths_of_tricky_sentences(model_file):
    """Empty and blank sentences give length 0; unknown characters, Unicode spaces and a long
    word keep SentencePiece's ids; the arrays are int32."""
    sentences = ["Hello, my dog", "", "   ", "Café ﬁ ①\u00a0x", "zero\u200bwidth", "x" * 3000]
    encoder = SentencePieceEncoder(str(model_file))
    ids, lengths = encoder.encode(sentences)
    assert split(ids, lengths) == whole_sentence_ids(model_file, encoder, sentences)
    assert lengths[1] == lengths[2] == 0 and ids.dtype == lengths.dtype == np.int32
    ids, lengths = encoder.encode([])
    assert ids.shape == lengths.shape == (0,)
