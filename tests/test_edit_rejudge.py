"""U5: fix and re-judge in the TUI, over real HTTP to the fake server, with real files.

The app is built the way `quiztui QUIZ` builds it (``quiztui.cli.vet.build_vet_app``). After the first run,
editing one question in the detail view sends only that question's changed assertions (the
unchanged ones come from the verdict cache), its badge is re-scored, and ``ctrl+s`` rewrites
only that question's bytes in the file, with the old file kept as ``<file>.bak``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input
from tui_helpers import paste, settled

from quiztui.assemble.vet import vet_runs
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.core.assertions import assertion_text
from quiztui.formats import load_quiz
from quiztui.simulate.vet import truth_table
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.screens.edit import EditQuestionScreen, check_edit

REPO = Path(__file__).resolve().parents[1]
PLANTED = REPO / "sample_quizzes" / "planted_errors.json"

GIFT = """\
// A small bank in Moodle GIFT
$CATEGORY: $course$/top/Geography

::Capital::What is the capital of Australia? {
  ~Sydney # The largest city, not the capital.
  =Canberra
  ~Melbourne
  ~Perth
}

::Essay::Describe the water cycle. {}

::Planet::Which planet is closest to the Sun? {~Venus =Mercury ~Mars ~Earth}

::Sodium::What is the chemical symbol for sodium? {=Na ~So ~Sd ~S}
"""


def build_app(quiz_path: Path, server: FakeOpenAI, db: Path) -> tuple[QuiztuiApp, Store]:
    config = load_config()
    judge = config.judge.model_copy(
        update={
            "provider": "openai-compat",
            "base_url": server.base_url,
            "model": "fake-judge",
            "concurrency": 1,
            "logprobs": "off",
        }
    )
    config = config.model_copy(update={"judge": judge})
    store = Store(db)
    quiz = load_quiz(quiz_path)
    app = build_vet_app(config, store, quiz, vet_runs(config, quiz, store, None), autostart=True)
    return app, store


async def edit_option(pilot: Pilot[None], row: int, option: int, new_text: str) -> None:
    """Select the row, open its detail, press e, retype one option, ctrl+s."""
    app = pilot.app
    assert isinstance(app, QuiztuiApp)
    app.vet_screen.questions_table.focus()
    await pilot.press("g", *(["j"] * row), "enter")
    assert isinstance(app.screen, QuestionDetailScreen)
    await pilot.press("e")
    await pilot.pause()
    assert isinstance(app.screen, EditQuestionScreen)
    field = app.screen.query_one(f"#edit-option-{option}", Input)
    field.focus()
    await pilot.press("end", "ctrl+u")
    await paste(pilot, new_text)
    assert field.value == new_text
    await pilot.press("ctrl+s")
    await settled(pilot)


@pytest.mark.parametrize("fmt", ["quizaic", "gift"])
async def test_editing_one_question_rejudges_only_it_and_saves_only_its_bytes(
    fmt: str, tmp_path: Path
) -> None:
    if fmt == "gift":
        pytest.importorskip("quiztui.formats.gift")
        quiz_path = tmp_path / "bank.gift"
        quiz_path.write_text(GIFT, encoding="utf-8")
        # The essay (q2) is not judged, so the Planet question (q3) is the table's second row.
        row, option, changed = 1, 0, "Venus (second planet)"
        qid = "q3"
    else:
        quiz_path = tmp_path / "planted.json"
        shutil.copy(PLANTED, quiz_path)
        row, option, changed = 3, 0, "Venus (second planet)"
        qid = "q4"
    original = quiz_path.read_bytes()
    quiz = load_quiz(quiz_path)
    with FakeOpenAI(truth_table(quiz), seed=5) as server:
        app, store = build_app(quiz_path, server, tmp_path / "runs.db")
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await settled(pilot)
                screen = app.vet_screen
                assert all(r.score is not None for r in screen.state.questions.values())
                first_run = len(server.requests)
                assert first_run > 0
                question = screen.state.questions[qid].question
                old_badge = screen.state.questions[qid].score

                await edit_option(pilot, row, option, changed)

                # Only the edited question's changed assertion went over the wire.
                new_requests = server.requests[first_run:]
                sent = [text for request in new_requests for text in request.texts]
                edited = screen.state.questions[qid].question
                assert edited.options[option] == changed
                assert sent == [assertion_text(edited.text, changed)]
                unchanged = {assertion_text(edited.text, o) for o in edited.options} - set(sent)
                assert len(unchanged) == question.n - 1
                record = screen.state.questions[qid]
                assert record.score is not None and record.score is not old_badge
                assert len(record.options) == edited.n
                assert sum(1 for a in record.options.values() if a.cached) == edited.n - 1
                # Every other question keeps its verdicts and score.
                others = [r for k, r in screen.state.questions.items() if k != qid]
                assert all(r.score is not None and len(r.options) == r.question.n for r in others)
                assert screen.verdicts_table.row_count == sum(q.n for q in screen.quiz.questions)

                await pilot.press("ctrl+s")
                await pilot.pause()
                assert not screen.edits
        finally:
            store.close()

    saved = quiz_path.read_bytes()
    assert (tmp_path / (quiz_path.name + ".bak")).read_bytes() == original
    assert saved != original
    # The file differs from the original only inside the edited question.
    prefix = 0
    while saved[prefix] == original[prefix]:
        prefix += 1
    suffix = 0
    while saved[-1 - suffix] == original[-1 - suffix]:
        suffix += 1
    changed_old = original[prefix : len(original) - suffix].decode()
    changed_new = saved[prefix : len(saved) - suffix].decode()
    assert "Venus" in changed_old or changed_old == ""
    assert changed in changed_new or changed.split()[0] in changed_new
    span_start = original.decode().index(question.text) if fmt == "gift" else None
    if span_start is not None:
        assert prefix > span_start  # the change starts inside the Planet question
    reread = load_quiz(quiz_path)
    before = {q.id: q for q in quiz.questions}
    for q in reread.questions:
        if q.id == qid:
            assert changed in q.options
            assert q.text == question.text
            assert q.key == question.key
        else:
            assert (q.text, q.options, q.key) == (
                before[q.id].text,
                before[q.id].options,
                before[q.id].key,
            )
    if fmt == "gift":
        assert [u.type for u in reread.unjudged] == ["essay"]


async def test_quitting_with_an_unsaved_edit_asks_first(tmp_path: Path) -> None:
    quiz_path = tmp_path / "planted.json"
    shutil.copy(PLANTED, quiz_path)
    with FakeOpenAI(truth_table(load_quiz(quiz_path))) as server:
        app, store = build_app(quiz_path, server, tmp_path / "runs.db")
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await settled(pilot)
                await edit_option(pilot, 0, 0, "Sydney Harbour")
                await pilot.press("q")
                await pilot.pause()
                assert "not written to planted.json" in str(
                    app.screen.query_one("#confirm-text").render()
                )
                await pilot.press("c")  # cancel: save / discard / cancel
                await pilot.press("ctrl+s")
                await pilot.pause()
                await pilot.press("q")
                await pilot.pause()
        finally:
            store.close()
    assert "Sydney Harbour" in quiz_path.read_text()


def test_the_editor_checks_what_it_is_given() -> None:
    assert check_edit("  ", ["a", "b"], "A", False) == "the question text is empty"
    assert check_edit("Q?", ["a", ""], "A", False) == "a question needs at least two options"
    assert check_edit("Q?", ["a", "A "], "A", False) == "option 'A' appears twice"
    assert check_edit("Q?", ["a", "b", ""], "C", False) == "the key must be one of A, B"
    edit = check_edit("Q ?", ["a", "", "c"], "c", False)
    assert not isinstance(edit, str) and (edit.options, edit.key) == (("a", "c"), 1)
    tf = check_edit("Water is wet.", ["True", "False"], "f", True)
    assert not isinstance(tf, str) and tf.key == 1
