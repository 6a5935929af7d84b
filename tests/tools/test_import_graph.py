"""tools/import_graph.py: the dependency rules hold, and a breach is caught."""

import importlib.util
import pathlib
import subprocess
import sys

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "import_graph.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("import_graph", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tree_keeps_the_rules():
    result = subprocess.run(
        [sys.executable, str(TOOL)], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    edges = result.stdout.splitlines()
    assert edges[-1] == "rules hold"
    assert "albert_keras.models -> albert_keras.optimizers" in edges
    assert not [e for e in edges if e.startswith(("albert_keras.models", "albert_keras.layers"))
                and ("training" in e or "pipelines" in e)]  # fmt: skip
    assert not [e for e in edges if e.startswith("pipelines ->")]


def test_a_breach_is_reported():
    tool = load_tool()
    edges = {
        ("albert_keras.models", "albert_keras.training"): True,
        ("albert_keras.layers", "pipelines"): False,
        ("pipelines", "albert_keras.models"): False,
        ("albert_keras_cli", "albert_keras.training"): False,
        ("albert_keras_cli", "albert_keras.convert"): True,
        ("albert_keras.training", "pipelines"): False,
        ("albert_keras.models", "albert_keras.presets"): True,  # from_preset, on first use
        ("albert_keras.models", "albert_keras.convert"): True,
        ("albert_keras.layers", "albert_keras.presets"): True,
    }
    assert tool.breaches(edges) == [
        "albert_keras.layers -> albert_keras.presets (lazy)",
        "albert_keras.layers -> pipelines",
        "albert_keras.models -> albert_keras.convert (lazy)",
        "albert_keras.models -> albert_keras.training (lazy)",
        "albert_keras_cli -> albert_keras.training at module level",
        "pipelines -> albert_keras.models",
    ]
    assert tool.node("albert_keras.models.albert_backbone") == "albert_keras.models"
    assert tool.node("keras.layers") is None
