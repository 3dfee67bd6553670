"""K3: the review desk end to end, with a real run store, a real quiz file and the fake server.

Mark four questions (accept, fix, rewrite, drop) in the vet screen → four rows in the store →
reopen the app on the same quiz: the decisions are shown before any run → "apply fixes" (A)
rewrites only the fixed question's key in the file, a backup beside it → ``quiztui calibrate
--gold-from-review RUN`` measures the run's judge on the accepted and fixed questions only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList
from tui_helpers import paste, settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli import main
from quiztui.cli.vet import build_vet_app
from quiztui.config import Config, load_config
from quiztui.core.assertions import assertion_text
from quiztui.core.decisions import ACCEPT, DROP, FIX, REWRITE
from quiztui.core.quiz import Quiz
from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.decide import DecideScreen
from quiztui.tui.screens.vet import VetScreen
from quiztui.tui.state import IDLE

# A teacher's Quizaic file as people keep them: one object per question over several lines.
# Question 2's key is wrong (the Sun is the right answer, the file keys the Moon).
QUIZ = """\
[
  {
    "question": "Which planet is closest to the Sun?",
    "responses": ["Venus", "Mercury", "Mars", "Earth"],
    "correct": "Mercury"
  },
  {
    "question": "Which star is at the centre of our solar system?",
    "responses": ["The Moon", "Sirius", "The Sun", "Polaris"],
    "correct": "The Moon"
  },
  {
    "question": "How many legs does a spider have, and why is it 8?",
    "responses": ["6", "8", "10", "12"],
    "correct": "8"
  },
  {
    "question": "Which of these is a vegetable?",
    "responses": ["Apple", "Carrot", "Banana", "Cherry"],
    "correct": "Carrot"
  },
  {
    "question": "What is the boiling point of water at sea level in degrees Celsius?",
    "responses": ["90", "100", "110", "120"],
    "correct": "100"
  }
]
"""
RIGHT_STAR = 2  # "The Sun"


def judge_config(server: FakeOpenAI) -> Config:
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
    return config.model_copy(update={"judge": judge})


def open_app(config: Config, quiz_path: Path) -> tuple[QuiztuiApp, Store]:
    """The app as ``quiztui QUIZ`` builds it (outside the test's event loop, as the CLI does)."""
    store = Store(config.db_path())
    quiz = load_quiz(quiz_path)
    runs = vet_runs(config, quiz, store, None)
    return build_vet_app(config, store, quiz, runs, autostart=True), store


def truth(quiz_path: Path) -> dict[str, bool]:
    """Assertion text → truth: the keys, except question 2's, which is "The Sun"."""
    quiz = load_quiz(quiz_path)
    table = {}
    for q in quiz.questions:
        right = RIGHT_STAR if q.id == "q2" else q.key
        for i, option in enumerate(q.options):
            table[assertion_text(q.text, option)] = i == right
    return table


async def run_once(pilot: Pilot[None], screen: VetScreen) -> None:
    """Wait for the launch's run; start one with r when the launch did not."""
    await settled(pilot)
    if screen.state.status == IDLE:
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.state.status != "running", what="the run")
    await settled(pilot)


