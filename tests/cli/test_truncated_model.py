"""A truncated `.keras` given to a command that fine-tunes or distils from it is named as such
(Keras itself says "File not found" of it), in one line (issue 30)."""

import keras
import pytest

from albert_keras.models import AlbertBackbone
from albert_keras.training.model_files import load_keras_file


def test_a_truncated_keras_file_is_called_truncated(tmp_path):
    backbone = AlbertBackbone(vocabulary_size=20, num_layers=1, num_heads=2, embedding_dim=8,
                              hidden_dim=8, intermediate_dim=16, max_sequence_length=16)  # fmt: skip
    whole = tmp_path / "model.keras"
    backbone.save(whole)
    truncated = tmp_path / "cut.keras"
    truncated.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(ValueError) as error:
        load_keras_file(truncated, "--teacher ")
    assert str(error.value) == (
        f"--teacher {truncated}: not a .keras file: not a whole zip archive (truncated, or "
        "another format)"
    )
    assert isinstance(load_keras_file(whole), keras.Model)
