"""`albert-keras predict`: GLUE dev scores equal finetune-glue's own, lines of text give one
JSON line each (the model's probabilities), and bad input is one line, exit 2, flag errors
before TensorFlow loads."""

import io
import json
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from finetuned_classifier import finetune_tiny_sst2

from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras_cli.main import main
from albert_keras_contracts.vocabulary_identity import file_sha256

LINES = ["a film I loved", "", "the cat sat on the mat", "Ünïcode ``quoted''", "dull\0 day"]


@pytest.fixture(scope="module")
def finetuned(tmp_path_factory, tiny_spm):
    """(model.keras, glue_dir, finetune-glue's metrics.json) of a tiny SST-2 run."""
    return finetune_tiny_sst2(tmp_path_factory.mktemp("finetuned"), tiny_spm)


@pytest.fixture(scope="module")
def loaded(finetuned):
    """(the fine-tuned model loaded, its probabilities on LINES): loaded and run once for the
    tests that compare the command's output with them."""
    model = keras.saving.load_model(finetuned[0])
    return model, tf.nn.softmax(model.predict(LINES, verbose=0), axis=-1).numpy()


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_glue_dev_score_equals_finetune_glues(finetuned, tmp_path, capsys):
    model_path, glue_dir, metrics = finetuned
    output = tmp_path / "scores.json"
    argv = ["predict", "--model", str(model_path), "--task", "SST-2", "--glue_dir", str(glue_dir),
            "--output", str(output)]  # fmt: skip
    assert main(argv) == 0
    accuracy = metrics["metrics"]["accuracy"]
    assert capsys.readouterr().out == f"SST-2 dev (8 examples): accuracy {accuracy:.4f}\n"
    written = json.loads(output.read_text())
    assert written["splits"] == {"dev": {"num_examples": 8, "metrics": {"accuracy": accuracy}}}
    assert main(argv) == 2  # the file exists now
    assert "exists: pass --overwrite" in capsys.readouterr().err
    assert main([*argv, "--overwrite"]) == 0


def test_lines_of_a_file_give_one_json_line_each(finetuned, loaded, tmp_path):
    model_path, _, _ = finetuned
    source, output = tmp_path / "lines.txt", tmp_path / "predictions.jsonl"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    argv = ["predict", "--model", str(model_path), "--input", str(source), "--output", str(output)]
    assert main(argv) == 0
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(LINES)
    probabilities = np.array([row["probabilities"] for row in rows])
    expected = loaded[1]
    np.testing.assert_allclose(probabilities, expected, rtol=0, atol=1e-6)
    assert [row["label"] for row in rows] == expected.argmax(axis=-1).tolist()
    assert [row["text"] for row in rows] == LINES  # each line says which input it answers
    assert all(next(iter(row)) == "text" for row in rows)


