"""The Robustness screen (Pilot tests and SVG snapshots) and the fragility flag in the vet app.

Deterministic by construction: the simulated rewriter and answerers at zero latency (answers are
hashes of the forms), the planted-errors quiz of the TUI tests (its third question carries Rich
markup, which must show literally). Regenerate the snapshots with
``.venv/bin/pytest tests/test_robustness_screen.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import MARKUP_QUESTION, constant_clock, make_quiz, stream_factory

from quiztui.core.quiz import Quiz
from quiztui.pipeline.robustness import RobustnessRun, RobustnessSettings
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.grade_app import GradeApp
from quiztui.tui.screens.robustness import RobustDetailScreen, RobustnessScreen
from quiztui.tui.services import AppServices, ReviewService, RobustnessService
from quiztui.tui.state import FINISHED
from quiztui.tui.widgets.tables import QuestionsTable

SnapCompare = Callable[..., bool]
SIZE = (120, 40)
SMALL = (80, 24)
SETTINGS = RobustnessSettings(variants=5)


def starter(quiz: Quiz, **kw: float) -> Callable[[], AsyncIterator[Any]]:
    async def start() -> AsyncIterator[Any]:
        provider = SimulatedProvider(
            truth_table(quiz),
            disagreement=kw.get("disagreement", 0.15),
            refusal_rate=kw.get("refusal_rate", 0.08),
        )
        async for event in RobustnessRun(quiz, SETTINGS, provider).events():
            yield event

    return start


def robustness_app(quiz: Quiz | None = None, **kw: float) -> GradeApp:
    quiz = quiz or make_quiz()
    screen = RobustnessScreen(quiz, starter(quiz, **kw), settings=SETTINGS, flush_interval=0.02)
    return GradeApp(screen, title="quiztui robustness")


async def finished(pilot: Pilot[None]) -> RobustnessScreen:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, RobustnessScreen)
    screen.flush()
    await pilot.pause()
    return screen


def plain(widget: Static) -> str:
    return str(widget.render())


async def test_the_screen_fills_rows_metrics_and_the_plot() -> None:
    app = robustness_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        assert screen.progress.status == FINISHED and screen.progress.measured == 12
        header = plain(screen.query_one("#rob-header", Static))
        assert "SIMULATED" in header and "q0 + 5 rewrites" in header
        metrics = plain(screen.query_one("#rob-metrics", Static))
        assert "Ω" in metrics and "holds" in metrics and "tokens rewrite" in metrics
        table = screen.table
        assert table.row_count == 12
        flags = [table.get_cell(f"q{i}", "flag").plain for i in range(1, 13)]
        assert set(flags) <= {"FRAGILE", "ok"} and "FRAGILE" in flags
        # the markup question is shown as written, never interpreted
        assert table.get_cell("q3", "question").plain == MARKUP_QUESTION
        chart = screen.query_one("#rob-chart")
        assert chart.spec is not None and len(chart.spec.series) == 2  # type: ignore[attr-defined]


async def test_enter_opens_every_form_and_its_answer() -> None:
    app = robustness_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        screen.table.move_cursor(row=2)
        await pilot.press("enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, RobustDetailScreen)
        body = plain(detail.query_one("#rob-detail-body", Static))
        assert MARKUP_QUESTION in body and "q0 " in body and "q5 " in body
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_the_vet_app_opens_it_and_shows_the_fragility_flag() -> None:
    quiz = make_quiz()
    app = QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz),
            judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
            simulated=True,
            fragility={"q1": (True, "stored earlier")},
            robustness=RobustnessService(start=starter(quiz), settings=SETTINGS),
        ),
        autorun=False,
        clock=constant_clock(),
        flush_interval=0.02,
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.vet_screen.query_one(QuestionsTable)
        assert table.get_cell("q1", "robust").plain == "fragile"  # from the store at start
        assert table.get_cell("q2", "robust").plain == ""
        await pilot.press("p")
        screen = await finished(pilot)
        fragile = {k for k, r in screen.records.items() if r.result and r.result.fragile}
        await pilot.press("escape")
        await pilot.pause()
        for i in range(1, 13):
            want = "fragile" if f"q{i}" in fragile else "ok"
            assert table.get_cell(f"q{i}", "robust").plain == want
        # a new vet run keeps the flags
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert {
            k
            for k in (f"q{i}" for i in range(1, 13))
            if table.get_cell(k, "robust").plain == "fragile"
        } == fragile


async def test_without_a_runner_the_screen_says_so() -> None:
    quiz = make_quiz(3)
    app = GradeApp(RobustnessScreen(quiz, None, flush_interval=0.02))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        assert any("unavailable" in str(n.message) for n in app._notifications)


def test_snapshot_robustness_finished(snap_compare: SnapCompare) -> None:
    assert snap_compare(robustness_app(), terminal_size=SIZE, run_before=finished)


def test_snapshot_robustness_small_terminal(snap_compare: SnapCompare) -> None:
    assert snap_compare(robustness_app(), terminal_size=SMALL, run_before=finished)


def test_snapshot_robustness_detail(snap_compare: SnapCompare) -> None:
    async def open_detail(pilot: Pilot[None]) -> None:
        screen = await finished(pilot)
        fragile = [
            i for i, r in enumerate(screen.records.values()) if r.result and r.result.fragile
        ]
        screen.table.move_cursor(row=fragile[0])
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(robustness_app(), terminal_size=SIZE, run_before=open_detail)


async def test_the_vet_app_opens_the_review_screen(tmp_path: Path) -> None:
    from quiztui.assemble.review import review_starter
    from quiztui.config import load_config
    from quiztui.store import Store
    from quiztui.tui.screens.review import ReviewScreen

    quiz = make_quiz(3)
    with Store(tmp_path / "runs.sqlite") as store:
        app = QuiztuiApp(
            quiz,
            AppServices(
                start_run=stream_factory(quiz),
                judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
                simulated=True,
                review=ReviewService(start=review_starter(load_config(), store), mode="direct"),
            ),
            autorun=False,
            clock=constant_clock(),
            flush_interval=0.02,
        )
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("v")
            await app.workers.wait_for_complete()
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ReviewScreen) and not screen.running
            assert len(store.reviews.list_runs()) == 1
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is app.vet_screen
