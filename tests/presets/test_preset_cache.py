"""The presets cache replaces only what it made: a converted preset is swapped for a new one,
but a folder holding anything else is left alone, and no name reaches outside the cache."""

import json
import types

import pytest

from albert_keras.presets import preset_cache


class _Saver:
    """Stands in for an `AlbertPretrainer`: `save` writes a file."""

    def __init__(self, data: bytes):
        self.data = data

    def save(self, path):
        with open(path, "wb") as file:
            file.write(self.data)


def _imported(data=b"model one"):
    return types.SimpleNamespace(
        pretrainer=_Saver(data),
        sentencepiece=b"vocabulary",
        sentencepiece_name="30k-clean.model",
        fresh_parts=[],
        notes=[],
    )


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("ALBERT_KERAS_CACHE", str(folder))
    return folder


def test_a_converted_preset_is_replaced_by_a_new_one(cache):
    first = preset_cache.save_converted("albert_base_v2", _imported(b"model one"), {})
    second = preset_cache.save_converted("albert_base_v2", _imported(b"model two"), {})
    assert first == second == cache / "presets" / "albert_base_v2"
    assert (second / preset_cache.PRETRAINER_FILE).read_bytes() == b"model two"
    assert sorted(p.name for p in second.iterdir()) == [
        "30k-clean.model",
        "preset.json",
        "pretrainer.keras",
    ]
    assert [p.name for p in (cache / "presets").iterdir()] == ["albert_base_v2"]
    assert preset_cache.converted_preset("albert_base_v2") == second


def test_a_folder_holding_other_files_is_never_removed(cache):
    folder = cache / "presets" / "albert_base_v2"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("mine\n")
    with pytest.raises(ValueError, match="not a preset this cache converted"):
        preset_cache.save_converted("albert_base_v2", _imported(), {})
    assert (folder / "notes.txt").read_text() == "mine\n"
    # A converted preset a user added a file to: the same.
    preset_cache.save_converted("other", _imported(), {})
    (cache / "presets" / "other" / "notes.txt").write_text("mine\n")
    with pytest.raises(ValueError, match="not a preset this cache converted"):
        preset_cache.save_converted("other", _imported(), {})
    assert (cache / "presets" / "other" / "notes.txt").read_text() == "mine\n"


@pytest.mark.parametrize("name", ["..", ".", "", "/", "-..-"])
def test_no_name_reaches_the_cache_itself_or_its_parent(cache, name):
    cache.mkdir()
    (cache / "mine.txt").write_text("mine\n")
    key = preset_cache.cache_key(name)
    assert key and key not in (".", "..") and "/" not in key and not key.startswith(".")
    final = preset_cache.save_converted(name, _imported(), {})
    assert final.parent == cache / "presets"
    assert (cache / "mine.txt").read_text() == "mine\n"
    assert json.loads((final / "preset.json").read_text())["name"] == name
