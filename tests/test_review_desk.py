"""The review desk's domain and store: decisions, carry-over by content hash, schema v9."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from quiztui.core.decisions import (
    ACCEPT,
    CLEAR,
    DROP,
    FIX,
    REWRITE,
    Decision,
    carried,
    carry_over,
    decision_counts,
    gold_labels,
    make_decision,
    matches_review_filter,
    pending_fixes,
    question_hash,
)
from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuiztuiError
from quiztui.store import Store
from quiztui.store.db import MIGRATIONS


def quiz_of(*questions: Question) -> Quiz:
    return Quiz(title="Desk", questions=questions)


CAPITAL = Question(id="q1", text="Capital of Australia?", options=("Sydney", "Canberra"), key=0)
SODIUM = Question(id="q2", text="Symbol for sodium?", options=("So", "Na", "S"), key=1)
HEXAGON = Question(id="q3", text="Sides of a hexagon?", options=("5", "6", "7"), key=1)
OCEAN = Question(id="q4", text="Largest ocean?", options=("Atlantic", "Pacific"), key=1)


def test_a_decision_is_checked_against_its_question() -> None:
    fix = make_decision(CAPITAL, FIX, option=1, note="  Canberra since 1913  ")
    assert (fix.truth, fix.label, fix.note, fix.key) == (1, "fix→B", "Canberra since 1913", 0)
    assert make_decision(SODIUM, ACCEPT).truth == 1
    assert make_decision(HEXAGON, REWRITE).truth is None
    assert make_decision(OCEAN, DROP).truth is None
    with pytest.raises(QuiztuiError, match="already the key"):
        make_decision(CAPITAL, FIX, option=0)
    with pytest.raises(QuiztuiError, match="one of its 2 options"):
        make_decision(CAPITAL, FIX, option=2)
    with pytest.raises(QuiztuiError, match="only a fix"):
        make_decision(CAPITAL, ACCEPT, option=1)
    with pytest.raises(QuiztuiError, match="unknown review decision"):
        make_decision(CAPITAL, "maybe")


def test_the_content_hash_is_the_stem_and_options_not_the_key_or_id() -> None:
    moved = CAPITAL.model_copy(update={"id": "q9", "key": 1})
    assert question_hash(moved) == question_hash(CAPITAL)
    reworded = CAPITAL.model_copy(update={"text": "Capital city of Australia?"})
    assert question_hash(reworded) != question_hash(CAPITAL)
    reordered = CAPITAL.model_copy(update={"options": ("Canberra", "Sydney")})
    assert question_hash(reordered) != question_hash(CAPITAL)


def test_carry_over_keeps_unchanged_and_fixed_questions_only() -> None:
    fix = make_decision(CAPITAL, FIX, option=1)
    accept = make_decision(SODIUM, ACCEPT)
    latest = {d.question_hash: d for d in (fix, accept)}
    # Same quiz, questions moved: found by hash, under their new ids.
    moved = quiz_of(SODIUM.model_copy(update={"id": "q1"}), CAPITAL.model_copy(update={"id": "q2"}))
    kept = carry_over(moved, latest)
    assert {qid: d.action for qid, d in kept.items()} == {"q1": ACCEPT, "q2": FIX}
    assert kept["q2"].question_id == "q2"
    # The fix applied (key = chosen option): still carried, and no longer pending.
    applied = CAPITAL.model_copy(update={"key": 1})
    assert carried(fix, applied) is not None
    assert pending_fixes(quiz_of(applied), {"q1": fix}) == []
    assert pending_fixes(quiz_of(CAPITAL), {"q1": fix}) == [(CAPITAL, 1)]
    # Edited since: another key than decided, or other wording: nothing carried.
    rekeyed = SODIUM.model_copy(update={"key": 2})
    assert carried(accept, rekeyed) is None
    edited = SODIUM.model_copy(update={"options": ("So", "Na", "Sn")})
    assert carry_over(quiz_of(edited), latest) == {}
    # Taken back: the newest decision is a clearing, which carries as none.
    cleared = make_decision(SODIUM, CLEAR)
    assert carry_over(quiz_of(SODIUM), {cleared.question_hash: cleared}) == {}
    assert decision_counts([fix, accept, cleared]) == {ACCEPT: 1, FIX: 1, REWRITE: 0, DROP: 0}


def test_gold_labels_and_filters() -> None:
    decisions = {
        "q1": make_decision(CAPITAL, FIX, option=1),
        "q2": make_decision(SODIUM, ACCEPT),
        "q3": make_decision(HEXAGON, REWRITE),
        "q4": make_decision(OCEAN, DROP),
    }
    gold, truth = gold_labels((CAPITAL, SODIUM, HEXAGON, OCEAN), decisions)
    assert [q.id for q in gold] == ["q1", "q2"]
    assert truth == {"q1": 1, "q2": 1}
    assert matches_review_filter("needs review", None)
    assert not matches_review_filter("needs review", decisions["q1"])
    assert matches_review_filter("decided", decisions["q3"])
    assert not matches_review_filter("decided", None)
    assert matches_review_filter("all", None)


def test_store_keeps_the_newest_decision_per_question(tmp_path: Path) -> None:
    with Store(tmp_path / "runs.db") as store:
        first = store.decisions.record(make_decision(CAPITAL, ACCEPT, run_id=41), "quiz")
        assert first.run_id is None  # no such run in this store: the link is dropped
        assert first.decided_at > 0
        store.decisions.record(make_decision(CAPITAL, FIX, option=1, note="n"), "quiz")
        store.decisions.record(make_decision(SODIUM, DROP), "quiz")
        latest = store.decisions.latest([question_hash(CAPITAL), question_hash(SODIUM), "x"])
        assert {h: (d.action, d.option, d.note) for h, d in latest.items()} == {
            question_hash(CAPITAL): (FIX, 1, "n"),
            question_hash(SODIUM): (DROP, None, ""),
        }
        assert store.decisions.count() == 3


def v8_store(path: Path) -> None:
    """A run store as quiztui wrote it at schema v8, with one vet run in it."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:8]:
        for statement in script.split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("PRAGMA user_version = 8")
    conn.execute(
        "INSERT INTO runs (id, created_at, status, quiz_title, quiz_hash, provider, model,"
        " base_url, judge_label, simulated, judge_key, prompt_hash, seed, batch_size, params_json)"
        " VALUES (7, 1.0, 'finished', 'Old quiz', 'h', 'simulated', 'm', '', 'SIMULATED', 1,"
        " 'k', 'p', 0, 20, '{}')"
    )
    conn.close()


