# Quick start: `make demo` then `make test`. VENV=... uses another virtual environment.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install install-hf test test-all test-cov demo lint clean

install: $(VENV)/.installed

$(VENV)/.installed: setup.cfg pyproject.toml
	@echo "installing albert-keras and its dependencies (TensorFlow, Keras, Beam) into $(VENV):"
	@echo "a few minutes the first time, without progress lines (pip -q)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,beam]"
	touch $@
	@echo "installed; '. $(VENV)/bin/activate' puts albert-keras and python -m pipelines.* on PATH"

# Optional: transformers + a CPU torch, for the Hugging Face parity tests (skipped without them).
# TORCH_WHEELS is a folder holding a CPU torch wheel, so no multi-GB CUDA build is downloaded.
TORCH_WHEELS ?= /opt/wheels
install-hf: install
	$(PY) -m pip install -q --find-links $(TORCH_WHEELS) "torch==2.13.0+cpu" transformers

# The whole suite except tests marked slow; ~6 minutes on 2 cores (1,693 tests, 29 November 2026;
# tests/conftest.py says which cases run in make test-all only, and why). No ../shared needed: real
# data comes from tests/data (PROVENANCE.md in each folder) or is written at test time.
# PYTEST_ARGS adds pytest flags, e.g. PYTEST_ARGS=--durations=25 for the 25 slowest tests.
# --dist loadfile: each test file runs on one worker, so its module fixtures (a fine-tuned model,
# a folder of records) are built once, not once per worker that gets some of its tests.
# (xdist hands out the files with the most tests first; handing out the longest first, tried on
# 29 November, showed no gain that this machine's drifting speed would let one measure.)
XDIST := -n 2 --dist loadfile
test: install
	$(PY) -m pytest -q $(XDIST) -m "not slow" $(PYTEST_ARGS)

# Everything, slow tests included; `make test-all PYTEST_ARGS="-m slow"` runs only what
# `make test` leaves out (CI runs the two that way: .ci/run).
test-all: install
	$(PY) -m pytest -q $(XDIST) $(PYTEST_ARGS)

# make test's line coverage (coverage.py through pytest-cov), package by package.
test-cov: install
	$(PY) -m pytest -q $(XDIST) -m "not slow" --cov=albert_keras --cov=albert_keras_cli \
		--cov=albert_keras_contracts --cov=albert_keras_settings --cov=pipelines \
		--cov-report=term $(PYTEST_ARGS)

# The main job end to end on an embedded corpus (no download): see README.
demo: install
	$(PY) -m albert_keras_cli demo $(DEMO_ARGS)

lint: install
	$(VENV)/bin/ruff check albert_keras albert_keras_cli albert_keras_contracts albert_keras_settings pipelines tests benchmarks experiments

clean:
	rm -rf demo_output .pytest_cache
