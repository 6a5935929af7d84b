"""Fixtures for the preset tests: an isolated cache, a release tarball served by file:// URL."""

import pytest
import sentencepiece
from release_helpers import tiny_pretrainer
from release_tarball import train_tiny_sentencepiece, write_release_tarball

from albert_keras.convert import official_from_model, write_tf1_checkpoint
from albert_keras.presets import release_presets


@pytest.fixture(autouse=True)
def preset_cache(tmp_path, monkeypatch):
    """Every test gets its own empty cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ALBERT_KERAS_CACHE", str(cache))
    return cache


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A release-layout tarball from random weights, its pretrainer and its vocabulary."""
    folder = tmp_path_factory.mktemp("release")
    text = "the cat sat on the mat . a dog ran in the park . my dog is cute . " * 20
    spm_model = train_tiny_sentencepiece(folder / "30k-clean", text, vocab_size=48)
    pieces = sentencepiece.SentencePieceProcessor(model_file=str(spm_model)).get_piece_size()
    pretrainer = tiny_pretrainer(pieces)
    config, weights = official_from_model(pretrainer)
    archive = write_release_tarball(
        folder / "albert_tiny_v2.tar.gz",
        lambda release: write_tf1_checkpoint(config, weights, release),
        spm_model,
    )
    return {"archive": archive, "pretrainer": pretrainer, "spm_model": spm_model}


@pytest.fixture
def served_release(release, tmp_path, monkeypatch):
    """`albert_tiny_v2` in the release table, its URL a file:// copy of the tarball."""
    served = tmp_path / "server" / "albert_tiny_v2.tar.gz"
    served.parent.mkdir()
    served.write_bytes(release["archive"].read_bytes())
    monkeypatch.setitem(
        release_presets.RELEASES,
        "albert_tiny_v2",
        {"url": served.as_uri(), "md5": None, "source": "tf1"},
    )
    return served
