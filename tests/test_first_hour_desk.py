"""Issue 27 item 4: a review desk that does not trap.

The vet app over a real run store (``StoreDecisionBook``), driven by keys as a user would:
enter records in the Fix dialog, the cursor stays on the question decided (or the toast says
where it went), and writing fixes into the file asks first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_review_desk_snapshots import desk_app, notified
from tui_helpers import settled, wait_until

from quiztui.core.decisions import DROP, FIX
from quiztui.store import Store
from quiztui.tui.screens.decide import DecideScreen

SIZES = [(80, 24), (120, 40)]
IDS = ["80x24", "120x40"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "runs.db") as s:
        yield s


def decided(store: Store) -> dict[str, tuple[str, int | None]]:
    """question id → (action, option) of every decision in the store, newest winning."""
    rows = store.conn.execute(
        "SELECT question_id, action, option FROM decisions ORDER BY id"
    ).fetchall()
    return {qid: (action, option) for qid, action, option in rows}


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_enter_in_the_fix_dialog_records_the_highlighted_option(
    store: Store, size: tuple[int, int]
) -> None:
    app = desk_app(store)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        app.vet_screen.questions_table.focus()
        await pilot.press("g", "o")
        await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen), what="the dialog")
        await pilot.press("down", "enter")  # the option below the judge's suggestion
        # Recorded and closed: keys pressed next reach the vet screen, not the note.
        await wait_until(pilot, lambda: app.screen is app.vet_screen, what="the dialog to close")
    assert decided(store) == {"q1": (FIX, 2)}


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_cursor_stays_on_the_question_decided(
    store: Store, size: tuple[int, int]
) -> None:
    """``j j j d`` then ``j d``: the fourth and the fifth question are dropped (before, the
    cursor moved down unseen after a decision, and the second d dropped the sixth)."""
    app = desk_app(store)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        screen = app.vet_screen
        screen.questions_table.focus()
        for keys in (("g", "j", "j", "j", "d"), ("j", "d")):
            await pilot.press(*keys)
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.screen is screen, what="the dialog to close")
            await settled(pilot)
        assert screen.questions_table.cursor_row_key.value == "q5"  # type: ignore[union-attr]
        assert any("Question 5: drop recorded" in t for t in notified(app))
    assert decided(store) == {"q4": (DROP, None), "q5": (DROP, None)}


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_a_question_the_review_filter_hides_leaves_the_cursor_on_the_next_one(
    store: Store, size: tuple[int, int]
) -> None:
    app = desk_app(store)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        screen = app.vet_screen
        screen.questions_table.focus()
        await pilot.press("n")  # needs review: a decided question leaves the list
        await settled(pilot)
        await pilot.press("g", "j", "j", "y")
        await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen, what="the dialog to close")
        await settled(pilot)
        table = screen.questions_table
        assert "q3" not in table.rows
        # Where question 3 was, not back at the top (before: the cursor jumped to question 1).
        assert table.cursor_row_key.value == "q4"  # type: ignore[union-attr]
        said = " ".join(notified(app))
        assert "Question 3: accept recorded" in said and "now on question 4" in said


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_writing_fixes_into_the_file_asks_and_enter_does_not_write(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    import asyncio

    from test_review_desk_tui import QUIZ, RIGHT_STAR, decide, judge_config, open_app, run_once
    from test_review_desk_tui import truth as star_truth

    from quiztui.formats import load_quiz
    from quiztui.testing.fake_openai import FakeOpenAI
    from quiztui.tui.screens.confirm import ConfirmQuitScreen

    quiz_path = tmp_path / "space.json"
    quiz_path.write_text(QUIZ, encoding="utf-8")
    with FakeOpenAI(star_truth(quiz_path)) as server:
        config = judge_config(server)
        app, run_store = await asyncio.to_thread(open_app, config, quiz_path)
        try:
            async with app.run_test(size=size) as pilot:
                screen = app.vet_screen
                await run_once(pilot, screen)
                await decide(pilot, 1, "o")
                await pilot.press("enter")
                await wait_until(pilot, lambda: app.screen is screen, what="recorded")
                await pilot.press("A")
                await wait_until(pilot, lambda: isinstance(app.screen, ConfirmQuitScreen))
                asked = str(app.screen.query_one("#confirm-text").render())
                assert "Write 1 fixed key(s) into space.json?" in asked
                assert "question 2: key A → C The Sun" in asked
                await pilot.press("enter")  # out of habit: the focused button is Cancel
                await wait_until(pilot, lambda: app.screen is screen, what="the dialog to close")
                await settled(pilot)
                assert quiz_path.read_text(encoding="utf-8") == QUIZ
                await pilot.press("A")
                await wait_until(pilot, lambda: isinstance(app.screen, ConfirmQuitScreen))
                await pilot.press("y")
                await wait_until(pilot, lambda: quiz_path.read_text(encoding="utf-8") != QUIZ)
        finally:
            run_store.close()
    assert load_quiz(quiz_path).question("q2").key == RIGHT_STAR


async def test_quality_ratings_and_the_review_desk_have_different_names(store: Store) -> None:
    """The ``v`` screen is "Quality ratings" everywhere in the TUI; "review" names the desk
    (y / o / t / d / u / n / A) only: its keys, its palette commands, F1 help."""
    from textual.binding import Binding

    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.commands import QuiztuiCommands
    from quiztui.tui.help import HelpScreen
    from quiztui.tui.screens.review import ReviewScreen
    from quiztui.tui.screens.vet import VetScreen

    app = desk_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        commands = [title for title, _, _ in QuiztuiCommands._commands(app)]  # type: ignore[arg-type]
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        entries = {e.binding_id: e.description for s in help_screen.sections for e in s.entries}
        await pilot.press("escape")
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await settled(pilot)
        ratings = app.screen
        assert isinstance(ratings, ReviewScreen)
        header = str(ratings.query_one("#review-header").render())

    def bindings(cls: type) -> dict[str, str]:
        return {
            b.id: b.description for b in vars(cls)["BINDINGS"] if isinstance(b, Binding) and b.id
        }

    desk = {i: d for i, d in bindings(VetScreen).items() if i.startswith("review.")}
    assert len(desk) == 7 and all(d.startswith("Review desk: ") for d in desk.values())
    assert bindings(QuiztuiApp)["app.ratings"] == "Quality ratings"
    assert {i for i in entries if i and i.startswith("review.")} == set(desk)
    assert entries["app.ratings"] == "Quality ratings"
    # The ratings screen's own keys, palette names and header never say "review".
    assert not any(i.startswith("review.") for i in bindings(ReviewScreen))
    assert "View: quality ratings" in commands
    said_review = [c for c in commands if "review" in c.casefold()]
    assert said_review and all(c.startswith("Review desk: ") for c in said_review)
    assert "quality ratings" in header and "review" not in header.casefold()
    for title, _, _ in ratings.palette_commands():
        assert "review" not in title.casefold()
