"""``quiztui convert``: every format to every format, exit codes, --annotate, in-place saves.

Real processes for the exit codes (U6), real files everywhere: each test's first command runs as
a real process, the ones after it through ``main()`` in-process (``cli_helpers.quiztui_main``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pytest
from cli_helpers import quiztui_main

from quiztui.cli import main
from quiztui.core.bank import apply_edit, bank_quiz
from quiztui.formats import load_quiz
from quiztui.formats.bank_io import edited_text, load_bank

REPO = Path(__file__).resolve().parents[1]
PLANTED = REPO / "sample_quizzes" / "planted_errors.json"
OPENTDB = REPO / "sample_quizzes" / "opentdb_sample.json"
EXTENSION = {
    "quizaic": ".json",
    "opentdb": ".json",
    "csv": ".csv",
    "gift": ".gift",
    "aiken": ".aiken",
    "moodle_xml": ".xml",
}
ONE_KEY_FORMATS = ("quizaic", "opentdb", "csv", "gift", "moodle_xml")

MIXED_GIFT = """\
$CATEGORY: $course$/top/Science

::Sun::Which planet is closest to the Sun? {~Venus =Mercury ~Mars}

::Water::Water boils at 100 °C at sea level. {T#Right.#It does.}

::Essay::Describe the water cycle. {}

::Pi::What is pi to two decimals? {#3.14:0.005}
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiztui", *args], capture_output=True, text=True, timeout=120
    )


def judged(path: Path) -> list[tuple[str, tuple[str, ...], str, str]]:
    """What a judge sees of each question, order of options aside (flat formats shuffle them)."""
    quiz = load_quiz(path)
    return [(q.text, tuple(sorted(q.options)), q.key_text, q.kind) for q in quiz.questions]


@pytest.mark.parametrize("source, target", list(permutations(ONE_KEY_FORMATS, 2)))
def test_every_format_converts_to_every_other_keeping_the_judged_content(
    source: str, target: str, tmp_path: Path
) -> None:
    start = tmp_path / f"start{EXTENSION[source]}"
    assert main(["convert", str(PLANTED), str(start), "--to", source]) == 0
    out = tmp_path / f"out{EXTENSION[target]}"
    assert main(["convert", str(start), str(out), "--to", target]) == 0
    assert judged(out) == judged(PLANTED)
    categories = [q.category for q in load_quiz(out).questions]
    if target not in ("aiken",):
        assert categories == [q.category for q in load_quiz(PLANTED).questions]


def test_aiken_holds_multiple_choice_and_leaves_true_false_out(tmp_path: Path) -> None:
    """Issue 31 item 1: what the target cannot hold is left out, one line each (file, line,
    type, why) and a count, exit 0; --strict refuses the whole conversion (exit 2)."""
    out = tmp_path / "out.aiken"
    strict = run("convert", str(OPENTDB), str(out), "--strict")
    assert strict.returncode == 2
    assert "cannot be written as aiken" in strict.stderr
    assert "Traceback" not in strict.stderr and not out.exists()
    result = quiztui_main("convert", str(OPENTDB), str(out))
    assert result.returncode == 0, result.stderr
    source = load_quiz(OPENTDB)
    kept = [q for q in source.questions if q.kind == "multiple"]
    left = len(source.questions) - len(kept)
    assert result.stderr.count("quiztui: left out ") == left + 1
    assert f"left out {left} of {len(source.questions)} item(s) that aiken cannot hold" in (
        result.stderr
    )
    assert f"left out {OPENTDB}:" in result.stderr and "(truefalse): Aiken holds" in result.stderr
    assert [q.text for q in load_quiz(out).questions] == [q.text for q in kept]
    dropped = quiztui_main("convert", str(OPENTDB), str(out), "--drop-unsupported")  # the old flag
    assert dropped.returncode == 0 and dropped.stderr == result.stderr


def test_types_not_judged_survive_gift_to_xml_to_gift(tmp_path: Path) -> None:
    pytest.importorskip("quiztui.formats.gift")
    gift = tmp_path / "bank.gift"
    gift.write_text(MIXED_GIFT, encoding="utf-8")
    quiz = load_quiz(gift)
    assert [u.type for u in quiz.unjudged] == ["essay", "numerical"]
    assert [q.kind for q in quiz.questions] == ["multiple", "boolean"]
    xml = tmp_path / "bank.xml"
    back = tmp_path / "back.gift"
    assert main(["convert", str(gift), str(xml)]) == 0
    assert main(["convert", str(xml), str(back)]) == 0
    first = [item.content() for item in load_bank(gift).items]
    again = [item.content() for item in load_bank(back).items]
    assert [i.type for i in again] == [i.type for i in first]
    assert [i.stem.plain() for i in again] == [i.stem.plain() for i in first]
    assert [i.category for i in again] == [i.category for i in first]
    assert [[c.text.plain() for c in i.choices] for i in again] == [
        [c.text.plain() for c in i.choices] for i in first
    ]
    # Flat formats cannot hold an essay: it is left out and named; --strict stops instead.
    result = run("convert", str(gift), str(tmp_path / "flat.csv"))
    assert result.returncode == 0
    assert f"left out {gift}:7: item 3 (essay): essay" in result.stderr
    strict = quiztui_main("convert", str(gift), str(tmp_path / "flat2.csv"), "--strict")
    assert strict.returncode == 2 and f"{gift}:7: item 3 (essay)" in strict.stderr


def test_bad_input_exits_2_with_file_line_and_no_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken.aiken"
    broken.write_text("Which?\nA) one\nB) two\nANSWER: C\n", encoding="utf-8")
    result = run("convert", str(broken), str(tmp_path / "out.gift"))
    assert result.returncode == 2
    assert f"{broken}: line 4" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.gift").exists()
    unknown = quiztui_main("convert", str(PLANTED), str(tmp_path / "out.docx"))
    assert unknown.returncode == 2 and "--to" in unknown.stderr
    same = quiztui_main("convert", str(PLANTED), str(PLANTED))
    assert same.returncode == 2 and "overwrite the input" in same.stderr


def test_annotate_writes_the_newest_vet_run_as_gift_comments_and_xml_tags(
    tmp_path: Path,
) -> None:
    pytest.importorskip("quiztui.formats.gift")
    db = tmp_path / "runs.db"
    quiz = tmp_path / "planted.json"
    quiz.write_bytes(PLANTED.read_bytes())
    no_run = run("convert", str(quiz), str(tmp_path / "a.gift"), "--annotate", "--db", str(db))
    assert no_run.returncode == 2 and "no finished vet run" in no_run.stderr
    report = tmp_path / "report.json"
    vet = quiztui_main(
        "vet", str(quiz), "--no-tui", "--db", str(db), "--format", "json", "-o", str(report)
    )
    assert vet.returncode in (0, 1), vet.stderr
    badges = {q["question_id"]: q["badge"] for q in json.loads(report.read_text())["questions"]}
    gift = tmp_path / "a.gift"
    xml = tmp_path / "a.xml"
    for out in (gift, xml):
        done = quiztui_main("convert", str(quiz), str(out), "--annotate", "--db", str(db))
        assert done.returncode == 0, done.stderr
    text = gift.read_text()
    assert text.count("// quiztui: badge=") == 12
    assert f"// quiztui: badge={badges['q1']} " in text
    # Annotations are comments: the annotated file reads back as the same quiz.
    assert judged(gift) == judged(quiz)
    xml_text = xml.read_text()
    assert xml_text.count("<text>quiztui:badge=") == 12
    assert judged(xml) == judged(quiz)
    aiken = quiztui_main(
        "convert", str(quiz), str(tmp_path / "a.aiken"), "--annotate", "--db", str(db)
    )
    assert aiken.returncode == 2 and "annotations" in aiken.stderr


@pytest.mark.parametrize("fmt", ["quizaic", "opentdb", "csv", "gift", "aiken", "moodle_xml"])
def test_saving_one_edit_changes_only_that_question(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"quiz{EXTENSION[fmt]}"
    assert main(["convert", str(PLANTED), str(path), "--to", fmt]) == 0
    bank = load_bank(path)
    text = bank.source_text
    assert text is not None
    index = 4
    question = bank_quiz(bank).questions[index]
    options = list(question.options)
    options[question.key] = options[question.key] + " (edited)"
    edit = apply_edit(bank.items[index], question.text, options, question.key)
    new_text = edited_text(bank, {index: edit})
    start, end = bank.items[index].span  # type: ignore[misc]
    assert new_text[:start] == text[:start]
    assert new_text[len(new_text) - (len(text) - end) :] == text[end:]
    path.write_text(new_text, encoding="utf-8")
    again = load_quiz(path)
    assert again.questions[index].key_text.endswith(" (edited)")
    for i, (q, original) in enumerate(zip(again.questions, bank_quiz(bank).questions, strict=True)):
        if i != index:
            assert (q.text, q.options, q.key) == (original.text, original.options, original.key)


def test_convert_fail_on_lints_the_converted_quiz(tmp_path: Path) -> None:
    planted = REPO / "sample_quizzes" / "lint_planted.json"
    flagged = run("convert", str(planted), str(tmp_path / "b.gift"), "--fail-on", "warning")
    assert flagged.returncode == 1
    # The default selection (correctness): L103, not the style guideline L105.
    assert "quiztui: lint " in flagged.stderr and "L103" in flagged.stderr
    assert "L105" not in flagged.stderr
    assert (tmp_path / "b.gift").exists()  # written all the same
    default = quiztui_main("convert", str(planted), str(tmp_path / "c.gift"))
    assert default.returncode == 0 and "quiztui: lint" not in default.stderr
    clean = quiztui_main("convert", str(PLANTED), str(tmp_path / "a.gift"), "--fail-on", "error")
    assert clean.returncode == 0, clean.stderr


@pytest.mark.parametrize("fmt", ["gift", "aiken", "moodle_xml"])
def test_a_save_into_a_crlf_file_keeps_crlf(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"quiz{EXTENSION[fmt]}"
    assert main(["convert", str(PLANTED), str(path), "--to", fmt]) == 0
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    bank = load_bank(path)
    question = bank_quiz(bank).questions[0]
    edit = apply_edit(bank.items[0], question.text + " (edited)", question.options, question.key)
    new_text = edited_text(bank, {0: edit})
    assert "\n" not in new_text.replace("\r\n", "")
    path.write_bytes(new_text.encode())
    assert load_quiz(path).questions[0].text.endswith("(edited)")
