# The README's commands. Each creates .venv on first use and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
PYTEST_ARGS ?=

.PHONY: demo test lint typecheck unit bench clean

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "assignors needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

$(VENV)/.installed-bench: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[bench]'
	@touch $@

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	@touch $@

demo: $(VENV)/.installed
	$(BIN)/assignors assign --input src/assignors/examples/snapshot.json

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

unit: $(VENV)/.installed-test
	$(BIN)/pytest -n 2 $(PYTEST_ARGS)

test: lint typecheck unit

bench: $(VENV)/.installed-bench
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
