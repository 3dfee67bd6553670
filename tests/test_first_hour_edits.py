"""Issue 27 item 1: no edit lost, none misapplied.

Real files, the real run store and the fake judge server over loopback HTTP; the app is built
the way ``quiztui QUIZ`` builds it (``cli/vet.build_vet_app``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_review_desk_tui import QUIZ, RIGHT_STAR, decide, judge_config, open_app, run_once, truth
from textual.widgets import Input, Static
from tui_helpers import settled, wait_until

from quiztui.core.kscore import Badge
from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.screens.edit import EditQuestionScreen
from quiztui.tui.screens.vet import VetScreen


async def rerun(pilot: object, app: QuiztuiApp) -> int:
    """r, then wait for the run to end; its id."""
    screen = app.vet_screen
    before = screen.state.started
    await pilot.press("r")  # type: ignore[attr-defined]
    await wait_until(
        pilot,
        lambda: screen.state.started is not before and screen.state.status != "running",
        what="the new run",
    )
    await settled(pilot)
    started = screen.state.started
    assert started is not None
    return started.run_id


def stored_keys(config_db: Path, run_id: int) -> dict[str, int]:
    with Store(config_db) as store:
        return {qid: key for qid, _, _, key in store.run_questions(run_id)}


def assert_q2_agrees(screen: VetScreen) -> None:
    """Question 2 keyed "The Sun" and judged so: the judge agrees with the key it was shown."""
    record = screen.state.questions["q2"]
    assert record.question.key == RIGHT_STAR
    assert record.score is not None and record.score.badge == Badge.GOOD
    # The verdicts are about the key the table shows: the key is agreed, the others are not.
    agreed = {i for i, a in record.options.items() if a.verdict}
    assert agreed == {RIGHT_STAR}


async def test_r_after_apply_fixes_judges_the_fixed_keys(tmp_path: Path) -> None:
    quiz_path = tmp_path / "space.json"
    quiz_path.write_text(QUIZ, encoding="utf-8")
    with FakeOpenAI(truth(quiz_path)) as server:
        config = judge_config(server)
        app, store = await asyncio.to_thread(open_app, config, quiz_path)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                screen = app.vet_screen
                await run_once(pilot, screen)
                first = screen.state.questions["q2"].score
                assert first is not None and first.badge == Badge.POOR
                await decide(pilot, 1, "o")
                await pilot.press("ctrl+s")
                await wait_until(pilot, lambda: isinstance(app.screen, VetScreen), what="vet")
                await pilot.press("A")
                await wait_until(
                    pilot, lambda: isinstance(app.screen, ConfirmQuitScreen), what="confirm"
                )
                await pilot.press("y")
                await wait_until(pilot, lambda: screen.quiz.question("q2").key == RIGHT_STAR)
                run_id = await rerun(pilot, app)
                assert_q2_agrees(screen)
                # The detail view agrees: the judge's pick is the key, no "agrees: yes" elsewhere.
                screen.questions_table.move_cursor(row=1, animate=False)
                await pilot.press("enter")
                await wait_until(pilot, lambda: isinstance(app.screen, QuestionDetailScreen))
                detail = app.screen
                assert isinstance(detail, QuestionDetailScreen)
                summary = str(detail.query_one("#detail-summary", Static).render())
                assert "badge good" in summary and "judge thinks" not in summary
                options = [
                    str(detail.query_one(f"#detail-option-{i}", Static).render())
                    for i in range(4)
                ]
                assert all("agrees yes" in text for text in options)
                assert "← key" in options[RIGHT_STAR]
        finally:
            store.close()
    # The stored run lists the keys it judged: the file's, as fixed.
    assert stored_keys(config.db_path(), run_id)["q2"] == RIGHT_STAR
    assert load_quiz(quiz_path).question("q2").key == RIGHT_STAR


async def test_r_after_a_key_edit_judges_the_edited_key(tmp_path: Path) -> None:
    quiz_path = tmp_path / "space.json"
    quiz_path.write_text(QUIZ, encoding="utf-8")
    with FakeOpenAI(truth(quiz_path)) as server:
        config = judge_config(server)
        app, store = await asyncio.to_thread(open_app, config, quiz_path)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                screen = app.vet_screen
                await run_once(pilot, screen)
                screen.questions_table.focus()
                screen.questions_table.move_cursor(row=1, animate=False)
                await pilot.press("e")
                await wait_until(pilot, lambda: isinstance(app.screen, EditQuestionScreen))
                key = app.screen.query_one("#edit-key", Input)
                key.value = "C"
                await pilot.press("ctrl+s")
                await settled(pilot)
                run_id = await rerun(pilot, app)
                assert_q2_agrees(screen)
                await pilot.press("ctrl+s")  # the edit reaches the file
                await pilot.pause()
        finally:
            store.close()
    assert stored_keys(config.db_path(), run_id)["q2"] == RIGHT_STAR
    assert load_quiz(quiz_path).question("q2").key == RIGHT_STAR
