"""The review desk's dialog: SVG snapshots at 80×24 and 120×40, and its keys through the palette.

The snapshots show the dialog alone (over an empty app), so the vet screen's layout does not
move them. Regenerate with ``.venv/bin/pytest tests/test_review_desk_snapshots.py
--snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from textual.app import App
from textual.binding import BindingType
from textual.widgets import OptionList
from tui_helpers import (
    constant_clock,
    make_quiz,
    run_palette_command,
    settled,
    stream_factory,
    wait_until,
)

from quiztui.assemble.review_desk import StoreDecisionBook
from quiztui.core.decisions import DROP, FIX, REWRITE, make_decision
from quiztui.core.quiz import Question
from quiztui.store import Store
from quiztui.tui.app import APP_BINDINGS, QuiztuiApp
from quiztui.tui.help import HelpScreen, collect_sections
from quiztui.tui.screens.decide import DecideScreen
from quiztui.tui.services import AppServices

SnapCompare = Callable[..., bool]
SIZE = (120, 40)
SMALL = (80, 24)
STAR = Question(
    id="q2",
    text="Which star is at the centre of our solar system? (It is the one we orbit.)",
    options=("The Moon", "Sirius", "The Sun", "Polaris", "[bold]Vega[/bold]"),
    key=0,
)


class DialogApp(App[None]):
    """An empty app with quiztui's global keys (F1 help, quit, palette) showing one dialog."""

    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(collect_sections(self.screen)))

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action = action

    def on_mount(self) -> None:
        current = make_decision(STAR, REWRITE, note="too long, and the hint gives it away")
        self.push_screen(DecideScreen(STAR, 2, self.action, suggested=2, current=current))


@pytest.mark.parametrize("size", [SMALL, SIZE], ids=["80x24", "120x40"])
def test_fix_dialog(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Fix: the five options, the key marked and not choosable, the judge's suggestion (C)
    highlighted, the note kept from the earlier decision, the keys on the hint line."""
    assert snap_compare(DialogApp(FIX), terminal_size=size)


@pytest.mark.parametrize("size", [SMALL, SIZE], ids=["80x24", "120x40"])
def test_drop_dialog(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    """Drop: the question, its key and the note, nothing to choose."""
    assert snap_compare(DialogApp(DROP), terminal_size=size)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "runs.db") as s:
        yield s


def desk_app(store: Store | None) -> QuiztuiApp:
    quiz = make_quiz(6, markup=False)
    services = AppServices(
        start_run=stream_factory(quiz),
        judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
        simulated=True,
        decisions=StoreDecisionBook(store) if store is not None else None,
    )
    return QuiztuiApp(quiz, services, clock=constant_clock(), flush_interval=0.02)


async def test_the_palette_records_a_decision_and_help_lists_the_keys(store: Store) -> None:
    app = desk_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        screen = app.vet_screen
        screen.questions_table.move_cursor(row=0, animate=False)
        await run_palette_command(pilot, "Review desk: fix")
        await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen), what="the dialog")
        dialog = app.screen
        assert isinstance(dialog, DecideScreen)
        # Question 1's key (Sydney) is wrong; the judge suggests Canberra, offered first.
        assert dialog.query_one(OptionList).highlighted == 1
        await pilot.press("enter")  # choose it: enter records (no note)
        await wait_until(pilot, lambda: store.decisions.count() == 1, what="the row")
        (decision,) = store.decisions.latest([_hash(screen, "q1")]).values()
        assert (decision.action, decision.option, decision.run_id) == (FIX, 1, None)
        # The question's detail names the decision.
        from quiztui.tui.screens.detail import QuestionDetailScreen, summary_text

        record = screen.state.questions["q1"]
        assert "review fix→B" in summary_text(record, 6).plain
        screen.questions_table.move_cursor(row=0, animate=False)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionDetailScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, what="back to the vet screen")
        await pilot.press("f1")
        await pilot.pause()

        assert isinstance(app.screen, HelpScreen)
        described = {e.binding_id for s in app.screen.sections for e in s.entries}
        assert {
            "review.accept",
            "review.fix",
            "review.rewrite",
            "review.drop",
            "review.clear",
        } <= described
        assert {"review.filter", "review.apply"} <= described


async def test_u_takes_a_decision_back_and_it_stays_taken_back(store: Store) -> None:
    app = desk_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        screen = app.vet_screen
        screen.questions_table.move_cursor(row=1, animate=False)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen), what="the dialog")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.state.questions["q2"].decision is not None)
        screen.questions_table.move_cursor(row=1, animate=False)
        await pilot.press("u")
        await settled(pilot)
        assert screen.state.questions["q2"].decision is None
        assert screen.questions_table.get_cell("q2", "review").plain == ""
    assert store.decisions.count() == 2  # the drop and its clearing: the history stays
    again = desk_app(store)
    async with again.run_test(size=SIZE) as pilot:
        assert all(r.decision is None for r in again.vet_screen.state.questions.values())


async def test_without_a_store_the_keys_say_so_and_record_nothing() -> None:
    app = desk_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("y")
        await wait_until(
            pilot,
            lambda: any("decisions cannot be kept" in t for t in notified(app)),
            what="the no-store toast",
        )
        assert not isinstance(app.screen, DecideScreen)
        await pilot.press("A")  # no file behind this quiz: nothing to write into
        await wait_until(
            pilot,
            lambda: any("not come from a file" in t for t in notified(app)),
            what="the no-file toast",
        )


def _hash(screen: object, qid: str) -> str:
    from quiztui.core.decisions import question_hash

    return question_hash(screen.state.questions[qid].question)  # type: ignore[attr-defined]


def notified(app: App[None]) -> list[str]:
    """The messages of the app's live notifications (shown as toasts)."""
    return [n.message for n in app._notifications]