async def decide(pilot: Pilot[None], row: int, key: str, note: str = "") -> DecideScreen:
    app = pilot.app
    assert isinstance(app, QuiztuiApp)
    app.vet_screen.questions_table.focus()
    app.vet_screen.questions_table.move_cursor(row=row, animate=False)
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen), what="the dialog")
    dialog = app.screen
    assert isinstance(dialog, DecideScreen)
    if note:
        dialog.query_one("#decide-note", Input).focus()
        await paste(pilot, note)
    return dialog


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_review_desk_decisions_carry_over_apply_and_become_gold(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    quiz_path = tmp_path / "space.json"
    quiz_path.write_text(QUIZ, encoding="utf-8")
    original = quiz_path.read_bytes()
    with FakeOpenAI(truth(quiz_path)) as server:
        config = judge_config(server)

        # 1. First session: a run, then four decisions.
        app, store = await asyncio.to_thread(open_app, config, quiz_path)
        try:
            async with app.run_test(size=size) as pilot:
                screen = app.vet_screen
                await run_once(pilot, screen)
                started = screen.state.started
                assert started is not None
                run_id = started.run_id
                q2 = screen.state.questions["q2"].score
                assert q2 is not None and q2.suggested_option == RIGHT_STAR

                dialog = await decide(pilot, 0, "y")
                await pilot.press("enter")
                dialog = await decide(pilot, 1, "o")
                # The judge's suggestion is the option offered first.
                assert dialog.query_one(OptionList).highlighted == RIGHT_STAR
                await pilot.press("f1")  # help works inside the dialog, then closes
                await wait_until(pilot, lambda: app.screen is not dialog, what="help")
                await pilot.press("escape")
                await wait_until(pilot, lambda: app.screen is dialog, what="help closed")
                dialog.query_one("#decide-note", Input).focus()
                await paste(pilot, "the Sun, not the Moon")
                await pilot.press("ctrl+s")
                await decide(pilot, 2, "t", "the 'why' gives the answer away")
                await pilot.press("enter")
                await decide(pilot, 3, "d")
                await pilot.press("enter")
                await wait_until(pilot, lambda: isinstance(app.screen, VetScreen), what="vet")
                await settled(pilot)

                table = screen.questions_table
                shown = {qid: table.get_cell(qid, "review").plain for qid in ("q1", "q2", "q3")}
                assert shown == {"q1": "accept", "q2": "fix→C", "q3": "rewrite"}
                assert table.get_cell("q5", "review").plain == ""
                # n cycles the review filter: needs review (q5 only), decided (four), all.
                await pilot.press("n")
                await settled(pilot)
                assert list(table.rows) and [k.value for k in table.rows] == ["q5"]
                await pilot.press("n")
                await settled(pilot)
                assert [k.value for k in table.rows] == ["q1", "q2", "q3", "q4"]
                await pilot.press("n")
                await settled(pilot)
                assert table.row_count == 5
        finally:
            store.close()

        # 2. The rows in the store, with the run and the notes.
        with Store(config.db_path()) as check:
            rows = check.decisions.for_run(run_id)
        assert [(d.question_id, d.action, d.option) for d in rows] == [
            ("q1", ACCEPT, None),
            ("q2", FIX, RIGHT_STAR),
            ("q3", REWRITE, None),
            ("q4", DROP, None),
        ]
        assert rows[1].note == "the Sun, not the Moon"
        assert rows[2].note == "the 'why' gives the answer away"
        assert quiz_path.read_bytes() == original  # nothing written yet

        # 3. Reopened on the same quiz: the decisions are there before any run; apply fixes.
        requests_before = len(server.requests)
        app, store = await asyncio.to_thread(open_app, config, quiz_path)
        try:
            async with app.run_test(size=size) as pilot:
                screen = app.vet_screen
                carried = {qid: r.decision for qid, r in screen.state.questions.items()}
                assert {q: d.label for q, d in carried.items() if d} == {
                    "q1": "accept",
                    "q2": "fix→C",
                    "q3": "rewrite",
                    "q4": "drop",
                }
                await run_once(pilot, screen)
                assert screen.questions_table.get_cell("q4", "review").plain == "drop"
                await pilot.press("A")
                await wait_until(
                    pilot, lambda: isinstance(app.screen, ConfirmQuitScreen), what="confirm"
                )
                await pilot.press("y")
                await wait_until(pilot, lambda: quiz_path.read_bytes() != original, what="write")
                await settled(pilot)
                assert screen.quiz.question("q2").key == RIGHT_STAR
                # The fix is applied: still shown, nothing left to apply.
                assert screen.state.questions["q2"].decision is not None
                await pilot.press("A")
                await pilot.pause()
                assert not isinstance(app.screen, ConfirmQuitScreen)
        finally:
            store.close()
        assert len(server.requests) > requests_before  # the reopened app ran its judge

        saved = quiz_path.read_bytes()
        assert (tmp_path / "space.json.bak").read_bytes() == original
        # Only question 2's key changed: every other byte of the file is as it was.
        before, after = original.decode(), saved.decode()
        assert after == before.replace('"correct": "The Moon"', '"correct": "The Sun"')
        reread = load_quiz(quiz_path)
        old = load_quiz(tmp_path / "space.json.bak", "quizaic")
        assert [q.key for q in reread.questions] == [1, RIGHT_STAR, 1, 1, 1]
        assert [(q.text, q.options) for q in reread.questions] == [
            (q.text, q.options) for q in old.questions
        ]

        # 4. The accepted and the fixed question are the gold set of the run's judge.
        sent_before = len(server.requests)
        argv = ["calibrate", "--gold-from-review", str(run_id), "--format", "json"]
        assert await asyncio.to_thread(main, argv) == 0  # the CLI runs its own event loop
    sent = [text for request in server.requests[sent_before:] for text in request.texts]
    quiz = load_quiz(quiz_path)
    decided = {assertion_text(q.text, o) for q in quiz.questions[:2] for o in q.options}
    assert sent and set(sent) == decided
    with Store(config.db_path()) as check:
        profile = check.profiles.list()[0]
    assert profile.model == "fake-judge" and profile.questions == 2
    assert profile.gold == f"review of run {run_id}: 2 decided questions (1 accepted, 1 fixed)"
    # The fake judge answers from the truth, which the review's labels now agree with.
    c = profile.confusion
    assert (c.tp, c.fn, c.tn, c.fp) == (2, 0, 6, 0)


def test_gold_from_review_without_decisions_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store(load_config().db_path()) as store:
        quiz = load_quiz_text(tmp_path)
        run_id = store.create_run(
            quiz=quiz,
            provider="simulated",
            model="sim",
            base_url="",
            judge_label="SIMULATED",
            simulated=True,
            judge_key="k",
            prompt_hash="p",
            seed=0,
            batch_size=20,
            params={},
            order=[],
        )
    assert main(["calibrate", "--gold-from-review", str(run_id)]) == 2
    err = capsys.readouterr().err
    assert f"run {run_id}: no question is decided accept or fix yet" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["calibrate", "--gold-from-review", "999"]) == 2
    assert "no run with id 999" in capsys.readouterr().err


def load_quiz_text(tmp_path: Path) -> Quiz:
    path = tmp_path / "space.json"
    path.write_text(QUIZ, encoding="utf-8")
    return load_quiz(path)
