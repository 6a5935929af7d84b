"""The catalogue: one GLUE-like task and one sharing mode added, each with one entry, used by
the command line, the encoder and the converters with no other change."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from albert_keras_contracts import catalogue
from albert_keras_contracts.catalogue import SharingMode, register_sharing_mode


@pytest.fixture
def fresh_catalogue():
    """The catalogue (conftest restores its registries after every test) and no `my_tasks`
    module left imported."""
    yield catalogue
    sys.modules.pop("my_tasks", None)


MY_TASKS = """
from albert_keras_contracts.catalogue import register_task
from albert_keras_contracts.glue_task import GlueTask, TsvLayout

register_task(GlueTask(
    name="Polarity", directory="polarity",
    splits={"train": TsvLayout("train.tsv", "sentence", None, "label"),
            "dev": TsvLayout("dev.tsv", "sentence", None, "label"),
            "test": TsvLayout("test.tsv", "sentence", None, None)},
    labels=("neg", "pos"), metrics=("accuracy", "macro_f1"), dev_splits=("dev",),
    test_splits={"test": "Polarity"}, learning_rate=1e-4, batch_size=4, train_steps=2,
    warmup_steps=0, eval_every=2, max_seq_length=16,
), aliases=("pol",))
"""


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_a_task_added_by_one_register_call_runs_from_the_command_line(
    fresh_catalogue, tmp_path, tiny_spm, monkeypatch, capsys
):
    import albert_keras as ak
    from albert_keras_cli import main as cli

    (tmp_path / "my_tasks.py").write_text(textwrap.dedent(MY_TASKS))
    monkeypatch.syspath_prepend(str(tmp_path))
    glue = tmp_path / "glue" / "polarity"
    glue.mkdir(parents=True)
    rows = ["sentence\tlabel"] + [f"{w} {i}\t{lab}" for i, (w, lab) in
                                  enumerate([("good", "pos"), ("bad", "neg")] * 4)]  # fmt: skip
    (glue / "train.tsv").write_text("\n".join(rows) + "\n")
    (glue / "dev.tsv").write_text("\n".join(rows[:5]) + "\n")
    model = tmp_path / "model"
    model.mkdir()
    ak.AlbertBackbone(
        vocabulary_size=64, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=16,
    ).save(model / "backbone.keras")  # fmt: skip
    (model / "spm.model").symlink_to(tiny_spm)
    base = ["finetune-glue", "--glue_dir", str(tmp_path / "glue"),
            "--init_from", str(model / "backbone.keras")]  # fmt: skip

    # Without the module the name is unknown: one line, before anything loads.
    assert cli.main([*base, "--task", "pol", "--output_dir", str(tmp_path / "x")]) == 2
    assert "unknown GLUE task 'pol'" in capsys.readouterr().err

    out = tmp_path / "out"
    argv = [*base, "--task_module", "my_tasks", "--task", "pol", "--output_dir", str(out)]
    assert cli.main(argv) == 0
    summary = json.loads((out / "metrics.json").read_text())
    assert (summary["task"], summary["num_examples"], summary["steps_trained"]) == (
        "Polarity", 4, 2,
    )  # fmt: skip
    assert list(summary["metrics"]) == ["accuracy", "macro_f1"]
    predictions = (out / "dev_predictions" / "Polarity.tsv").read_text().splitlines()
    assert len(predictions) == 5 and {p.split("\t")[1] for p in predictions[1:]} <= {"neg", "pos"}
    assert "Polarity" in catalogue.trainable_task_names()
    # predict scores the registered task's dev file too, with the same module.
    capsys.readouterr()
    argv = ["predict", "--model", str(out / "model.keras"), "--task_module", "my_tasks",
            "--task", "Polarity", "--glue_dir", str(tmp_path / "glue")]  # fmt: skip
    assert cli.main(argv) == 0
    accuracy = summary["metrics"]["accuracy"]
    assert f"Polarity dev (4 examples): accuracy {accuracy:.4f}" in capsys.readouterr().out


def test_an_unknown_task_module_is_one_line(tmp_path, capsys):
    from albert_keras_cli import main as cli

    argv = ["finetune-glue", "--task_module", "no_such_tasks_module", "--task", "X",
            "--glue_dir", str(tmp_path), "--init_from", "m.keras", "--output_dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert "--task_module no_such_tasks_module: cannot import it" in error and "\n" not in error


def test_a_sharing_mode_added_by_one_entry_and_one_routing_function(fresh_catalogue):
    import keras

    from albert_keras.convert.official_format import official_config_from_backbone
    from albert_keras.models import AlbertBackbone

    # Layers alternate between the groups (0, 1, 0, 1) instead of running in blocks (0, 0, 1, 1).
    register_sharing_mode(
        SharingMode(
            "alternating", frozenset({"attention", "ffn"}), "layers alternate between groups",
            route=lambda layer, num_layers, num_groups: layer % num_groups,
        )
    )  # fmt: skip
    config = {"vocabulary_size": 50, "num_layers": 4, "num_heads": 2, "embedding_dim": 8,
              "hidden_dim": 16, "intermediate_dim": 32, "max_sequence_length": 8,
              "num_groups": 2}  # fmt: skip
    alternating = AlbertBackbone(**config, sharing="alternating")
    blocks = AlbertBackbone(**config, sharing="all")
    encoder = alternating.encoder
    assert [encoder._block_index(layer, 0, "ffn") for layer in range(4)] == [0, 1, 0, 1]
    assert [blocks.encoder._block_index(layer, 0, "ffn") for layer in range(4)] == [0, 0, 1, 1]
    # Same weights as "all" with two groups; the encoder runs them in the mode's order.
    assert alternating.count_params() == blocks.count_params()
    x = np.random.default_rng(0).normal(size=(1, 4, 16)).astype("float32")
    expected = x
    for layer in range(4):
        expected = encoder.attention_blocks[layer % 2](expected)
        expected = encoder.feedforward_blocks[layer % 2](expected)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(encoder(x)), keras.ops.convert_to_numpy(expected), atol=1e-6
    )
    # It round-trips through its config, and the official layouts refuse it by the mode's word.
    again = AlbertBackbone.from_config(alternating.get_config())
    assert again.encoder.mode.name == "alternating"
    with pytest.raises(ValueError, match="sharing='alternating' has no official checkpoint"):
        official_config_from_backbone(alternating.get_config())
    # A name that is taken is refused.
    with pytest.raises(ValueError, match="sharing mode 'all' is already in the catalogue"):
        register_sharing_mode(SharingMode("all", frozenset(), "not ALBERT"))


def test_the_names_need_no_tensorflow():
    code = (
        "import sys; from albert_keras_settings import FinetuneGlueSettings; "
        "from albert_keras_contracts import catalogue; "
        "print(catalogue.trainable_task_names(), 'tensorflow' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().endswith("False")
    assert "'MNLI'" in result.stdout and "'AX'" not in result.stdout


def test_an_architecture_added_by_one_entry_builds_from_its_name():
    from albert_keras.models import AlbertBackbone

    config = {**catalogue.ARCHITECTURE_PRESETS["albert_tiny"], "num_layers": 1, "hidden_dim": 32,
              "intermediate_dim": 64, "embedding_dim": 16, "vocabulary_size": 100}  # fmt: skip
    catalogue.register_architecture("albert_micro", config)
    try:
        backbone = AlbertBackbone.from_preset("albert_micro")
        assert (backbone.num_layers, backbone.hidden_dim, backbone.embedding_dim) == (1, 32, 16)
        with pytest.raises(
            ValueError, match="architecture preset 'albert_base' is already in the catalogue"
        ):
            catalogue.register_architecture("albert_base", config)
    finally:
        catalogue.ARCHITECTURE_PRESETS.pop("albert_micro")
