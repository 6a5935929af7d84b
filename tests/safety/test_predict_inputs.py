"""`albert-keras predict` reads what it is given as what it is (issue 43): a SQuAD JSON file
given to a classifier is refused in one line (it was scored as one line of text), and a folder
given as --input is called a folder (not "no such file")."""

import json

import pytest

from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras_cli.main import main


@pytest.fixture(scope="module")
def classifier(tmp_path_factory, tiny_spm):
    backbone = AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8,
                              hidden_dim=16, intermediate_dim=32, max_sequence_length=32)  # fmt: skip
    preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), sequence_length=16)
    path = tmp_path_factory.mktemp("classifier") / "classifier.keras"
    AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor).save(path)
    return path


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == "", (lines, captured.out)
    return lines[0]


def test_a_squad_file_given_to_a_classifier_is_refused(classifier, tmp_path, capsys):
    squad = tmp_path / "dev.json"
    squad.write_text(json.dumps({"version": "v2.0", "data": [{"paragraphs": [{
        "context": "the cat sat", "qas": [{"id": "q", "question": "who?", "answers": []}]}]}]}))  # fmt: skip
    output = tmp_path / "predictions.jsonl"
    argv = ["predict", "--model", str(classifier), "--input", str(squad)]
    assert main([*argv, "--output", str(output)]) == 2
    assert _one_error_line(capsys) == (
        f"albert-keras predict: error: {squad} is a SQuAD file, but {classifier} is a "
        "classifier: give it lines of text (TEXT, or TEXT_A<tab>TEXT_B with --pairs), or give "
        "a question answerer as --model"
    )
    assert not output.exists()


def test_a_folder_given_as_input_is_called_a_folder(classifier, tmp_path, capsys):
    assert main(["predict", "--model", str(classifier), "--input", str(tmp_path)]) == 2
    assert _one_error_line(capsys) == (
        f"albert-keras predict: error: --input {tmp_path} is a folder: give a file"
    )


def test_a_null_threshold_that_is_not_a_number_is_refused(classifier, tmp_path, capsys):
    argv = ["predict", "--model", str(classifier), "--input", "-", "--null_threshold", "nan"]
    assert main(argv) == 2
    assert _one_error_line(capsys) == (
        "albert-keras predict: error: --null_threshold must be a finite number, got nan"
    )
