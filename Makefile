# Two commands do all the set-up: `make demo` and `make test`. Each creates .venv with the
# machine's Python (3.10+) and installs what the repository holds: the core, every
# integration under integrations/, and the dev tools.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INTEGRATIONS := $(wildcard integrations/*/pyproject.toml)
EDITABLES := -e ".[dev]" $(foreach p,$(INTEGRATIONS),-e $(dir $(p)))

.PHONY: test demo lint bench bench-matching install clean

$(STAMP): pyproject.toml $(INTEGRATIONS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(EDITABLES)
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

INTEGRATION_SRC := $(wildcard integrations/*/src)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks $(wildcard integrations)
	$(BIN)/ruff format --check src tests benchmarks $(wildcard integrations)
	$(BIN)/mypy src $(INTEGRATION_SRC)

demo: $(STAMP)
	$(BIN)/python -m ragmetrics.demo

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet ".[bench]"
	$(BIN)/python benchmarks/bench_metrics.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
