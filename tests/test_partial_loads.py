"""Partial loads: a quiz file with bad items loads the good ones, names each skipped item on one
line in the strict error's words, and a save never drops what the author wrote."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiztui.cli import main
from quiztui.core.bank import Text
from quiztui.errors import QuizFormatError
from quiztui.formats import aiken, gift, load_quiz, moodle_xml
from quiztui.formats.bank_io import edited_text, load_bank, save_edits

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "quiz_formats"
AIKEN_ERRORS = SHARED / "moodle_core_fixtures" / "aiken_errors.txt"

BANK = (
    "$CATEGORY: grammar/existential\n"
    "\n"
    "::Exist 1::{~It ~=There} are three books on the table.\n"
    "\n"
    "// a typo the teacher never noticed\n"
    "::Exist 2::{~It ~=There is a cat.\n"
    "\n"
    "::Exist 3::{~It ~=There} were many people.\n"
    "\n"
    "::Exist 4::Choose { =is ~ ~are }\n"
    "\n"
    "::Exist 5::{~It ~=There} is no milk left.\n"
)


def _strict_lines(text: str) -> list[str]:
    with pytest.raises(QuizFormatError) as caught:
        gift.parse_bank(text, "english.gift", "english")
    return caught.value.all_lines()


def test_gift_loads_the_good_items_and_lists_each_skipped_one() -> None:
    bank = gift.parse_bank(BANK, "english.gift", "english", strict=False)
    assert [i.title for i in bank.items] == ["Exist 1", "Exist 3", "Exist 5"]
    assert all(i.category == "grammar/existential" for i in bank.items)
    assert [(s.line, s.title) for s in bank.skipped] == [(6, "Exist 2"), (10, "Exist 4")]
    # The same words as the strict error, which reports them all.
    assert [s.problem for s in bank.skipped] == _strict_lines(BANK)
    assert str(bank.skipped[0]) == (
        "english.gift: line 6 col 12: field 'answers': '{' is never closed by '}' (item 'Exist 2')"
    )
    assert bank.load_report()[0] == (
        "loaded 3 of 5 items (2 skipped: listed below; --strict stops)"
    )


def test_nothing_good_still_fails_whole() -> None:
    with pytest.raises(QuizFormatError):
        gift.parse_bank("Pick {=a ~ ~b}\n", "bad.gift", "bad", strict=False)


def test_save_keeps_skipped_items_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "english.gift"
    path.write_bytes(BANK.replace("\n", "\r\n").encode())
    bank = load_bank(path, strict=False)
    edited = replace(bank.items[1], stem=Text("were many people there."))
    save_edits(bank, {1: edited})
    saved = path.read_bytes().decode()
    for block in ("::Exist 2::{~It ~=There is a cat.", "::Exist 4::Choose { =is ~ ~are }"):
        assert block in saved
    assert saved.count("\r\n") == saved.count("\n")  # the file's own line endings
    again = gift.parse_bank(saved, "english.gift", "english", strict=False)
    assert len(again.items) == 3 and len(again.skipped) == 2


def test_aiken_moodle_error_fixture_loads_its_good_questions() -> None:
    if not AIKEN_ERRORS.exists():
        pytest.skip(f"absent: {AIKEN_ERRORS}")
    text = AIKEN_ERRORS.read_text(encoding="utf-8")
    bank = aiken.parse_bank(text, "aiken_errors.txt", "errors", strict=False)
    with pytest.raises(QuizFormatError) as caught:
        aiken.parse_bank(text, "aiken_errors.txt", "errors")
    assert len(bank.items) >= 1 and len(bank.skipped) >= 1
    strict_lines = caught.value.all_lines()
    assert all(s.problem.split(" (and ")[0] in strict_lines for s in bank.skipped)


def test_moodle_xml_skips_the_bad_question() -> None:
    xml = (
        "<quiz>\n"
        '<question type="multichoice"><name><text>Good</text></name>\n'
        "<questiontext><text>Pick</text></questiontext>\n"
        '<answer fraction="100"><text>a</text></answer><answer fraction="0"><text>b</text>'
        "</answer></question>\n"
        '<question type="truefalse"><name><text>Broken</text></name>\n'
        "<questiontext><text>Sky?</text></questiontext>\n"
        '<answer fraction="100"><text>yes</text></answer></question>\n'
        "</quiz>\n"
    )
    bank = moodle_xml.parse_bank(xml, "b.xml", "b", strict=False)
    assert [i.title for i in bank.items] == ["Good"]
    assert [(s.line, s.title) for s in bank.skipped] == [(5, "Broken")]
    assert "a truefalse question needs one answer 'true' and one 'false'" in bank.skipped[0].problem


def test_csv_rows_with_problems_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text(
        "question,correct,distractor1,distractor2\n"
        "Capital of France?,Paris,Lyon,Nice\n"
        "Empty key?,,Lyon,Nice\n"
        "Capital of Italy?,Rome,Milan,Turin\n",
        encoding="utf-8",
    )
    quiz = load_quiz(path, strict=False)
    assert [q.text for q in quiz.questions] == ["Capital of France?", "Capital of Italy?"]
    assert len(quiz.skipped) == 1 and "line 3" in quiz.skipped[0]
    bank = load_bank(path, strict=False)
    assert [i.span is not None for i in bank.items] == [True, True]
    with pytest.raises(QuizFormatError):
        load_quiz(path)


def test_cli_lint_and_convert_go_on_and_strict_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "english.gift"
    path.write_text(BANK, encoding="utf-8")
    assert main(["lint", str(path), "--fail-on", "never"]) == 0
    err = capsys.readouterr().err
    assert "quiztui: loaded 3 of 5 items (2 skipped: listed below; --strict stops)" in err
    assert err.count("quiztui: skipped ") == 2 and "(item 'Exist 4')" in err
    assert main(["lint", str(path), "--strict"]) == 2
    err = capsys.readouterr().err
    assert "line 6 col 12: field 'answers'" in err and "Traceback" not in err
    config = tmp_path / "config.toml"
    config.write_text("[formats]\nstrict = true\n", encoding="utf-8")
    assert main(["lint", str(path), "--config", str(config)]) == 2
    capsys.readouterr()
    out = tmp_path / "english.xml"
    assert main(["convert", str(path), str(out)]) == 0
    assert "loaded 3 of 5 items" in capsys.readouterr().err
    assert len(moodle_xml.parse_bank(out.read_text(encoding="utf-8"), "o", "o").items) == 3
    assert main(["convert", str(path), str(tmp_path / "x.xml"), "--strict"]) == 2


# --- B2: generated banks mixing valid and broken items ------------------------------------------

_GOOD = st.sampled_from(
    [
        "::Good {n}::{{~It ~=There}} are {n} books.",
        "Sky {n} is blue. {{TRUE}}",
        "Grant was born in {{1:NUMERICAL:=1822}} ({n}) and {{1:MC:~is~=was}} a general.",
        "Year {n}? {{#=1822:0 =%50%1822:2}}",
        "Capital {n}? {{=Rome =%50%Roma}}",
    ]
)
_BROKEN = st.sampled_from(
    [
        "::Bad {n}::{{~It ~=There is a cat.",
        "Pick {n} {{=a ~ ~b}}",
        "Mixed {n} {{1:SA:=x}} and {{=b ~c}}",
        "Closed {n} }} early",
        "Choice {n} {{1:MC:=only}} here",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _GOOD, _BROKEN), min_size=1, max_size=8), st.data())
def test_generated_banks_load_the_valid_items(
    rows: list[tuple[bool, str, str]], data: st.DataObject
) -> None:
    blocks = [(good if ok else broken).format(n=n) for n, (ok, good, broken) in enumerate(rows)]
    text = "\n\n".join(blocks) + "\n"
    valid = [b for b, (ok, _, _) in zip(blocks, rows, strict=True) if ok]
    if not valid:
        with pytest.raises(QuizFormatError):
            gift.parse_bank(text, "g.gift", "g", strict=False)
        return
    bank = gift.parse_bank(text, "g.gift", "g", strict=False)
    assert len(bank.items) == len(valid)
    assert len(bank.skipped) == len(blocks) - len(valid)
    assert [text[i.span[0] : i.span[1]] for i in bank.items if i.span] == valid
    # An unedited save is the file; an edit changes only that question's bytes.
    assert edited_text(bank, {}) == text
    index = data.draw(st.integers(0, len(bank.items) - 1))
    item = bank.items[index]
    assert item.span is not None
    new = edited_text(bank, {index: replace(item, title="Edited")})
    start, end = item.span
    assert new[:start] == text[:start]
    assert new[len(new) - (len(text) - end) :] == text[end:]
    assert gift.parse_bank(new, "g.gift", "g", strict=False).items[index].title == "Edited"


def test_cli_vet_judges_the_loaded_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "english.gift"
    path.write_text(BANK, encoding="utf-8")
    report = tmp_path / "report.json"
    code = main(["vet", str(path), "--no-tui", "--fail-on", "never", "-o", str(report)])
    assert code == 0
    err = capsys.readouterr().err
    assert "quiztui: loaded 3 of 5 items (2 skipped: listed below; --strict stops)" in err
    assert err.count("quiztui: skipped ") == 2
    assert main(["vet", str(path), "--no-tui", "--strict"]) == 2
    assert "line 6 col 12" in capsys.readouterr().err


def test_cli_grade_skips_bad_answer_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "answers.csv"
    path.write_text(
        "id,question,reference,candidate,human\n"
        "a1,Capital of France?,Paris,Paris,5\n"
        "a2,Capital of Italy?,Rome,Milan,not a number\n"
        "a3,Largest planet?,Jupiter,Jupiter,4\n",
        encoding="utf-8",
    )
    out = tmp_path / "grades.json"
    args = ["grade", str(path), "--grader", "lexical", "--format", "json", "-o", str(out)]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "quiztui: loaded 2 of 3 items (1 skipped: listed below; --strict stops)" in err
    assert "line 3: field 'human': must be a number" in err
    assert main([*args, "--strict"]) == 2


async def test_tui_shows_the_skipped_items_count_and_lines() -> None:
    from textual.widgets import Static
    from tui_helpers import constant_clock, shown_toasts, stream_factory, wait_until

    from quiztui.core.bank import bank_quiz
    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.services import AppServices

    quiz = bank_quiz(gift.parse_bank(BANK, "english.gift", "english", strict=False))
    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream_factory(quiz), judge_label="SIMULATED judge", simulated=True),
        autorun=False,
        clock=constant_clock(),
    )
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_until(pilot, lambda: shown_toasts(pilot), what="a toast")
        toasts = "\n".join(shown_toasts(pilot))
        assert "loaded 3 of 5 items (2 skipped" in toasts
        assert "(item 'Exist 4')" in toasts
        stats = app.screen.query_one("#stats-line", Static)
        assert "skipped items 2" in str(stats.content)


def test_report_and_runs_find_a_partly_loaded_quiz(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = tmp_path / "english.gift"
    path.write_text(BANK, encoding="utf-8")
    report = tmp_path / "r.md"
    assert main(["vet", str(path), "--no-tui", "--fail-on", "never", "-o", str(report)]) == 0
    capsys.readouterr()
    assert main(["runs", "--quiz", str(path)]) == 0
    listed = capsys.readouterr().out
    assert "english" in listed  # the partly loaded quiz's run, found by its content
    again = tmp_path / "again.json"
    assert main(["report", "1", "-o", str(again)]) == 0
    extras = json.loads(again.read_text(encoding="utf-8"))
    assert "lint" in extras  # the quiz file was re-read as vet read it (same content hash)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), _GOOD, _BROKEN), min_size=2, max_size=6),
    st.sampled_from(["utf-8", "utf-8-sig", "cp1252"]),
    st.sampled_from(["\n", "\r\n"]),
    st.data(),
)
def test_saves_keep_every_other_byte(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[bool, str, str]],
    encoding: str,
    newline: str,
    data: st.DataObject,
) -> None:
    blocks = [(good if ok else broken).format(n=n) for n, (ok, good, broken) in enumerate(rows)]
    if not any(ok for ok, _, _ in rows):
        return
    text = ("::Ünïcödé:: Déjà vu? {=oui ~non}\n\n" + "\n\n".join(blocks) + "\n").replace(
        "\n", newline
    )
    path = tmp_path_factory.mktemp("save") / "bank.gift"
    path.write_bytes(text.encode(encoding))
    original = path.read_bytes()
    bank = load_bank(path, strict=False)
    save_edits(bank, {})
    assert path.read_bytes() == original  # an unedited save is the file, byte for byte
    index = data.draw(st.integers(0, len(bank.items) - 1))
    item = bank.items[index]
    assert item.span is not None
    save_edits(bank, {index: replace(item, title="Edited")})
    saved = path.read_bytes()
    start, end = item.span
    before = text[:start].encode(encoding)
    after = text[end:].encode("utf-8" if encoding == "utf-8-sig" else encoding)
    assert saved.startswith(before) and saved.endswith(after)


@pytest.mark.parametrize(
    "command",
    [
        ["review", "--judge", "simulated"],
        ["robustness", "--judge", "simulated", "--variants", "2"],
        ["panel", "--judge", "simulated", "--samples", "2"],
    ],
    ids=["review", "robustness", "panel"],
)
def test_cli_review_robustness_and_panel_go_on_and_strict_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    path = tmp_path / "english.gift"
    path.write_text(BANK, encoding="utf-8")
    name, *flags = command
    config = tmp_path / "config.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "runs.db"}"\n', encoding="utf-8")
    argv = [name, str(path), "--config", str(config), *flags]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "quiztui: loaded 3 of 5 items (2 skipped: listed below; --strict stops)" in err
    assert err.count("quiztui: skipped ") == 2 and "(item 'Exist 4')" in err
    assert main([*argv, "--strict"]) == 2
    err = capsys.readouterr().err
    assert "line 6 col 12: field 'answers'" in err and "Traceback" not in err


def test_a_bank_with_skipped_rows_finds_each_kept_items_span_by_its_line(tmp_path: Path) -> None:
    """With items skipped the spans no longer line up with the questions, and each question's
    row is found by the line it starts on (counted once through the file, not from the top for
    each row: that was quadratic, 8.7 s of a 25,000-question file's 12.5 s start)."""
    from quiztui.formats.bank_io import _spans_by_line, load_bank

    rows = [
        {
            "question": f"What is {n} + {n}?",
            "responses": [str(2 * n), str(2 * n + 1)],
            "correct": str(2 * n),
        }
        for n in range(1, 7)
    ]
    rows[2]["correct"] = "not an option"  # skipped
    text = "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n"
    path = tmp_path / "sums.json"
    path.write_text(text, encoding="utf-8")
    bank = load_bank(path, strict=False)
    assert len(bank.items) == 5 and len(bank.skipped) == 1
    for item in bank.items:
        assert item.span is not None
        start, end = item.span
        assert json.loads(text[start:end])["question"] == item.stem.text
    spans = [(0, 1), (2, 3), (9, 10), (4, 5)]  # given out of order
    assert _spans_by_line("a\nb\nc\nd\ne\n", spans) == {1: (0, 1), 2: (2, 3), 3: (4, 5), 5: (9, 10)}
