"""docs/flags.md is what the commands' parsers say (tools/flags_table.py)."""

import argparse
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("flags_table", ROOT / "tools" / "flags_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_current():
    assert _tool().main(["--check"]) == 0, "run: python tools/flags_table.py"


def test_a_new_flag_makes_the_page_stale(monkeypatch):
    tool = _tool()
    from albert_keras_cli import export

    original = export.add_arguments

    def with_one_more(parser: argparse.ArgumentParser) -> None:
        original(parser)
        parser.add_argument("--a_new_flag", default=3, help="planted by the test")

    monkeypatch.setattr(export, "add_arguments", with_one_more)
    page = tool.render()
    assert "| `--a_new_flag` | `3` | planted by the test |" in page
    assert tool.main(["--check"]) == 1


def test_rendering_imports_no_tensorflow():
    before = "tensorflow" in sys.modules
    _tool().render()
    assert before or "tensorflow" not in sys.modules
