"""`from_preset` finds its loader in `albert_keras.preset_registry`: the model library never
imports `albert_keras.presets`, which registers itself, and `import albert_keras` alone is enough."""

import pathlib
import subprocess
import sys
import types

import pytest

from albert_keras import preset_registry
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertPretrainer,
    AlbertQuestionAnswerer,
)
from albert_keras.preprocessing import AlbertPreprocessor

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def registry(monkeypatch):
    """The registry emptied for one test (its loaders and first-use hooks restored after)."""
    monkeypatch.setattr(preset_registry, "_registered", [])
    monkeypatch.setattr(preset_registry, "_on_first_use", [])
    return preset_registry


def fake_loader(calls: list, pretrainer=None, spm=None):
    def record(name, result=None):
        def function(*args, **kwargs):
            calls.append((name, args, kwargs))
            return result

        return function

    return types.SimpleNamespace(
        load_backbone=record("load_backbone", "a backbone"),
        load_pretrainer=record("load_pretrainer", pretrainer),
        load_sentencepiece=record("load_sentencepiece", spm),
        task_from_preset=record("task_from_preset", "a task"),
    )


def test_every_from_preset_of_weights_asks_the_registered_loader(registry, tiny_config, tiny_spm):
    calls = []
    pretrainer = AlbertPretrainer(AlbertBackbone(**tiny_config))
    registry.register_preset_loader(fake_loader(calls, pretrainer, tiny_spm.read_bytes()))
    assert AlbertBackbone.from_preset("my/weights", dropout=0.1) == "a backbone"
    assert AlbertPretrainer.from_preset("my/weights") is pretrainer
    assert AlbertClassifier.from_preset("my/weights", num_classes=3) == "a task"
    assert AlbertQuestionAnswerer.from_preset("my/weights", head="v2") == "a task"
    preprocessor = AlbertPreprocessor.from_preset("my/weights", sequence_length=16)
    assert tuple(preprocessor(["the cat"])["token_ids"].shape) == (1, 16)
    assert calls == [
        ("load_backbone", ("my/weights",), {"dropout": 0.1}),
        ("load_pretrainer", ("my/weights",), {}),
        ("task_from_preset", (AlbertClassifier, "my/weights"), {"num_classes": 3}),
        ("task_from_preset", (AlbertQuestionAnswerer, "my/weights"), {"head": "v2"}),
        ("load_sentencepiece", ("my/weights",), {}),
    ]


def test_architecture_names_need_no_loader(registry):
    assert AlbertBackbone.from_preset("albert_base", num_layers=1).num_layers == 1
    pretrainer = AlbertPretrainer.from_preset("albert_base", "nsp", num_layers=1)
    assert (pretrainer.backbone.num_layers, pretrainer.sentence_objective) == (1, "nsp")


def test_weights_without_a_loader_are_a_clear_error(registry):
    with pytest.raises(RuntimeError, match=r"preset 'albert_base_v2' names weights, but no "):
        AlbertBackbone.from_preset("albert_base_v2")
    with pytest.raises(RuntimeError, match=r"`import albert_keras.presets` registers"):
        AlbertPretrainer.from_preset("albert_base_v2")


def test_the_first_use_hook_registers_a_loader_once(registry):
    calls, hooks = [], []
    registry.load_on_first_use(
        lambda: hooks.append(registry.register_preset_loader(fake_loader(calls)))
    )
    assert hooks == []  # nothing is loaded until a loader is asked for
    first = registry.get_preset_loader()
    assert registry.get_preset_loader() is first
    assert len(hooks) == 1


def test_a_loader_lacking_functions_is_refused(registry):
    partial = types.SimpleNamespace(load_backbone=print, load_pretrainer=print)
    with pytest.raises(TypeError, match="it lacks load_sentencepiece, task_from_preset"):
        registry.register_preset_loader(partial)
    assert registry._registered == []


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_import_albert_keras_alone_finds_the_presets_loader_on_first_use():
    code = (
        "import sys, albert_keras\n"
        "from albert_keras import preset_registry\n"
        "print('albert_keras.presets' in sys.modules)\n"
        "print(preset_registry.get_preset_loader().__name__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=REPO
    )
    assert result.stdout.split() == ["False", "albert_keras.presets.preset_loader"]
