"""Issue 19, item 5 (the JSON part): a deeply nested JSON quiz ended in a ``RecursionError``
traceback. Past the nesting limit it is now one line naming the file, the line and the limit, exit
2 — for .json, .jsonl and Quizaic .txt alike — and brackets inside strings do not count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quiztui.errors import QuiztuiError
from quiztui.formats import load_quiz
from quiztui.formats._depth import MAX_JSON_DEPTH, too_deep


def item(extra: str = '"easy"') -> str:
    return (
        f'{{"question": "What is 2 + 2?", "responses": ["3", "4"], "correct": "4", "x": {extra}}}'
    )


DEEP = "[" * 2000 + "]" * 2000


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("brackets.json", DEEP, 1),
        ("item.json", f"[\n{item()},\n{item(DEEP)}\n]", 3),
        ("lines.jsonl", f"{item()}\n{item()}\n{item(DEEP)}\n", 3),
        ("lines.txt", f"{item()}\n{item(DEEP)}\n", 2),
        ("opentdb.json", '{"response_code": 0, "results": [' + DEEP + "]}", 1),
    ],
)
def test_deep_json_is_one_line_exit_2_not_a_traceback(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "quiztui", "lint", str(path)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr == (
        f"quiztui: error: {path}: line {line}: nested deeper than {MAX_JSON_DEPTH} levels\n"
    )


def test_brackets_and_escapes_inside_strings_do_not_count(tmp_path: Path) -> None:
    question = "[" * 500 + '\\" {{{ \\\\'
    text = json.dumps([{"question": question, "responses": ["a", "b"], "correct": "a"}])
    assert too_deep(text) is None
    path = tmp_path / "strings.json"
    path.write_text(text, encoding="utf-8")
    assert load_quiz(path).questions[0].text == json.loads(text)[0]["question"]


def test_the_limit_is_exact() -> None:
    assert too_deep("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is None
    assert too_deep("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)) == 1


def test_a_headerless_csv_wider_than_ten_options_loads_or_says_why(tmp_path: Path) -> None:
    # Found by tests/test_safe_fuzz.py: a wide headerless row indexed past the letters A-J.
    row = ",".join(["Which is prime?", *[str(n) for n in range(4, 16)], "7", "B"])
    path = tmp_path / "wide.csv"
    path.write_text(row + "\n" + row + "\n", encoding="utf-8")
    try:
        quiz = load_quiz(path)
    except QuiztuiError as exc:
        assert "\n" not in str(exc)
    else:
        assert len(quiz.questions[0].options) == 13


def test_a_superscript_digit_answer_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    # Found by tests/test_safe_fuzz.py: "¹0" passes str.isdigit() but not int().
    path = tmp_path / "super.csv"
    path.write_text("How many legs has a spider?,8,6,\u00b90\n" * 2, encoding="utf-8")
    try:
        load_quiz(path)
    except QuiztuiError as exc:
        assert "\n" not in str(exc)


def test_a_header_cell_with_a_newline_is_still_one_line_per_problem(tmp_path: Path) -> None:
    # Found by tests/test_safe_fuzz.py: a quoted header cell holding a newline, named in a problem.
    path = tmp_path / "header.csv"
    path.write_text('question,correct,"a\nb","a\nb"\nQ?,x,y,z\n', encoding="utf-8")
    with pytest.raises(QuiztuiError) as caught:
        load_quiz(path)
    lines = caught.value.all_lines() if hasattr(caught.value, "all_lines") else [str(caught.value)]
    assert lines and all("\n" not in line for line in lines), lines
    assert any("a\\nb" in line for line in lines), lines