def test_stdin_to_stdout(finetuned, loaded, monkeypatch, capsys):
    model_path, _, _ = finetuned
    data = "\n".join(LINES[:3]).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["predict", "--model", str(model_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = loaded[1][:3]  # rows are independent: LINES[:3]'s own
    np.testing.assert_allclose([r["probabilities"] for r in rows], expected, rtol=0, atol=1e-6)


def _run_in_fresh_process(argv):
    """(exit code, stderr lines, whether TensorFlow was imported) of `albert-keras argv`."""
    script = (
        "import sys; from albert_keras_cli.main import main; rc = main(sys.argv[1:]); "
        "print('tensorflow' in sys.modules); sys.exit(rc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr.splitlines(), done.stdout.strip() == "True"


def test_flag_errors_are_one_line_before_tensorflow(finetuned, tmp_path):
    model_path, glue_dir, _ = finetuned
    model = ["--model", str(model_path)]
    taken = tmp_path / "taken.jsonl"
    taken.write_text("")
    cases = {
        "--model nowhere.keras: no such file": ["--model", "nowhere.keras"],
        f"--model {tmp_path} is a folder": ["--model", str(tmp_path)],
        "--task scores a GLUE dev file: it takes --glue_dir, not --input": [
            *model, "--task", "SST-2", "--glue_dir", str(glue_dir), "--input", str(taken)],
        "--task SST2: choose one of CoLA": [*model, "--task", "SST2", "--glue_dir", str(glue_dir)],
        "--task needs --glue_dir": [*model, "--task", "SST-2"],
        "no MRPC/ folder in it": [*model, "--task", "MRPC", "--glue_dir", str(glue_dir)],
        "--glue_dir needs --task": [*model, "--glue_dir", str(glue_dir)],
        "--input missing.txt: no such file": [*model, "--input", "missing.txt"],
        f"{taken} exists: pass --overwrite": [*model, "--output", str(taken)],
        "is the --input file": [*model, "--input", str(taken), "--output", str(taken),
                                "--overwrite"],
        "--batch_size must be positive, got 0": [*model, "--batch_size", "0"],
        "--doc_stride must be positive, got 0": [*model, "--doc_stride", "0"],
        "--max_seq_length needs --spm_model": [*model, "--max_seq_length", "16"],
        "--spm_model nowhere.model: no such file": [*model, "--spm_model", "nowhere.model"],
    }  # fmt: skip
    for message, argv in cases.items():
        rc, stderr, loaded_tensorflow = _run_in_fresh_process(["predict", *argv])
        assert (rc, len(stderr), loaded_tensorflow) == (2, 1, False), (message, stderr)
        assert stderr[0].startswith("albert-keras predict: error: ") and message in stderr[0]


def test_bad_lines_and_models_are_one_line(finetuned, tmp_path, capsys, tiny_spm):
    model_path, _, _ = finetuned
    source = tmp_path / "bad.txt"
    source.write_bytes(b"fine line\n\xff\xfe not utf-8\n")
    assert main(["predict", "--model", str(model_path), "--input", str(source)]) == 2
    assert capsys.readouterr().err == f"albert-keras predict: error: {source} line 2: not UTF-8 (invalid start byte)\n"  # fmt: skip
    source.write_text("a\tb\nno tab here\n")
    assert main(["predict", "--model", str(model_path), "--input", str(source), "--pairs"]) == 2
    assert capsys.readouterr().err == (
        f"albert-keras predict: error: {source} line 2: --pairs needs TEXT_A<tab>TEXT_B, "
        "found 0 tab(s)\n"
    )
    backbone_path = model_path.parent.parent / "backbone.keras"
    assert main(["predict", "--model", str(backbone_path), "--input", str(source)]) == 2
    assert f"{backbone_path}: AlbertBackbone is not an AlbertClassifier" in capsys.readouterr().err
    assert isinstance(keras.saving.load_model(backbone_path), AlbertBackbone)
    small = AlbertBackbone(
        vocabulary_size=20, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=16,
    )  # fmt: skip
    tokenizer = AlbertTokenizer(str(tiny_spm))
    mismatched = AlbertClassifier(small, preprocessor=AlbertPreprocessor(tokenizer, 16))
    mismatched.save(tmp_path / "mismatched.keras")
    argv = ["predict", "--model", str(tmp_path / "mismatched.keras"), "--input", str(source)]
    assert main(argv) == 2
    pieces = tokenizer.vocabulary_size()
    assert capsys.readouterr().err == (
        f"albert-keras predict: error: {tmp_path / 'mismatched.keras'}: its preprocessor's "
        f"vocabulary has {pieces} pieces but the model embeds only 20 tokens\n"
    )


def test_a_model_saved_without_preprocessor_reads_text_with_spm_model(finetuned, loaded, tmp_path,
                                                                      capsys):  # fmt: skip
    model_path, _, _ = finetuned
    finetuned_model, expected = loaded
    bare = AlbertClassifier(finetuned_model.backbone, num_classes=2)  # as saved before the fix
    bare.set_weights(finetuned_model.get_weights())
    bare_path = tmp_path / "bare.keras"
    bare.save(bare_path)
    source, output = tmp_path / "lines.txt", tmp_path / "out.jsonl"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    argv = ["predict", "--model", str(bare_path), "--input", str(source), "--output", str(output)]
    assert main(argv) == 2
    assert "saved without a preprocessor" in capsys.readouterr().err
    spm = model_path.parent.parent / "spm.model"
    assert main([*argv, "--spm_model", str(spm), "--sequence_length", "16"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{bare_path} carries no vocabulary sha256 (saved without one): --spm_model {spm} is "
        "not checked against it"
    )
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    np.testing.assert_allclose([r["probabilities"] for r in rows], expected, rtol=0, atol=1e-6)
    argv = ["predict", "--model", str(model_path), "--input", str(source), "--spm_model", str(spm)]
    assert main(argv) == 0  # the vocabulary it carries: accepted
    assert main([*argv, "--sequence_length", "8"]) == 2
    assert "carries its own sequence length (16)" in capsys.readouterr().err


def test_a_mismatched_vocabulary_is_refused_by_predict_and_finetune_glue(
    finetuned, tmp_path, capsys, shared_data
):
    model_path, glue_dir, _ = finetuned
    other = shared_data / "vocab" / "30k-clean.reconstructed.model"
    source = tmp_path / "lines.txt"
    source.write_text("a film I loved\n", encoding="utf-8")
    spm = model_path.parent.parent / "spm.model"
    refusal = (
        f"--spm_model {other} (sha256 {file_sha256(other)[:12]}) is not the vocabulary "
        f"{model_path} was trained with (sha256 {file_sha256(spm)[:12]}): give that one"
    )
    argv = [
        "predict",
        "--model",
        str(model_path),
        "--input",
        str(source),
        "--spm_model",
        str(other),
    ]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"albert-keras predict: error: {refusal}\n"
    argv = ["finetune-glue", "--task", "SST-2", "--glue_dir", str(glue_dir), "--init_from",
            str(model_path), "--spm_model", str(other), "--output_dir", str(tmp_path / "again"),
            "--max_steps", "1", "--batch_size", "4", "--max_seq_length", "16"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(refusal)
