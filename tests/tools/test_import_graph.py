"""tools/import_graph.py: the tree has no import loop and no upward import, and a planted loop,
upward import, package without a rule or module-level import in the command line is caught."""

import importlib.util
import pathlib
import subprocess
import sys
import textwrap

import pytest

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "import_graph.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("import_graph", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tool(*args):
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)], check=False, capture_output=True, text=True
    )


def plant(root: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    """A fake tree: every package folder gets an `__init__.py`, then `files` are written."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in path.relative_to(root).parents:
            if folder != pathlib.Path("."):
                (root / folder / "__init__.py").touch()
        path.write_text(textwrap.dedent(text))
    return root


# A clean tree to plant each breach in: a layer, a model above it, the data below both.
CLEAN = {
    "albert_keras_contracts/record_format.py": "import json\n",
    "albert_keras/__init__.py": "from albert_keras import layers, models\n",
    "albert_keras/layers/dense.py": "import keras\n",
    "albert_keras/models/backbone.py": "from albert_keras.layers.dense import Dense\n",
    "albert_keras_cli/main.py": "def run():\n    from albert_keras.models import backbone\n",
}


def test_the_tree_has_no_loop_and_no_upward_import():
    result = run_tool()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    tool = load_tool()
    count = len(tool.packages(tool.ROOT))
    assert lines[-1] == f"0 loops, 0 upward imports, {count} of {count} packages with a rule"
    assert result.stderr == ""
    assert "albert_keras.models -> albert_keras.layers" in lines
    # from_preset: the models ask the registry; presets fills it and stands above the models.
    assert "albert_keras.models -> albert_keras.preset_registry" in lines
    assert "albert_keras.presets -> albert_keras.preset_registry" in lines
    assert "albert_keras.presets -> albert_keras.models  (lazy)" in lines
    assert not [
        line for line in lines if line.startswith("albert_keras.models -> albert_keras.presets")
    ]
    # The data package stands on the contracts and the settings alone (the writer's
    # WriterSettings); the settings stand on the contracts alone (the catalogue's names), and
    # the contracts import nothing of ours.
    assert [line for line in lines if line.startswith("pipelines ->")] == [
        "pipelines -> albert_keras_contracts",
        "pipelines -> albert_keras_settings",
    ]
    assert [line for line in lines if line.startswith("albert_keras_settings ->")] == [
        "albert_keras_settings -> albert_keras_contracts"
    ]
    assert not [line for line in lines if line.startswith("albert_keras_contracts ->")]
    # The runtime knows no task; the jobs stand on it and bring the tasks.
    assert not [
        line for line in lines if line.startswith("albert_keras.training -> albert_keras.glue")
    ]
    assert "albert_keras.jobs -> albert_keras.training" in lines
    assert "albert_keras.jobs -> albert_keras.glue" in lines
    # The library's packages reach the contracts directly, no longer through `pipelines`.
    assert "albert_keras.serving -> albert_keras_contracts" in lines


def test_a_clean_planted_tree_passes(tmp_path):
    result = run_tool("--root", plant(tmp_path, CLEAN))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "albert_keras -> albert_keras.layers",
        "albert_keras -> albert_keras.models",
        "albert_keras.models -> albert_keras.layers",
        "albert_keras_cli -> albert_keras.models  (lazy)",
        "0 loops, 0 upward imports, 5 of 5 packages with a rule",
    ]


def test_a_planted_loop_fails_and_names_its_files(tmp_path):
    # Three modules in one package, the circle closed by an import inside a function.
    files = {
        **CLEAN,
        "pipelines/writer.py": "from pipelines import settings\n",
        "pipelines/settings.py": "from pipelines.shards import shard_name\n",
        "pipelines/shards.py": "def shard_name():\n    from pipelines.writer import write\n",
    }
    result = run_tool("--root", plant(tmp_path, files))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (
            "loop of 3 modules: pipelines.settings -> pipelines.shards -> pipelines.writer "
            "-> pipelines.settings"
        ),
        "  files: pipelines/settings.py, pipelines/shards.py, pipelines/writer.py",
    ]
    assert result.stdout.splitlines()[-1].startswith("1 loops, 0 upward imports")


def test_a_loop_across_packages_hidden_in_a_function(tmp_path):
    # models -> (lazy) presets -> models: both imports allowed by no rule of a stack.
    files = {
        **CLEAN,
        "albert_keras/models/backbone.py": (
            "def from_preset():\n    from albert_keras.presets import load\n"
        ),
        "albert_keras/presets/__init__.py": "from albert_keras.presets.loader import load\n",
        "albert_keras/presets/loader.py": "from albert_keras.models import backbone\n",
    }
    result = run_tool("--root", plant(tmp_path, files))
    assert result.returncode == 1
    errors = result.stderr.splitlines()
    assert errors[:2] == [
        (
            "loop of 3 modules: albert_keras.models.backbone -> albert_keras.presets -> "
            "albert_keras.presets.loader -> albert_keras.models.backbone"
        ),
        (
            "  files: albert_keras/models/backbone.py, albert_keras/presets/__init__.py, "
            "albert_keras/presets/loader.py"
        ),
    ]
    assert errors[2:] == [
        (
            "albert_keras/models/backbone.py:2: albert_keras.models.backbone imports "
            "albert_keras.presets (lazy): upward import (albert_keras.models may not import "
            "albert_keras.presets)"
        )
    ]


def test_a_planted_upward_import_fails(tmp_path):
    files = {**CLEAN, "albert_keras/layers/dense.py": "import keras\nimport albert_keras.models\n"}
    result = run_tool("--root", plant(tmp_path, files))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (
            "albert_keras/layers/dense.py:2: albert_keras.layers.dense imports albert_keras.models: "
            "upward import (albert_keras.layers may not import albert_keras.models)"
        )
    ]
    assert (
        result.stdout.splitlines()[-1] == "0 loops, 1 upward imports, 5 of 5 packages with a rule"
    )


def test_an_upward_import_by_importlib_name_counts(tmp_path):
    files = {
        **CLEAN,
        "albert_keras_contracts/record_format.py": (
            "import importlib\n\ndef model():\n"
            "    return importlib.import_module('albert_keras.models.backbone')\n"
        ),
    }
    result = run_tool("--root", plant(tmp_path, files))
    assert result.returncode == 1
    assert (
        "albert_keras_contracts/record_format.py:4: albert_keras_contracts.record_format imports "
        in result.stderr
    )
    assert (
        "upward import (albert_keras_contracts may not import albert_keras.models)" in result.stderr
    )


def test_a_package_without_a_rule_fails(tmp_path):
    files = {
        **CLEAN,
        "albert_keras/apps/report.py": "from albert_keras_contracts import record_format\n",
    }
    result = run_tool("--root", plant(tmp_path, files))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (
            "albert_keras/apps/report.py:1: albert_keras.apps.report imports albert_keras_contracts.record_format:"
            " no rule for package albert_keras.apps"
        )
    ]
    assert (
        result.stdout.splitlines()[-1] == "0 loops, 1 upward imports, 5 of 6 packages with a rule"
    )


def test_the_command_line_imports_the_library_inside_functions_only(tmp_path):
    files = {**CLEAN, "albert_keras_cli/main.py": "from albert_keras.models import backbone\n"}
    result = run_tool("--root", plant(tmp_path, files))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (
            "albert_keras_cli/main.py:1: albert_keras_cli.main imports albert_keras.models.backbone: "
            "only inside a function (albert_keras_cli imports albert_keras.models lazily)"
        )
    ]


def test_the_library_never_imports_the_command_line(tmp_path):
    files = {**CLEAN, "albert_keras/__init__.py": "from albert_keras_cli import main\n"}
    result = run_tool("--root", plant(tmp_path, files))
    assert result.returncode == 1
    assert "upward import (albert_keras may not import albert_keras_cli)" in result.stderr


def test_the_rules_are_a_stack():
    tool = load_tool()
    assert tool.rule_circles() == []
    assert set(tool.INSIDE_FUNCTIONS_ONLY) <= set(tool.RULES)
    circular = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert tool.rule_circles(circular) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("source", "targets"),
    [
        (
            "from pipelines import record_format, json_lines\n",
            ["pipelines", "pipelines.record_format"],
        ),
        ("from pipelines.record_format import FEATURES\n", ["pipelines.record_format"]),
        ("from . import record_format\n", ["pipelines.record_format"]),
        ("from .record_format import FEATURES\n", ["pipelines.record_format"]),
        ("import pipelines.record_format.FEATURES\n", ["pipelines.record_format"]),
        ("import keras, numpy\n", []),
    ],
)
def test_what_an_import_statement_imports(tmp_path, source, targets):
    root = plant(tmp_path, {"pipelines/record_format.py": "", "pipelines/writer.py": source})
    tool = load_tool()
    modules = tool.find_modules(root)
    edges = tool.file_imports("pipelines.writer", root / "pipelines/writer.py", modules)
    assert sorted(edge.target for edge in edges) == targets
    assert tool.node("albert_keras.models.albert_backbone") == "albert_keras.models"
    assert tool.node("albert_keras") == "albert_keras"
    assert tool.node("keras.layers") is None
