"""Issue 19, item 5: parsers that cannot be blown up.

JSON: a deeply nested JSON quiz ended in a ``RecursionError`` traceback. Past the nesting limit it
is now one line naming the file, the line and the limit, exit 2 — for .json, .jsonl and Quizaic
.txt alike — and brackets inside strings do not count.

Moodle XML: parsed with defusedxml, so an entity declaration is refused by expat itself however the
DOCTYPE is dressed up (the old pre-scan was slipped past with ``<?x ]?>``), and nesting past
``MAX_DEPTH`` is refused at the first start tag past it (a 1,000,000-deep document took 12 s).

GIFT: a question longer than ``MAX_QUESTION_CHARS`` (a 3 MB line did not finish in a minute) is
refused with the limit in its message; in a non-strict load the rest of the bank still loads.

One deep JSON file and the strict GIFT refusal run ``quiztui lint`` as a real process (exit 2 and
one line, no traceback); the other cases run it through ``main()`` in-process (``cli_helpers``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import quiztui_main
from hypothesis import given, settings
from hypothesis import strategies as st

from quiztui.errors import QuiztuiError
from quiztui.formats import load_quiz
from quiztui.formats._depth import MAX_JSON_DEPTH, _scan, too_deep
from quiztui.formats.bank_io import load_bank
from quiztui.formats.gift import MAX_QUESTION_CHARS
from quiztui.formats.moodle_xml import MAX_DEPTH


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
    code, err = lint_stderr(path, process=name == "brackets.json")
    assert code == 2
    assert err == (
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


def lint_stderr(path: Path, *flags: str, process: bool = False) -> tuple[int, str]:
    """``quiztui lint PATH FLAGS``: its exit code and stderr, from a real process or in-process."""
    if not process:
        ran = quiztui_main("lint", str(path), *flags)
        return ran.returncode, ran.stderr
    out = subprocess.run(
        [sys.executable, "-m", "quiztui", "lint", str(path), *flags],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
    )
    return out.returncode, out.stderr


ONE_QUESTION = (
    '<question type="multichoice"><name><text>Capital</text></name>'
    "<questiontext><text>What is the capital of France? &e;</text></questiontext>"
    '<answer fraction="100"><text>Paris</text></answer>'
    '<answer fraction="0"><text>Lyon</text></answer></question>'
)


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE quiz [<!ENTITY e "BOOM">]>',
        # The trick that slipped past the old pre-scan: a processing instruction holding "]".
        '<!DOCTYPE quiz [<?x ]?><!ENTITY e "BOOM">]>',
        '<!DOCTYPE quiz [<!-- ] --><!ENTITY e "BOOM">]>',
        # A parameter entity and an external one.
        '<!DOCTYPE quiz [<!ENTITY % p "x"><!ENTITY e SYSTEM "file:///etc/passwd">]>',
    ],
    ids=["plain", "pi-trick", "comment-trick", "parameter-and-external"],
)
def test_no_xml_entity_is_ever_expanded(tmp_path: Path, doctype: str) -> None:
    path = tmp_path / "bank.xml"
    path.write_text(f'<?xml version="1.0"?>\n{doctype}\n<quiz>{ONE_QUESTION}</quiz>\n')
    code, err = lint_stderr(path)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{path}: line 2 col " in err and "<!ENTITY" in err and "BOOM" not in err


def test_an_external_dtd_is_never_fetched(tmp_path: Path) -> None:
    path = tmp_path / "bank.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE quiz SYSTEM "http://127.0.0.1:9/q.dtd">\n'
        f"<quiz>{ONE_QUESTION}</quiz>\n"
    )
    code, err = lint_stderr(path)  # nothing listens on port 9: a fetch would hang or fail loudly
    column = len("<quiz>") + ONE_QUESTION.index("&e;") + 1  # the undeclared entity, unexpanded
    assert code == 2
    assert (
        err
        == f"quiztui: error: {path}: line 3 col {column}: not well-formed XML: undefined entity\n"
    )


def test_a_million_deep_xml_is_refused_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "deep.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<quiz>' + "<a>" * 1_000_000 + "</a>" * 1_000_000 + "</quiz>"
    )
    code, err = lint_stderr(path)
    column = len("<quiz>") + MAX_DEPTH * len("<a>") + 1  # the start tag one past the limit
    assert code == 2 and err == (
        f"quiztui: error: {path}: line 2 col {column}: elements nested deeper than {MAX_DEPTH} "
        "levels: not a Moodle question file\n"
    )


def test_xml_nesting_up_to_the_limit_still_parses(tmp_path: Path) -> None:
    # HTML kept as elements inside a text (not escaped): deep, but within the limit.
    inner = "<b>" * (MAX_DEPTH - 8) + "x" + "</b>" * (MAX_DEPTH - 8)
    path = tmp_path / "nested.xml"
    path.write_text(
        '<quiz><question type="multichoice"><name><text>N</text></name>'
        f"<questiontext><text>Which? </text><extra>{inner}</extra></questiontext>"
        '<answer fraction="100"><text>A</text></answer><answer fraction="0"><text>B</text></answer>'
        "</question></quiz>"
    )
    assert len(load_bank(path).items) == 1


def test_a_three_megabyte_gift_line_is_refused_and_the_rest_of_the_bank_loads(
    tmp_path: Path,
) -> None:
    long_line = "::Essay::" + "word " * 600_000 + "{=a ~b}"
    path = tmp_path / "bank.gift"
    path.write_text(
        f"::Capital::What is the capital of France? {{=Paris ~Lyon}}\n\n{long_line}\n\n"
        "::Sum::What is 2 + 2? {=4 ~5}\n",
        encoding="utf-8",
    )
    refusal = (
        f"{path}: line 3 col 1: field 'question': the question is {len(long_line):,} characters "
        f"long; GIFT questions are read up to {MAX_QUESTION_CHARS:,} characters"
    )
    code, err = lint_stderr(path, "--strict", process=True)
    assert code == 2 and err.endswith(f"quiztui: error: {refusal}\n")
    code, err = lint_stderr(path)
    assert code == 0 and f"quiztui: skipped {refusal} (item 'Essay')\n" in err
    bank = load_bank(path, strict=False)
    assert [item.title for item in bank.items] == ["Capital", "Sum"]
    (skipped,) = bank.skipped
    assert (skipped.title, skipped.line) == ("Essay", 3) and refusal in skipped.problem


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from(list('[]{}"\\ a\n') + ['"x"', "[]", "{}"]), max_size=60),
    st.integers(min_value=1, max_value=6),
)
def test_the_quick_depth_check_answers_as_the_scan_does(parts: list[str], limit: int) -> None:
    """``too_deep`` first strips strings and pairs in C; whatever it decides, the bracket scan
    (``_scan``, the check before it) decides alike: balanced or not, strings closed or open,
    escapes, alternating brackets ({[{[...]}]} once counted a level short)."""
    text = "".join(parts)
    assert too_deep(text, limit) == _scan(text, limit)
    nested = "{[" * limit + "]}" * limit
    assert too_deep(nested, 2 * limit) is None and too_deep(nested, 2 * limit - 1) == 1
