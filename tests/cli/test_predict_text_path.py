"""`albert-keras predict` refuses a model trained on an older text path's ids (issue 42) in one
line naming both versions, unless `--accept_old_text_path`."""

import pytest

from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras_cli.main import main
from albert_keras_contracts.text_path import TEXT_PATH, UNRECORDED_TEXT_PATH


@pytest.mark.slow  # builds, saves and loads a classifier, predicts twice (~20 s under load)
def test_predict_refuses_an_older_text_path_unless_accepted(tmp_path, tiny_spm, capsys):
    backbone = AlbertBackbone(
        vocabulary_size=32, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=16,
    )  # fmt: skip
    tokenizer = AlbertTokenizer(str(tiny_spm), text_path=UNRECORDED_TEXT_PATH)
    model = AlbertClassifier(
        backbone, num_classes=2, preprocessor=AlbertPreprocessor(tokenizer, 16)
    )
    model.save(tmp_path / "old.keras")
    source = tmp_path / "lines.txt"
    source.write_text("the cat sat\n")
    argv = ["predict", "--model", str(tmp_path / "old.keras"), "--input", str(source)]
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(tmp_path / "old.keras") in lines[0]
    assert UNRECORDED_TEXT_PATH in lines[0] and TEXT_PATH in lines[0]
    assert main([*argv, "--accept_old_text_path"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1  # one prediction