def test_a_v8_store_is_migrated_to_v9_and_keeps_its_runs(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    v8_store(db)
    with Store(db) as store:
        version = store.conn.execute("PRAGMA user_version").fetchone()[0]
        assert version == len(MIGRATIONS) >= 9  # v9 and any later migration applied
        assert store.get_run(7).quiz_title == "Old quiz"
        assert store.decisions.count() == 0
        stored = store.decisions.record(make_decision(SODIUM, ACCEPT, run_id=7), "h")
        assert stored.run_id == 7
        assert [d.action for d in store.decisions.for_run(7)] == [ACCEPT]
    with Store(db) as again:  # opening it again applies nothing twice
        assert again.decisions.count() == 1


# -- exports --------------------------------------------------------------------------------

BANK = """\
[
  {"question": "Capital of Australia?", "responses": ["Sydney", "Canberra"], "correct": "Sydney"},
  {"question": "Symbol for sodium?", "responses": ["So", "Na", "S"], "correct": "Na"},
  {"question": "Sides of a hexagon?", "responses": ["5", "6", "7"], "correct": "6"}
]
"""


def test_reports_carry_the_decisions_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv
    import io
    import json

    from quiztui.cli import main
    from quiztui.config import load_config
    from quiztui.formats import load_quiz

    quiz_path = tmp_path / "bank.json"
    quiz_path.write_text(BANK, encoding="utf-8")
    first = tmp_path / "first.json"
    assert main(["vet", str(quiz_path), "--no-tui", "--format", "json", "-o", str(first)]) in (0, 1)
    run_id = json.loads(first.read_text())["run_id"]
    quiz = load_quiz(quiz_path)
    capital, sodium, hexagon = quiz.questions
    with Store(load_config().db_path()) as store:
        for decision in (
            make_decision(capital, FIX, option=1, note='=HYPERLINK("x") <b>Canberra</b>'),
            make_decision(sodium, ACCEPT, note="ok | checked"),
            make_decision(hexagon, DROP),
        ):
            store.decisions.record(replace_run(decision, run_id), quiz.content_hash())

    def report(fmt: str) -> str:
        capsys.readouterr()
        assert main(["report", str(run_id), "--format", fmt]) == 0
        return capsys.readouterr().out

    data = json.loads(report("json"))
    assert [(r["question_id"], r["decision"], r["option_text"]) for r in data["review"]] == [
        ("q1", FIX, "Canberra"),
        ("q2", ACCEPT, None),
        ("q3", DROP, None),
    ]
    assert data["review"][0]["run_id"] == run_id
    rows = list(csv.DictReader(io.StringIO(report("csv"), newline="")))
    assert [(r["review"], r["review_option"]) for r in rows] == [
        (FIX, "Canberra"),
        (ACCEPT, ""),
        (DROP, ""),
    ]
    assert rows[0]["review_note"].startswith("'=HYPERLINK")  # a spreadsheet shows it as text
    md = report("md")
    assert "## Review" in md
    assert "| q1 | Capital of Australia? | fix | Canberra |" in md
    assert "ok \\| checked" in md  # the pipe cannot split the table row
    page = report("html")
    assert '<section id="review">' in page
    assert "&lt;b&gt;Canberra&lt;/b&gt;" in page and "<b>Canberra</b>" not in page
    # The headless vet report of a later run of the same quiz carries them over.
    second = tmp_path / "second.json"
    assert main(["vet", str(quiz_path), "--no-tui", "--format", "json", "-o", str(second)]) in (
        0,
        1,
    )
    later = json.loads(second.read_text())
    assert later["run_id"] != run_id
    assert [r["decision"] for r in later["review"]] == [FIX, ACCEPT, DROP]


def replace_run(decision: Decision, run_id: int) -> Decision:
    from dataclasses import replace

    return replace(decision, run_id=run_id)


# -- apply fixes from the command line ------------------------------------------------------

GIFT = """\
// Year 7 science, unit 3
$CATEGORY: $course$/top/Science

::Star::Which star is at the centre of our solar system? {
  =The Moon # a planted wrong key
  ~Sirius
  ~The Sun
  ~Polaris
}

::Essay::Describe the water cycle. {}

::Sodium::What is the chemical symbol for sodium? {=Na ~So ~Sd ~S}
"""


def test_apply_fixes_writes_only_the_fixed_key_in_the_files_own_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from quiztui.cli import main
    from quiztui.config import load_config
    from quiztui.formats import load_quiz

    pytest.importorskip("quiztui.formats.gift")
    quiz_path = tmp_path / "unit3.gift"
    quiz_path.write_text(GIFT, encoding="utf-8")
    original = quiz_path.read_bytes()
    report = tmp_path / "r.json"
    assert main(["vet", str(quiz_path), "--no-tui", "--format", "json", "-o", str(report)]) in (
        0,
        1,
    )
    run_id = json.loads(report.read_text())["run_id"]
    quiz = load_quiz(quiz_path)
    star, sodium = quiz.questions
    capsys.readouterr()
    assert main(["apply-fixes", str(run_id)]) == 0
    assert "no fix to apply" in capsys.readouterr().err
    with Store(load_config().db_path()) as store:
        store.decisions.record(make_decision(star, FIX, option=2, run_id=run_id), "h")
        store.decisions.record(make_decision(sodium, ACCEPT, run_id=run_id), "h")

    assert main(["apply-fixes", str(run_id), "--dry-run"]) == 0
    out = capsys.readouterr()
    assert "q1 (line 4): key A 'The Moon' -> C 'The Sun'" in out.out
    assert quiz_path.read_bytes() == original and not (tmp_path / "unit3.gift.bak").exists()

    assert main(["apply-fixes", str(run_id)]) == 0
    assert "wrote 1 fixed key(s)" in capsys.readouterr().err
    assert (tmp_path / "unit3.gift.bak").read_bytes() == original
    after = quiz_path.read_text(encoding="utf-8")
    star_start, star_end = GIFT.index("::Star::"), GIFT.index("::Essay::")
    assert after.startswith(GIFT[:star_start]) and after.endswith(GIFT[star_end:])
    fixed = load_quiz(quiz_path)
    assert [(q.text, q.options, q.key) for q in fixed.questions] == [
        (star.text, star.options, 2),
        (sodium.text, sodium.options, sodium.key),
    ]
    assert [u.type for u in fixed.unjudged] == ["essay"]
    # Applied: the fix is carried (key = chosen option), nothing is left to write.
    assert main(["apply-fixes", str(run_id)]) == 0
    assert "1 fix(es) already in the file" in capsys.readouterr().err

    assert main(["apply-fixes", "999"]) == 2
    err = capsys.readouterr().err
    assert "no run with id 999" in err and "Traceback" not in err
    quiz_path.unlink()
    assert main(["apply-fixes", str(run_id)]) == 2
    assert "is not there" in capsys.readouterr().err


def test_a_fix_on_one_blank_of_an_embedded_answers_question_rewrites_that_blank(
    tmp_path: Path,
) -> None:
    from quiztui.core.decisions import fix_edits
    from quiztui.formats import load_quiz
    from quiztui.formats.bank_io import load_bank, save_edits

    pytest.importorskip("quiztui.formats.gift")
    path = tmp_path / "capitals.gift"
    path.write_text(
        "::Capitals::The capital of Australia is {1:MC:=Sydney~Canberra~Perth} and of New"
        " Zealand {1:MC:=Wellington~Auckland}.\n\n::Sum::What is 2 + 2? {=4 ~5 ~3}\n",
        encoding="utf-8",
    )
    quiz = load_quiz(path)
    blank = quiz.question("q1.1")
    decisions = {"q1.1": make_decision(blank, FIX, option=1)}
    bank = load_bank(path, strict=False)
    save_edits(bank, fix_edits(bank, pending_fixes(quiz, decisions)))
    fixed = load_quiz(path)
    assert [(q.id, q.key) for q in fixed.questions] == [("q1.1", 1), ("q1.2", 0), ("q2", 0)]
    assert path.read_text(encoding="utf-8").endswith("::Sum::What is 2 + 2? {=4 ~5 ~3}\n")


def test_gold_from_review_with_the_simulated_judge_and_a_changed_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's judge (here the simulated one) measured on the two questions accepted; an edited
    judge prompt since the run is said on stderr, since the profile will not match the run."""
    import json

    from quiztui.cli import main
    from quiztui.config import load_config
    from quiztui.formats import load_quiz
    from quiztui.locations import config_dir

    quiz_path = tmp_path / "bank.json"
    quiz_path.write_text(BANK, encoding="utf-8")
    report = tmp_path / "r.json"
    assert main(["vet", str(quiz_path), "--no-tui", "--format", "json", "-o", str(report)]) in (
        0,
        1,
    )
    run_id = json.loads(report.read_text())["run_id"]
    capital, sodium, hexagon = load_quiz(quiz_path).questions
    with Store(load_config().db_path()) as store:
        store.decisions.record(make_decision(sodium, ACCEPT, run_id=run_id), "h")
        store.decisions.record(make_decision(hexagon, ACCEPT, run_id=run_id), "h")
        store.decisions.record(make_decision(capital, REWRITE, run_id=run_id), "h")
    capsys.readouterr()
    assert main(["calibrate", "--gold-from-review", str(run_id), "--format", "json"]) == 0
    out = capsys.readouterr()
    (profile,) = json.loads(out.out)
    assert (profile["provider"], profile["questions"]) == ("simulated", 2)
    assert profile["gold"] == f"review of run {run_id}: 2 decided questions (2 accepted, 0 fixed)"
    assert profile["tp"] + profile["fn"] == 2 and profile["tn"] + profile["fp"] == 4
    assert "prompt has changed" not in out.err

    repo_prompt = Path(__file__).resolve().parents[1] / "prompts" / "judge_assertions.md"
    override = config_dir() / "prompts" / "judge_assertions.md"
    override.parent.mkdir(parents=True, exist_ok=True)
    override.write_text(repo_prompt.read_text(encoding="utf-8") + "\nBe brief.\n", "utf-8")
    assert main(["calibrate", "--gold-from-review", str(run_id), "--format", "json"]) == 0
    assert f"the judge prompt has changed since run {run_id}" in capsys.readouterr().err
    assert main(["calibrate", str(quiz_path), "--gold-from-review", str(run_id)]) == 2
    assert "not both" in capsys.readouterr().err


def test_a_json_question_saved_with_a_new_key_keeps_every_other_byte() -> None:
    """``dump_like``: the same members in the same order → only the changed values rewritten
    (indentation, inline arrays, escapes, spacing kept); another shape → rendered like it."""
    import json

    from quiztui.formats._source import dump_like

    original = (
        '{\n    "question": "Caf\\u00e9 or tea?",\n    "responses": ["Caf\\u00e9",  "Tea"],'
        '\n    "correct": "Tea", "n": 2\n  }'
    )
    text = "[\n  " + original + "\n]\n"
    obj = json.loads(original)
    obj["correct"] = "Café"
    patched = dump_like(obj, original, text, 4)
    assert patched == original.replace('"correct": "Tea"', '"correct": "Caf\\u00e9"')
    obj["responses"][1] = "Green tea"
    assert dump_like(obj, original, text, 4) == patched.replace('"Tea"]', '"Green tea"]')
    obj["responses"].append("Water")  # another shape: the whole object in the file's style
    reshaped = dump_like(obj, original, text, 4)
    assert json.loads(reshaped) == obj and reshaped.startswith('{\n    "question"')
    one_line = '{"question":"2+2?","responses":["4","5"],"correct":"5"}'
    fixed = json.loads(one_line) | {"correct": "4"}
    assert dump_like(fixed, one_line, one_line, 0) == one_line.replace('"5"}', '"4"}')
