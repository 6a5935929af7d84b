"""pretrain and distill compare the vocabulary they are given with the one the records were
written with (the writer's stats.json), refuse a mismatch in one line, and record it."""

import json
import shutil

import pytest
from release_tarball import train_tiny_sentencepiece

import albert_keras as ak
from albert_keras_cli.main import main
from albert_keras_contracts.vocabulary_identity import file_sha256
from pipelines.pretraining_data import write_pretraining_data

SENTENCES = ["The cat sat on the mat.", "A dog ran in the park.", "It was a fine day."]
TINY = ["--config=num_layers=1", "--config=num_heads=2", "--config=embedding_dim=8"]
TINY += ["--config=hidden_dim=16", "--config=intermediate_dim=32"]


@pytest.fixture(scope="module")
def records(tmp_path_factory, tiny_spm):
    """Writer records made with the tiny (29-piece) vocabulary, and another vocabulary."""
    root = tmp_path_factory.mktemp("vocabulary")
    (root / "corpus").mkdir()
    text = "\n\n".join(" ".join(SENTENCES[i % 3 :] + SENTENCES[: i % 3]) for i in range(60))
    (root / "corpus" / "a.txt").write_text(text + "\n")
    write_pretraining_data(
        input=str(root / "corpus" / "*.txt"),
        spm_model=str(tiny_spm),
        output_dir=str(root / "records"),
        max_seq_length=32,
        max_predictions_per_seq=5,
        num_shards=1,
        paragraphs_per_document=4,
        progress=False,
    )
    other = train_tiny_sentencepiece(root / "other", vocab_size=40, model_type="char")
    return {
        "glob": str(root / "records" / "*.tfrecord"),
        "other": str(other),
        "tiny": str(tiny_spm),
    }


def one_error_line(capsys):
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_pretrain_refuses_another_vocabulary_and_records_the_right_one(records, tmp_path, capsys):
    argv = ["pretrain", "--records", records["glob"], "--batch_size", "4", "--max_steps", "1"]
    argv += TINY
    assert main([*argv, "--spm_model", records["other"], "--output_dir", str(tmp_path / "a")]) == 2
    error = one_error_line(capsys)
    assert "--spm_model " in error and "other.model (" in error
    assert "is not the vocabulary the records were written with (" in error
    assert "stats.json: 29 pieces, sha256 " + file_sha256(records["tiny"])[:12] in error
    assert not (tmp_path / "a" / "model.keras").exists()

    assert main([*argv, "--spm_model", records["tiny"], "--output_dir", str(tmp_path / "b")]) == 0
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["config"]["vocabulary"] == {
        "file": "tiny.model",
        "sha256": file_sha256(records["tiny"]),
        "pieces": 29,
    }
    assert file_sha256(str(tmp_path / "b" / "tiny.model")) == file_sha256(records["tiny"])


def test_distill_refuses_another_vocabulary(records, tmp_path, capsys):
    teacher = tmp_path / "teacher" / "model.keras"
    teacher.parent.mkdir()
    backbone = ak.AlbertBackbone(
        vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=32,
    )  # fmt: skip
    ak.AlbertPretrainer(backbone, "sop").save(teacher)
    shutil.copy(records["other"], teacher.parent / "other.model")  # found beside the teacher
    argv = ["distill", "--teacher", str(teacher), "--records", records["glob"]]
    argv += ["--output_dir", str(tmp_path / "out"), "--batch_size", "4", "--max_steps", "1"]
    assert main(argv) == 2
    error = one_error_line(capsys)
    assert "other.model (" in error and "stats.json: 29 pieces, sha256 " in error
    assert not (tmp_path / "out" / "model.keras").exists()
