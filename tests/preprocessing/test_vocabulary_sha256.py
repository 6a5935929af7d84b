"""AlbertTokenizer records its vocabulary's sha256 in its config, so every saved model that
carries one carries the vocabulary's identity (issue #30); and its offsets path for SQuAD."""

import json
import zipfile

import keras
import numpy as np
import pytest

from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras_contracts.vocabulary_identity import check_model_vocabulary, file_sha256


@pytest.fixture(scope="module")
def release_vocabulary(shared_data):
    return shared_data / "vocab" / "30k-clean.reconstructed.model"


def _saved_preprocessor(tmp_path, spm):
    wrapper = keras.Sequential([AlbertPreprocessor(AlbertTokenizer(str(spm)), 16)])
    wrapper.build(None)
    path = tmp_path / "preprocessor.keras"
    wrapper.save(path)
    return path


def _rewrite_config(path, edit):
    """A copy of a .keras file with its config.json edited by `edit(tokenizer_config)`."""
    edited = path.with_name("edited.keras")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(edited, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                layer = config["config"]["layers"][0]["config"]
                edit(layer["tokenizer"]["config"])
                data = json.dumps(config).encode()
            target.writestr(item, data)
    return edited


def test_the_config_holds_the_sha256_of_the_model_file(tiny_spm, release_vocabulary, tmp_path):
    tokenizer = AlbertTokenizer(str(tiny_spm))
    assert tokenizer.vocabulary_sha256 == file_sha256(tiny_spm)
    assert tokenizer.get_config()["vocabulary_sha256"] == file_sha256(tiny_spm)
    path = _saved_preprocessor(tmp_path, release_vocabulary)
    restored = keras.saving.load_model(path).layers[0].tokenizer
    assert restored.vocabulary_sha256 == file_sha256(release_vocabulary)
    with zipfile.ZipFile(path) as saved:
        config = json.loads(saved.read("config.json"))
    recorded = config["config"]["layers"][0]["config"]["tokenizer"]["config"]
    assert recorded["vocabulary_sha256"] == file_sha256(release_vocabulary)


def test_an_asset_that_is_not_the_recorded_vocabulary_is_refused(tiny_spm, tmp_path):
    path = _saved_preprocessor(tmp_path, tiny_spm)
    edited = _rewrite_config(path, lambda c: c.update(vocabulary_sha256="ab" * 32))
    with pytest.raises(ValueError, match="sha256 .* is not the abababababab this tokenizer"):
        keras.saving.load_model(edited)


def test_an_old_file_without_the_sha256_still_loads(tiny_spm, tmp_path):
    path = _saved_preprocessor(tmp_path, tiny_spm)
    old = _rewrite_config(path, lambda c: c.pop("vocabulary_sha256"))
    restored = keras.saving.load_model(old).layers[0].tokenizer
    assert restored.vocabulary_sha256 == file_sha256(tiny_spm)  # known from its asset


def test_check_model_vocabulary_names_both(tiny_spm, release_vocabulary):
    model = keras.Model()
    model.preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), 16)
    assert check_model_vocabulary(model, "m.keras", str(tiny_spm)) is None
    with pytest.raises(ValueError) as error:
        check_model_vocabulary(model, "m.keras", str(release_vocabulary))
    assert str(error.value) == (
        f"--spm_model {release_vocabulary} (sha256 {file_sha256(release_vocabulary)[:12]}) is "
        f"not the vocabulary m.keras was trained with (sha256 {file_sha256(tiny_spm)[:12]}): "
        "give that one"
    )
    note = check_model_vocabulary(keras.Model(), "old.keras", str(tiny_spm))
    assert note == (
        f"old.keras carries no vocabulary sha256 (saved without one): --spm_model {tiny_spm} "
        "is not checked against it"
    )


def test_offsets_are_the_tokenizers_pieces(release_vocabulary):
    tokenizer = AlbertTokenizer(str(release_vocabulary))
    texts = ["hello, my dog is cute", "naïve café", "", "born in 1990, 1,000 men"]
    normalized = ["hello, my dog is cute", "naive cafe", "", "born in 1990, 1,000 men"]
    encoded = tokenizer.encode_normalized_with_offsets(normalized)
    # SentencePiece's own pieces: the official digit-comma split ("▁1990," -> "▁1990" ",") is
    # the caller's (SQuAD's `context_pieces`), by the tokenizer's `digit_comma_splits`.
    splits = tokenizer.digit_comma_splits
    split = [[j for i in ids.tolist() for j in splits.get(i, (i,))] for ids, _, _ in encoded]
    assert split == tokenizer(texts).to_list()
    assert encoded[3][0].tolist() != split[3]  # "▁1990," is one piece before the split
    _, begins, ends = encoded[0]
    pieces = [normalized[0].encode()[b:e].decode() for b, e in zip(begins, ends)]
    assert pieces == ["hello", ",", " my", " dog", " is", " cute"]
    assert encoded[2][0].size == 0 and tokenizer.encode_normalized_with_offsets([]) == []
    assert np.all(begins < ends)
