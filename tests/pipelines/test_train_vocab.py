"""The vocabulary trainer: ALBERT's special pieces, sampling, determinism, the command."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import sentencepiece as spm

from pipelines import tokenization
from pipelines import train_vocab as tv
from pipelines.documents import iter_documents
from pipelines.sentencepiece_proto import sentencepiece_model_pb2

BOOK = "corpus/gutenberg/1342-0.txt"  # Pride and Prejudice, its first 160 kB


def _proto(path):
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(_read(path))
    return model


def _read(path) -> bytes:
    return pathlib.Path(path).read_bytes()


def _summary(prefix) -> dict:
    return json.loads(_read(prefix + ".summary.json"))


def _release_model(shared_data):
    return str(shared_data / "vocab" / "30k-clean.reconstructed.model")


@pytest.fixture(scope="module")
def trained(shared_data, tmp_path_factory):
    """One lower-cased model on one book, shared by the tests that only read it."""
    prefix = str(tmp_path_factory.mktemp("vocab") / "out" / "spm")
    summary = tv.train_vocab(
        str(shared_data / BOOK), prefix, vocab_size=600, lower_case=True, input_sentence_size=0
    )
    return prefix, summary


# === The release layout ===


def test_trained_model_has_the_release_special_pieces(trained, shared_data):
    prefix, summary = trained
    ours, release = _proto(prefix + ".model"), _proto(_release_model(shared_data))
    fixed = 5 + len(tv.USER_DEFINED_SYMBOLS)
    assert [(p.piece, p.type) for p in ours.pieces[:fixed]] == [
        (p.piece, p.type) for p in release.pieces[:fixed]
    ]
    # Only the fixed pieces are control / unknown / user-defined, in both.
    assert {p.type for p in ours.pieces[fixed:]} == {p.type for p in release.pieces[fixed:]} == {1}
    assert ours.normalizer_spec == release.normalizer_spec  # nmt_nfkc, the same char map
    assert len(ours.pieces) == summary["vocab_size"] == 600
    expected = {"<pad>": 0, "<unk>": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
    assert tv.read_special_ids(prefix + ".model") == expected
    assert tv.read_special_ids(_release_model(shared_data)) == expected
    assert summary["special_ids"] == expected


def test_trained_and_release_models_treat_text_alike(trained, shared_data):
    ours = spm.SentencePieceProcessor(model_file=trained[0] + ".model")
    release = spm.SentencePieceProcessor(model_file=_release_model(shared_data))
    text = "a [MASK] (said) \u00a3 5.0"
    for processor in (ours, release):
        pieces = processor.encode(text, out_type=str)
        ids = processor.encode(text)
        # Control symbols are never read from text (so "[MASK]" typed in a sentence is not
        # id 4); user-defined ones are always whole pieces.
        assert not {2, 3, 4} & set(ids)
        assert {"(", ")", "\u00a3", "."} <= set(pieces)
        assert [processor.id_to_piece(i) for i in (5, 6, 9, 11)] == ["(", ")", ".", "\u00a3"]
    assert release.encode("hello, my dog is cute") == [10975, 15, 51, 1952, 25, 10901]


def test_outputs_summary_and_lower_case(trained, shared_data):
    prefix, summary = trained
    assert sorted(os.listdir(os.path.dirname(prefix))) == [
        "spm.model",
        "spm.summary.json",
        "spm.vocab",
    ]
    assert _summary(prefix) == summary
    assert summary["lower_case"] is True
    read = len(_sentences(shared_data / BOOK))
    assert summary["sentences_read"] == summary["sentences_trained_on"] == read > 1500
    assert summary["read"]["files_read"] == 1 and summary["read"]["repaired"]["bom"]
    vocab = [line.split("\t") for line in _read(prefix + ".vocab").decode().splitlines()]
    assert [piece for piece, _ in vocab] == [p.piece for p in _proto(prefix + ".model").pieces]
    # Lower-cased input: no piece holds a capital letter.
    assert not [piece for piece, _ in vocab[5:] if piece != piece.lower()]


# === Sampling and determinism ===


def test_sample_sentences_is_uniform_and_seeded():
    items = [str(i) for i in range(100)]
    hits = np.zeros(100)
    for seed in range(400):
        sample, seen = tv.sample_sentences(iter(items), 10, seed)
        assert seen == 100 and len(set(sample)) == 10
        hits[[int(s) for s in sample]] += 1
    # Each item is kept with probability 0.1: 40 of 400 draws expected, sd ~6.
    assert abs(hits.mean() - 40) < 1e-9 and hits.min() > 15 and hits.max() < 65
    assert abs(hits[:50].sum() - hits[50:].sum()) < 200  # early and late items alike
    assert tv.sample_sentences(items, 10, 3) == tv.sample_sentences(items, 10, 3)
    assert tv.sample_sentences(items, 10, 3) != tv.sample_sentences(items, 10, 4)
    assert tv.sample_sentences(items, 0, 3) == (items, 100)
    assert tv.sample_sentences(items, 500, 3) == (items, 100)


def test_sample_sentences_holds_only_the_sample_in_memory():
    # Sentences that count how many of them are alive: streamed past a 1000-sentence reservoir,
    # at most the sample plus two batches of 65536 (the last and the one being read) live at
    # once, whatever the corpus size.
    alive = {"now": 0, "most": 0}

    class Sentence(str):
        def __new__(cls, text):
            alive["now"] += 1
            alive["most"] = max(alive["most"], alive["now"])
            return super().__new__(cls, text)

        def __del__(self):
            alive["now"] -= 1

    sentences = (Sentence(f"sentence {i}") for i in range(200_000))
    sample, seen = tv.sample_sentences(sentences, 1000, seed=0)
    assert seen == 200_000 and len(set(sample)) == 1000
    assert alive["most"] <= 1000 + 2 * (1 << 16) + 1 and alive["now"] == 1000


def _sentences(path):
    return [sentence for document in iter_documents(str(path)) for sentence in document]


def test_same_seed_same_bytes_other_seed_other_model(shared_data, tmp_path):
    read = len(_sentences(shared_data / BOOK))

    def train(name, seed):
        prefix = str(tmp_path / name)
        summary = tv.train_vocab(
            str(shared_data / BOOK), prefix, vocab_size=400, input_sentence_size=1500, seed=seed
        )
        assert summary["sentences_trained_on"] == 1500 and summary["sentences_read"] == read > 1500
        return _read(prefix + ".model"), open(prefix + ".vocab", "rb").read()

    first = train("a", seed=7)
    assert train("a", seed=7) == first  # rerun over the same prefix: identical files
    other = train("b", seed=8)
    assert other[1] != first[1]


def test_sentences_format(shared_data, tmp_path):
    # The official input format: a sentence a line, a blank line between documents.
    documents = list(iter_documents(str(shared_data / BOOK)))
    path = tmp_path / "sentences.txt"
    path.write_text("\n\n".join("\n".join(document) for document in documents) + "\n")
    summary = tv.train_vocab(
        str(path), str(tmp_path / "spm"), vocab_size=300, input_format="sentences",
        input_sentence_size=1000,
    )  # fmt: skip
    assert summary["sentences_read"] == sum(map(len, documents)) > 1000
    assert summary["read"]["documents"] == len(documents) > 20


# === The command and bad input ===


def test_command_line(shared_data, tmp_path, capsys):
    prefix = str(tmp_path / "spm")
    argv = ["--input", str(shared_data / BOOK), "--output_prefix", prefix, "--quiet"]
    assert tv.main(argv + ["--vocab_size", "350", "--max_sentences", "800"]) == 0
    assert f"wrote {prefix}.model" in capsys.readouterr().out
    assert _summary(prefix)["sentences_trained_on"] == 800
    assert _summary(prefix)["vocab_size"] == 350
    # Too many pieces for the text: one clear line, no file touched; then the way out.
    before = _read(prefix + ".model")
    assert tv.main(argv + ["--vocab_size", "20000", "--overwrite"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Vocabulary size too high" in error
    assert "--allow_smaller_vocab" in error and _read(prefix + ".model") == before
    assert tv.main(argv + ["--vocab_size", "20000", "--allow_smaller_vocab", "--overwrite"]) == 0
    assert 1000 < _summary(prefix)["vocab_size"] < 20000
    assert sorted(os.listdir(tmp_path)) == ["spm.model", "spm.summary.json", "spm.vocab"]


def test_missing_input_exits_non_zero_naming_the_pattern(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pipelines.train_vocab", "--input", f"{tmp_path}/none*.txt"]
        + ["--output_prefix", str(tmp_path / "spm")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2  # as every command's bad input (it was 1)
    assert (
        result.stderr
        == f"train_vocab: error: input pattern '{tmp_path}/none*.txt' matches no file\n"
    )
    assert os.listdir(tmp_path) == []


def test_input_without_text_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "image.txt").write_bytes(b"\x89PNG\x00\x00")
    argv = ["--input", f"{tmp_path}/*.txt", "--output_prefix", str(tmp_path / "out/spm")]
    assert tv.main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("train_vocab: error: no sentences to train on")
    assert "empty_file" in error and "binary_file" in error and "image.txt" in error
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


def test_existing_outputs_are_refused_without_overwrite(tmp_path, capsys):
    # The folder holds a user's files, one of them under the output's name.
    (tmp_path / "t.txt").write_text("A small corpus. " * 200 + "\n")
    (tmp_path / "spm.vocab").write_text("my own notes\n")
    argv = ["--input", str(tmp_path / "t.txt"), "--output_prefix", str(tmp_path / "spm")]
    argv += ["--vocab_size", "30", "--allow_smaller_vocab", "--quiet"]
    assert tv.main(argv) == 2
    error = capsys.readouterr().err
    assert error == (
        f"train_vocab: error: {tmp_path}/spm.vocab exists: pass --overwrite to replace it, "
        "or choose another name\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["spm.vocab", "t.txt"]
    assert (tmp_path / "spm.vocab").read_text() == "my own notes\n"
    assert tv.main([*argv, "--overwrite"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["spm.model", "spm.summary.json", "spm.vocab", "t.txt"]
    pieces = spm.SentencePieceProcessor(model_file=str(tmp_path / "spm.model"))
    lines = (tmp_path / "spm.vocab").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        pieces.id_to_piece(i) for i in range(pieces.get_piece_size())
    ]


def test_a_full_disk_is_one_line_naming_the_output(tmp_path):
    sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
    from full_disk import full_disk

    (tmp_path / "t.txt").write_text("A small corpus of words. " * 400 + "\n")
    with full_disk(tmp_path) as disk:
        prefix = disk.root / "vocab" / "spm"
        disk.fill()
        result = subprocess.run(
            [sys.executable, "-m", "pipelines.train_vocab", "--input", str(tmp_path / "t.txt")]
            + ["--output_prefix", str(prefix), "--vocab_size", "40", "--allow_smaller_vocab"]
            + ["--quiet"],
            check=False,
            capture_output=True,
            text=True,
            env=disk.env,
            cwd=pathlib.Path(tv.__file__).parents[1],
        )
        left = sorted(os.listdir(prefix.parent)) if prefix.parent.exists() else []
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"train_vocab: error: {prefix}.model: no space left on the device; free some space "
        "and rerun\n"
    )
    assert left == []


def test_too_long_sentences_are_counted(tmp_path):
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefgh"), size=rng.integers(2, 7))) for _ in range(300)]
    lines = [" ".join(rng.choice(words, size=12)) + "." for _ in range(400)]
    lines.insert(10, " ".join(rng.choice(words, size=1200)))  # ~6 KB, no full stop
    (tmp_path / "t.txt").write_text("\n\n".join(lines) + "\n")
    summary = tv.train_vocab(
        str(tmp_path / "t.txt"), str(tmp_path / "spm"), vocab_size=200, input_sentence_size=0
    )
    assert summary["sentences_too_long"] == 1
    assert summary["sentences_read"] == 401 and summary["sentences_trained_on"] == 400


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="vocab_size=10 leaves no room"):
        tv.train_vocab("x", str(tmp_path / "spm"), vocab_size=10)
    with pytest.raises(ValueError, match="input_sentence_size=-1"):
        tv.train_vocab("x", str(tmp_path / "spm"), input_sentence_size=-1)


def test_text_is_prepared_as_the_encoder_prepares_it(shared_data):
    # A vocabulary trained on text prepared otherwise than the text it encodes wastes pieces.
    sentences = [
        sentence
        for document in iter_documents(str(shared_data / "corpus/gutenberg/2600-0.txt"))
        for sentence in document
        if not sentence.isascii()
    ][:3000]
    assert any("é" in s for s in sentences) and any("“" in s for s in sentences)
    for lower_case in (False, True):
        encoder = tokenization.SentencePieceEncoder(
            _release_model(shared_data), lower_case=lower_case
        )
        ours = tv.preprocess_texts(sentences, lower_case)
        assert ours == encoder.preprocess(sentences)
        assert not any("é" in s for s in ours) and any("“" in s for s in ours)
