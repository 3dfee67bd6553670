"""The Runs screen over a real SQLite store: list, open a run, mark two and compare (S6).

Two real runs of one quiz by simulated judges of different TPR/TNR (``runs_helpers``); the
numbers the screens show are checked against ``core.compare`` on the same store.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runs_helpers import vet_twice
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import MARKUP_QUESTION, make_quiz, stream_factory

from quiztui.pipeline.history import StoreHistory, compare_stored
from quiztui.store import Store
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.grade_app import GradeApp
from quiztui.tui.screens.compare import CompareDetailScreen, CompareScreen, DiffTable
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.screens.runs import RunQuestionsTable, RunScreen, RunsScreen, RunTable
from quiztui.tui.screens.vet import VetScreen
from quiztui.tui.services import AppServices

SIZE = (120, 40)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "runs.db"
    vet_twice(path)
    return path


@pytest.fixture
def db_four(db: Path) -> Path:
    """Runs 1, 2 of the planted-errors quiz, then 3, 4 of it again."""
    vet_twice(db)
    return db


@pytest.fixture
def db_other(db: Path) -> Path:
    """Runs 1, 2 of the planted-errors quiz, then 3, 4 of another quiz."""
    vet_twice(db, make_quiz(4, title="Another quiz"))
    return db


def runs_app(db: Path) -> GradeApp:
    return GradeApp(RunsScreen(StoreHistory(db)), title="quiztui runs")


async def loaded(pilot: Pilot[None]) -> None:
    """Wait for the screen's store reads (workers) and the screens they push."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def plain(widget: Static) -> str:
    return str(widget.render())


async def test_runs_screen_lists_the_stored_runs(db: Path) -> None:
    with Store(db) as store:
        listings = store.run_listings()
    app = runs_app(db)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        table = app.screen.query_one(RunTable)
        assert table.row_count == 2
        for listing in listings:
            counts = "/".join(
                str(listing.badge_counts.get(b, 0)) for b in ("good", "questionable", "poor")
            )
            assert table.get_cell(str(listing.id), "badges").plain.strip() == counts
            assert table.get_cell(str(listing.id), "cost").plain.strip() == "$0"  # simulated
            assert table.get_cell(str(listing.id), "judge").plain.startswith("SIM ")
            assert table.get_cell(str(listing.id), "questions").plain.strip() == "12"
        detail = plain(app.screen.query_one("#runs-detail", Static))
        assert f"run {listings[0].id}" in detail and "SIMULATED" in detail


async def test_enter_opens_a_run_read_only_and_a_question(db: Path) -> None:
    with Store(db) as store:
        newest = store.run_listings()[0]
    app = runs_app(db)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        await loaded(pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen) and screen.loaded.record.id == newest.id
        summary = screen.loaded.summary
        table = screen.query_one(RunQuestionsTable)
        assert table.row_count == len(summary.questions) == 12
        for q in summary.questions:
            assert table.get_cell(q.question_id, "badge").plain == q.badge
            verdicts = "".join("T" if v else "F" for v in q.verdicts)
            assert table.get_cell(q.question_id, "verdicts").plain == verdicts
        # Quiz text is literal: the markup question shows its brackets.
        assert table.get_cell("q3", "question").plain == MARKUP_QUESTION
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, QuestionDetailScreen)
        assert app.screen.record.question.id == "q1"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_mark_two_and_compare_shows_core_compare_numbers(db: Path) -> None:
    with Store(db) as store:
        c = compare_stored(store, 1, 2).comparison
    app = runs_app(db)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("space", "down", "space")
        runs = app.screen
        assert isinstance(runs, RunsScreen) and runs.marked == [2, 1]
        await pilot.press("c")
        await loaded(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        header = plain(screen.query_one("#compare-header", Static))
        assert f"verdict agreement {c.agreement:.3f} ({c.agreed}/{c.both_judged}" in header
        assert f"Cohen's κ {c.kappa:.3f}" in header
        assert f"same {c.badges_agreed}/{c.questions}" in header
        lines = header.splitlines()
        a_true = next(line for line in lines if line.startswith("A TRUE")).split()
        a_false = next(line for line in lines if line.startswith("A FALSE")).split()
        assert [int(a_true[2]), int(a_true[3]), int(a_false[2]), int(a_false[3])] == [
            c.tt,
            c.tf,
            c.ft,
            c.ff,
        ]
        table = screen.query_one(DiffTable)
        keys = [
            table.coordinate_to_cell_key(Coordinate(i, 0)).row_key.value
            for i in range(table.row_count)
        ]
        assert keys == [d.question_id for d in c.disagreements] and keys
        first = c.disagreements[0]
        assert table.get_cell(first.question_id, "badge_a").plain == first.badge_a
        assert table.get_cell(first.question_id, "badge_b").plain == first.badge_b
        await pilot.press("enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, CompareDetailScreen) and detail.diff == first
        blocks = [plain(s) for s in detail.query(".detail-option").results(Static)]
        for i, block in enumerate(blocks):
            for name, said in (("A", first.verdicts_a[i]), ("B", first.verdicts_b[i])):
                word = "unjudged" if said is None else "TRUE" if said else "FALSE"
                assert f"{name} {word}" in block
            assert ("judged differently" in block) == (i in first.differing_options)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_one_mark_compares_with_the_highlighted_run_and_a_third_replaces(
    db_four: Path,
) -> None:
    app = runs_app(db_four)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await pilot.press("c")  # nothing marked: compare is disabled, nothing happens
        await loaded(pilot)
        assert isinstance(app.screen, RunsScreen) and app.screen.check_action("compare", ()) is None
        await pilot.press("space", "down", "space", "down", "space")  # mark 4, 3, then 2
        assert runs.marked == [3, 2]
        await pilot.press("space")  # unmark 2: only 3 stays marked
        assert runs.marked == [3]
        await pilot.press("down")  # highlight run 1
        assert runs.compare_pair() == (1, 3)
        await pilot.press("c")
        await loaded(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert (app.screen.comparison.run_a, app.screen.comparison.run_b) == (1, 3)


async def test_runs_of_different_quizzes_give_a_toast_not_a_crash(db_other: Path) -> None:
    app = runs_app(db_other)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        runs.marked = [1, 4]  # run 4: the other quiz
        await pilot.press("c")
        await loaded(pilot)
        assert app.screen is runs
        errors = [n for n in app._notifications if n.severity == "error"]
        assert errors and "different versions of the quiz" in str(errors[-1].message)


async def test_h_opens_the_runs_screen_from_the_vet_app(db: Path) -> None:
    quiz = make_quiz()
    app = QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz),
            judge_label="SIMULATED judge",
            simulated=True,
            runs=StoreHistory(db),
        ),
        autorun=False,
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await loaded(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.query_one(RunTable).row_count == 2
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, VetScreen)


async def test_without_a_store_the_screen_says_so(tmp_path: Path) -> None:
    quiz = make_quiz()
    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream_factory(quiz), judge_label="SIMULATED judge", simulated=True),
        autorun=False,
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await loaded(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert "unavailable" in plain(app.screen.query_one("#runs-bar", Static))
