"""The demo's untrained baseline carries its vocabulary as the pretrained model does, so its
fine-tuning has nothing to warn about (issue 46: "untrained/model.keras carries no vocabulary
sha256 (saved without one): --spm_model ... is not checked against it" in every demo)."""

import keras

from albert_keras.demo.demo_pretraining import save_untrained
from albert_keras.preprocessing import AlbertTokenizer
from albert_keras_contracts.vocabulary_identity import check_model_vocabulary

CONFIG = {"num_layers": 1, "num_heads": 2, "embedding_dim": 8, "hidden_dim": 16,
          "intermediate_dim": 32}  # fmt: skip


def test_the_untrained_model_carries_its_vocabulary(tmp_path, tiny_spm):
    pieces = AlbertTokenizer(str(tiny_spm)).vocabulary_size()
    path = tmp_path / "untrained" / "model.keras"
    save_untrained(path, pieces, CONFIG, 16, 1, str(tiny_spm))
    loaded = keras.saving.load_model(path)
    assert loaded.preprocessor.sequence_length == 16
    assert check_model_vocabulary(loaded, str(path), str(tiny_spm)) is None  # no note
    bare = tmp_path / "bare" / "model.keras"  # as before: the note the demo printed
    save_untrained(bare, pieces, CONFIG, 16, 1)
    note = check_model_vocabulary(keras.saving.load_model(bare), str(bare), str(tiny_spm))
    assert "carries no vocabulary sha256" in note
