"""A pretrain run records its vocabulary's sha256 in summary.json; fine-tuning from the
model.keras or backbone.keras it saved (whose configs carry no vocabulary) reads it there and
refuses another --spm_model in one line naming both files."""

import json
import shutil

import pytest
from release_tarball import train_tiny_sentencepiece

from albert_keras import AlbertClassifier
from albert_keras.training.model_files import load_keras_file
from albert_keras_cli.main import main
from albert_keras_contracts.vocabulary_identity import check_model_vocabulary, file_sha256
from pipelines.pretraining_data import write_pretraining_data

SENTENCES = ["The cat sat on the mat.", "A dog ran in the park.", "It was a fine day."]
TINY = ["--config=num_layers=1", "--config=num_heads=2", "--config=embedding_dim=8"]
TINY += ["--config=hidden_dim=16", "--config=intermediate_dim=32"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, tiny_spm):
    """Writer records made with the tiny (29-piece) vocabulary, another vocabulary, and a
    GLUE folder holding a few SST-2 rows."""
    root = tmp_path_factory.mktemp("run_vocabulary")
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
    (root / "glue" / "SST-2").mkdir(parents=True)
    rows = "".join(f"{s}\t{i % 2}\n" for i, s in enumerate(SENTENCES * 3))
    for split in ("train", "dev"):
        (root / "glue" / "SST-2" / f"{split}.tsv").write_text("sentence\tlabel\n" + rows)
    squad = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{
        "context": SENTENCES[0], "qas": [{"id": "q1", "question": "Where did the cat sit?",
        "answers": [{"text": "the mat", "answer_start": 15}]}]}]}]}  # fmt: skip
    (root / "dev-v1.json").write_text(json.dumps(squad))
    other = train_tiny_sentencepiece(root / "other", vocab_size=40, model_type="char")
    return {
        "records": str(root / "records" / "*.tfrecord"),
        "glue": str(root / "glue"),
        "squad": str(root / "dev-v1.json"),
        "tiny": str(tiny_spm),
        "other": str(other),
    }


@pytest.fixture(scope="module")
def run(inputs, tmp_path_factory):
    """A two-step pretrain run given --spm_model."""
    out = tmp_path_factory.mktemp("pretrain") / "run"
    argv = ["pretrain", "--records", inputs["records"], "--batch_size", "4", "--max_steps", "2",
            "--spm_model", inputs["tiny"], "--output_dir", str(out), *TINY]  # fmt: skip
    assert main(argv) == 0
    return out


def one_error_line(capsys):
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def glue_argv(inputs, model, output_dir):
    return ["finetune-glue", "--task", "SST-2", "--glue_dir", inputs["glue"], "--init_from",
            str(model), "--output_dir", str(output_dir), "--max_steps", "1", "--batch_size",
            "4", "--max_seq_length", "32", "--eval_every", "1"]  # fmt: skip


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_pretrain_records_the_vocabulary_sha256(run, inputs):
    summary = json.loads((run / "summary.json").read_text())
    assert summary["vocabulary_sha256"] == file_sha256(inputs["tiny"])


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_without_spm_model_the_records_stats_give_it(inputs, tmp_path):
    out = tmp_path / "run"
    argv = ["pretrain", "--records", inputs["records"], "--batch_size", "4", "--max_steps", "1",
            "--config=vocabulary_size=29", "--output_dir", str(out), *TINY]  # fmt: skip
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["vocabulary"] is None
    assert summary["vocabulary_sha256"] == file_sha256(inputs["tiny"])


def test_finetune_glue_from_the_run_refuses_another_vocabulary(run, inputs, tmp_path, capsys):
    argv = glue_argv(inputs, run / "model.keras", tmp_path / "glue")
    assert main([*argv, "--spm_model", inputs["other"]]) == 2
    error = one_error_line(capsys)
    assert f"--spm_model {inputs['other']} (sha256 {file_sha256(inputs['other'])[:12]})" in error
    assert f"is not the vocabulary {run / 'model.keras'} was trained with" in error
    # model.keras carries its vocabulary (its preprocessor's); backbone.keras reads summary.json
    assert f"trained with (sha256 {file_sha256(inputs['tiny'])[:12]})" in error
    assert not (tmp_path / "glue" / "model.keras").exists()


def test_finetune_squad_from_the_backbone_refuses_another_vocabulary(run, inputs, tmp_path, capsys):
    argv = ["finetune-squad", "--version", "1.1", "--predict_file", inputs["squad"],
            "--model", str(run / "backbone.keras"), "--spm_model", inputs["other"],
            "--output_dir", str(tmp_path / "squad"), "--epochs", "0",
            "--max_seq_length", "32", "--max_query_length", "8", "--doc_stride", "8"]  # fmt: skip
    assert main(argv) == 2
    error = one_error_line(capsys)
    assert f"--spm_model {inputs['other']} (sha256 " in error
    assert f"is not the vocabulary {run / 'backbone.keras'} was trained with" in error
    assert f"({run / 'summary.json'}: sha256 {file_sha256(inputs['tiny'])[:12]})" in error


def test_the_run_models_are_checked_against_its_vocabulary(run, inputs):
    for name in ("model.keras", "backbone.keras"):
        path = str(run / name)
        assert check_model_vocabulary(load_keras_file(path), path, inputs["tiny"]) is None


@pytest.mark.slow  # ~30 s on 2 busy cores: a whole (one-step) fine-tuning run
def test_finetune_glue_from_the_run_accepts_its_vocabulary(run, inputs, tmp_path):
    argv = glue_argv(inputs, run / "model.keras", tmp_path / "glue")
    assert main([*argv, "--spm_model", inputs["tiny"]]) == 0
    metrics = json.loads((tmp_path / "glue" / "metrics.json").read_text())
    assert metrics["spm_model"] == inputs["tiny"] and metrics["train_examples"] == 9


def test_predict_reads_the_run_summary_beside_a_bare_classifier(run, inputs, tmp_path, capsys):
    # A classifier saved without a preprocessor, in a folder with its run's summary.json.
    backbone = load_keras_file(str(run / "backbone.keras"))
    AlbertClassifier(backbone, num_classes=2).save(tmp_path / "bare.keras")
    shutil.copy(run / "summary.json", tmp_path / "summary.json")
    (tmp_path / "lines.txt").write_text("\n".join(SENTENCES) + "\n")
    argv = ["predict", "--model", str(tmp_path / "bare.keras"), "--input",
            str(tmp_path / "lines.txt"), "--output", str(tmp_path / "out.jsonl"),
            "--sequence_length", "16"]  # fmt: skip
    assert main([*argv, "--spm_model", inputs["other"]]) == 2
    assert f"({tmp_path / 'summary.json'}: sha256 " in one_error_line(capsys)
    assert main([*argv, "--spm_model", inputs["tiny"]]) == 0
    err = capsys.readouterr().err.splitlines()  # matched: no note (nor a printed None)
    assert err == [f"3 predictions -> {tmp_path / 'out.jsonl'}"]
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 3
