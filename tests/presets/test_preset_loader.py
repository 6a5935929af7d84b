"""from_preset on released weights: download once, check, convert once, then offline."""

import json

import keras
import numpy as np
import pytest
from release_helpers import same_weights

from albert_keras.convert import official_from_model, write_hf_folder
from albert_keras.models import AlbertBackbone, AlbertClassifier, AlbertPretrainer
from albert_keras.presets import (
    PresetFetchError,
    load_sentencepiece,
    load_with_fresh_parts,
    release_presets,
)


def test_release_converts_once_then_loads_from_the_cache_alone(
    served_release, release, preset_cache, capsys
):
    pretrainer = AlbertPretrainer.from_preset("albert_tiny_v2")
    assert same_weights(pretrainer, release["pretrainer"])  # backbone and both heads
    assert "Downloading data from file://" in capsys.readouterr().out
    record = json.loads((preset_cache / "presets/albert_tiny_v2/preset.json").read_text())
    download = record["downloads"][0]
    assert download["url"] == served_release.as_uri()
    assert download["size"] == served_release.stat().st_size
    assert len(download["sha256"]) == 64

    # The tarball is gone, from the "server" and from the downloads: the cache alone serves.
    served_release.rename(served_release.with_suffix(".moved"))
    for path in (preset_cache / "downloads").rglob("*.tar.gz"):
        path.unlink()
    backbone = AlbertBackbone.from_preset("albert_tiny_v2")
    assert same_weights(backbone, release["pretrainer"].backbone)
    assert "Downloading" not in capsys.readouterr().out
    assert load_sentencepiece("albert_tiny_v2") == release["spm_model"].read_bytes()


def test_a_corrupt_download_is_fetched_again_never_loaded(
    served_release, release, preset_cache, capsys
):
    AlbertBackbone.from_preset("albert_tiny_v2")
    capsys.readouterr()
    downloaded = next((preset_cache / "downloads").rglob("*.tar.gz"))
    # The converted model is lost and the download truncated (a disk problem, a bad copy).
    keras_file = preset_cache / "presets/albert_tiny_v2/pretrainer.keras"
    keras_file.write_bytes(keras_file.read_bytes()[:1000])
    downloaded.write_bytes(downloaded.read_bytes()[:5000])
    backbone = AlbertBackbone.from_preset("albert_tiny_v2")
    assert "Downloading data from file://" in capsys.readouterr().out  # fetched again
    assert same_weights(backbone, release["pretrainer"].backbone)
    assert downloaded.read_bytes() == served_release.read_bytes()


def test_an_unrecorded_partial_download_is_fetched_again(served_release, release, preset_cache):
    # What an interrupted first run leaves: part of the file, no record of a good one.
    partial = preset_cache / "downloads/albert_tiny_v2/albert_tiny_v2.tar.gz"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(served_release.read_bytes()[:3000])
    backbone = AlbertBackbone.from_preset("albert_tiny_v2")
    assert same_weights(backbone, release["pretrainer"].backbone)


