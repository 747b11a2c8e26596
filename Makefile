# Two commands do all the set-up: `make demo` and `make test`. Each creates .venv with the
# machine's Python (3.10+). `make demo` installs only what the demo runs (the core with its
# plotting extra, both integrations and the frameworks they adapt, their demo retrievers);
# `make test` installs everything the repository holds: the core with every extra, every
# integration under integrations/, and the dev tools.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INTEGRATIONS := $(wildcard integrations/*/pyproject.toml)
EDITABLES := -e ".[dev]" $(foreach p,$(INTEGRATIONS),-e "$(dir $(p))[test,agents]")
OLDEST_EDITABLES := -e ".[dev]" $(foreach p,$(INTEGRATIONS),-e "$(dir $(p))[test]")
TESTED := integrations/tested.txt
DEMO_STAMP := $(VENV)/.demo-installed
DEMO_EDITABLES := -e ".[plot]" $(foreach p,$(INTEGRATIONS),-e "$(dir $(p))[demo]")

.PHONY: test test-spark test-oldest demo screenshot lint bench bench-matching install clean

# uv installs in seconds where pip takes minutes; pip itself bootstraps it, and takes over if
# uv cannot run here. Both print what they install. Files are copied, not hard-linked from
# uv's cache: nltk (under llama-index-core) refuses to open a hard-linked file. The
# frameworks are pinned to the releases the adapters were last tested with (integrations/tested.txt).
$(STAMP): pyproject.toml $(INTEGRATIONS) $(TESTED)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing ragmetrics, both integrations and the dev tools into $(VENV) ..."
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv || true
	if test -x $(BIN)/uv && $(BIN)/uv pip install --link-mode copy --compile-bytecode --python $(BIN)/python -c $(TESTED) $(EDITABLES); then \
		true; \
	else \
		$(BIN)/python -m pip install --progress-bar on -c $(TESTED) $(EDITABLES); \
	fi
	touch $(STAMP)

install: $(STAMP)

# the core's suite, then each integration's own suite from its own folder (as its package's
# CI would run it: nothing from the core's tests/ is importable there)
test: $(STAMP)
	$(BIN)/python -m pytest
	$(foreach p,$(INTEGRATIONS),cd $(dir $(p)) && $(CURDIR)/$(BIN)/python -m pytest && cd $(CURDIR) &&) true

# Spark (pyspark, about 480 MB) in the same environment, kept out of `make demo` and `make
# test`: ragmetrics.spark on a local Spark, with the machine's JDK (.ci/run calls this).
test-spark: $(STAMP)
	if test -x $(BIN)/uv; then $(BIN)/uv pip install --quiet --python $(BIN)/python -e ".[spark]"; \
	else $(BIN)/python -m pip install --quiet -e ".[spark]"; fi
	RAGMETRICS_REQUIRE_SPARK=1 $(BIN)/python -m pytest tests/test_spark.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples tools $(wildcard integrations)
	$(BIN)/ruff format --check src tests benchmarks examples tools $(wildcard integrations)
	$(BIN)/mypy -p ragmetrics $(if $(wildcard integrations/llama-index),-p llama_index.evaluation.ragmetrics) $(if $(wildcard integrations/langchain),-p langchain_ragmetrics)

# The demo's environment: no dev tools, no engines, no bytecode compiled ahead (Python
# compiles what the demo imports as it runs). Satisfied at once after `make install`.
$(DEMO_STAMP): pyproject.toml $(INTEGRATIONS) $(TESTED)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing what the demo needs into $(VENV) ..."
	if test -f $(STAMP); then true; \
	elif $(BIN)/python -m pip install --quiet --disable-pip-version-check uv && \
		$(BIN)/uv pip install --link-mode copy --python $(BIN)/python -c $(TESTED) $(DEMO_EDITABLES); then \
		true; \
	else \
		$(BIN)/python -m pip install --progress-bar on -c $(TESTED) $(DEMO_EDITABLES); \
	fi
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python examples/demo/run.py

# The demo's report as 800- and 1280-pixel-wide browsers show it, into docs/ (needs
# chromium: apt install chromium)
screenshot: demo
	for width in 800 1280; do \
		chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
			--hide-scrollbars --window-size=$$width,1700 \
			--screenshot=docs/report-$${width}px.png "file://$(CURDIR)/demo-output/report.html"; \
	done

# Every speed figure of the README (about an hour; C trec_eval's path in $TREC_EVAL adds it).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"  # editable: a plain install would shadow src/
	$(BIN)/python benchmarks/bench_metrics.py
	$(BIN)/python benchmarks/bench_compare.py
	$(BIN)/python benchmarks/bench_kernels.py
	$(BIN)/python benchmarks/bench_cli.py
	$(BIN)/python benchmarks/bench_floors.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache

# The adapters' tests against the oldest supported framework releases (not run by CI: it
# installs a second environment). See integrations/oldest.txt.
OLDEST := .venv-oldest
test-oldest:
	test -x $(OLDEST)/bin/python || $(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet --upgrade pip
	$(OLDEST)/bin/python -m pip install --quiet -c integrations/oldest.txt $(OLDEST_EDITABLES)
	$(OLDEST)/bin/python -m pip list 2>/dev/null | grep -E "^(llama-index-core|langchain-core|langsmith) "
	$(foreach p,$(INTEGRATIONS),cd $(dir $(p)) && $(CURDIR)/$(OLDEST)/bin/python -m pytest -p no:cacheprovider && cd $(CURDIR) &&) true
