"""The benchmark scripts import their siblings (`_timing`, `_records`) from benchmarks/."""

import importlib
import pathlib
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def benchmark_script(monkeypatch):
    """`benchmark_script("inference")` imports benchmarks/inference.py as a module."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))

    def load(name):
        sys.modules.pop(name, None)
        return importlib.import_module(name)

    return load