def test_a_truncated_file_at_the_url_fails_and_caches_nothing(served_release, preset_cache):
    good = served_release.read_bytes()
    served_release.write_bytes(good[: len(good) // 2])
    with pytest.raises(PresetFetchError, match="does not convert .*not a readable tar") as error:
        AlbertBackbone.from_preset("albert_tiny_v2")
    assert served_release.as_uri() in str(error.value)
    assert not list((preset_cache / "downloads").rglob("*.tar.gz"))  # deleted, not kept
    assert not (preset_cache / "presets/albert_tiny_v2").exists()
    served_release.write_bytes(good)  # the server is fixed: the next call works
    assert AlbertBackbone.from_preset("albert_tiny_v2").num_layers == 2


def test_no_network_is_one_line_naming_the_url_and_the_local_fallback(tmp_path, monkeypatch):
    missing = (tmp_path / "nowhere" / "albert_base_v2.tar.gz").as_uri()
    monkeypatch.setitem(
        release_presets.RELEASES["albert_base_v2"], "url", missing
    )  # what an unreachable host looks like to urllib: a URLError
    with pytest.raises(PresetFetchError) as error:
        AlbertBackbone.from_preset("albert_base_v2")
    message = str(error.value)
    assert "\n" not in message
    assert missing in message and "'albert_base_v2'" in message
    assert "pass the local file or folder" in message


def test_a_known_checksum_that_does_not_match_is_refused(served_release, monkeypatch):
    monkeypatch.setitem(release_presets.RELEASES["albert_tiny_v2"], "md5", "0" * 32)
    with pytest.raises(PresetFetchError, match="does not match its checksum"):
        AlbertBackbone.from_preset("albert_tiny_v2")


def test_local_tarball_folder_and_keras_file_work_as_names(release, tmp_path):
    assert same_weights(
        AlbertPretrainer.from_preset(str(release["archive"])), release["pretrainer"]
    )
    release["pretrainer"].save(tmp_path / "mine.keras")
    backbone = AlbertBackbone.from_preset(str(tmp_path / "mine.keras"), dropout=0.1)
    assert backbone.dropout == 0.1
    assert same_weights(backbone, release["pretrainer"].backbone)
    with pytest.raises(ValueError, match="not a preset"):
        AlbertBackbone.from_preset(str(tmp_path))


def test_hf_repository_by_file_url(release, tmp_path, monkeypatch, preset_cache):
    repository = tmp_path / "hub" / "someone" / "albert-tiny" / "resolve" / "main"
    config, weights = official_from_model(release["pretrainer"])
    write_hf_folder(config, weights, repository)
    (repository / "spiece.model").write_bytes(release["spm_model"].read_bytes())
    monkeypatch.setattr(release_presets, "HF_BASE_URL", (tmp_path / "hub").as_uri())
    pretrainer = AlbertPretrainer.from_preset("hf://someone/albert-tiny")
    assert same_weights(pretrainer, release["pretrainer"])
    assert (preset_cache / "presets/hf--someone--albert-tiny/pretrainer.keras").is_file()


def test_architecture_names_still_build_random_weights(preset_cache):
    backbone = AlbertBackbone.from_preset("albert_base", num_layers=1, vocabulary_size=50)
    assert backbone.count_params() > 0 and not preset_cache.exists()
    pretrainer = AlbertPretrainer.from_preset("albert_base", num_layers=1, vocabulary_size=50)
    assert pretrainer.backbone.num_layers == 1
    with pytest.raises(ValueError, match="unknown preset 'albert_huge_v9'"):
        AlbertBackbone.from_preset("albert_huge_v9")


def test_classifier_from_preset_gets_the_release_vocabulary(served_release, release):
    classifier = AlbertClassifier.from_preset("albert_tiny_v2", num_classes=3, sequence_length=9)
    assert same_weights(classifier.backbone, release["pretrainer"].backbone)
    assert classifier.preprocessor.sequence_length == 9
    ids = classifier.preprocessor(["my dog is cute"])["token_ids"].numpy()
    assert ids[0, 0] == 2 and 3 in ids[0]  # [CLS] ... [SEP]
    logits = classifier.predict(["my dog is cute", "the cat sat"], verbose=0)
    assert logits.shape == (2, 3) and np.all(np.isfinite(logits))
    assert keras.ops.shape(classifier.output)[-1] == 3


def test_keras_hub_name_goes_through_kagglehub_then_the_cache(release, tmp_path, monkeypatch):
    import kagglehub

    from albert_keras.convert import write_keras_hub

    folder = write_keras_hub(release["pretrainer"].backbone, tmp_path / "kh", release["spm_model"])
    asked = []

    def model_download(handle):  # kagglehub's downloader, served from a local preset folder
        asked.append(handle)
        return str(folder)

    monkeypatch.setattr(kagglehub, "model_download", model_download)
    pretrainer, fresh = load_with_fresh_parts("albert_base_en_uncased")
    assert asked == ["keras/albert/keras/albert_base_en_uncased/5"]
    assert fresh == ["MLM head", "sentence-order head"]  # keras-hub's backbone has no heads
    assert same_weights(pretrainer.backbone, release["pretrainer"].backbone)
    assert load_sentencepiece("albert_base_en_uncased") == release["spm_model"].read_bytes()
    assert asked == ["keras/albert/keras/albert_base_en_uncased/5"]  # cached: not asked again

    def offline(handle):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(kagglehub, "model_download", offline)
    with pytest.raises(PresetFetchError, match="could not fetch kaggle://keras/albert/keras/"):
        AlbertBackbone.from_preset("albert_large_en_uncased")
