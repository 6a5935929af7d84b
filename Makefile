# Quick start: `make demo` then `make test`. VENV=... uses another virtual environment.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install install-hf test test-all demo lint clean

install: $(VENV)/.installed

$(VENV)/.installed: setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,beam]"
	touch $@

# Optional: transformers + a CPU torch, for the Hugging Face parity tests (skipped without them).
# TORCH_WHEELS is a folder holding a CPU torch wheel, so no multi-GB CUDA build is downloaded.
TORCH_WHEELS ?= /opt/wheels
install-hf: install
	$(PY) -m pip install -q --find-links $(TORCH_WHEELS) "torch==2.13.0+cpu" transformers

# The whole suite except tests marked slow; 12-15 minutes on 2 cores.
test: install
	$(PY) -m pytest -q -n 2 -m "not slow" $(PYTEST_ARGS)

test-all: install
	$(PY) -m pytest -q -n 2 $(PYTEST_ARGS)

# The main job end to end on an embedded corpus (no download): see README.
demo: install
	$(PY) -m albert_keras_cli demo $(DEMO_ARGS)

lint: install
	$(VENV)/bin/ruff check albert_keras albert_keras_cli albert_keras_contracts albert_keras_settings pipelines tests benchmarks experiments

clean:
	rm -rf demo_output .pytest_cache
