# Quick start: `make demo` then `make test`. VENV=... uses another virtual environment.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install test test-all demo lint clean

install: $(VENV)/.installed

$(VENV)/.installed: setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test]"
	touch $@

# The whole suite except tests marked slow; about 10 minutes on 2 cores.
test: install
	$(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS)

test-all: install
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The main job end to end on an embedded corpus (no download): see README.
demo: install
	$(PY) -m albert_keras.demo $(DEMO_ARGS)

lint: install
	$(VENV)/bin/ruff check albert_keras pipelines tests benchmarks

clean:
	rm -rf demo_output .pytest_cache
