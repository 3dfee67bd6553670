"""The run screens' one lifecycle (``tui/screens/run_screen.py``): a failed run leaves one toast
line and its traceback in the ``quiztui.tui`` log; ``x`` cancels the run and the screen records
it; a new run supersedes the old one. Then every live screen of the app, fed a stream that
raises, ends its run the same way."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static
from tui_helpers import constant_clock, make_quiz, stream_factory, wait_until

from quiztui.core.grading import GradeItem
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.grade_app import GradeApp
from quiztui.tui.screens.benchmark import BenchmarkScreen
from quiztui.tui.screens.calibrate import CalibrateScreen
from quiztui.tui.screens.grade import GradeScreen
from quiztui.tui.screens.review import ReviewScreen
from quiztui.tui.screens.robustness import RobustnessScreen
from quiztui.tui.screens.run_screen import LiveRunScreen
from quiztui.tui.services import AppServices
from quiztui.tui.state import CANCELLED, FAILED, FINISHED, IDLE, RUNNING

SIZE = (100, 30)
BOOM = "boom [bold]x[/]\nsecond line of the message"


class ProbeScreen(LiveRunScreen):
    """The smallest run screen: records every event, shows them on each flush."""

    RUN_GROUP = "probe-run"
    FLUSH_TIMER = "probe-flush"
    FAILED_TITLE = "Probe failed"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "start_run", "Run", id="probe.run"),
        Binding("x", "cancel_run", "Cancel", id="probe.cancel"),
    ]

    def __init__(self, events: Callable[[], AsyncIterator[Any]]) -> None:
        super().__init__(flush_interval=0.01, id="probe")
        self.events = events
        self.status = IDLE
        self.error: str | None = None
        self.recorded: list[Any] = []
        self.shown: list[Any] = []
        self.ends: list[str] = []

    @property
    def run_status(self) -> str:
        return self.status

    def compose(self) -> ComposeResult:
        yield Static("", id="probe-body")

    def on_mount(self) -> None:
        self.start_flush_timer()

    def action_start_run(self) -> None:
        self.status, self.error, self.recorded = RUNNING, None, []
        self.refresh_bindings()
        self.start_run_worker(self.events, self.recorded.append)

    def end_run(self, status: str, error: str | None = None) -> None:
        self.status, self.error = status, error
        self.ends.append(status)
        self.refresh_bindings()
        self.flush()

    def flush(self) -> None:
        self.shown = list(self.recorded)


class ProbeApp(App[None]):
    def __init__(self, screen: Screen[None]) -> None:
        super().__init__()
        self.probe = screen

    def get_default_screen(self) -> Screen[None]:
        return self.probe


def error_toasts(app: App[Any]) -> list[tuple[str, str]]:
    return [(n.title, n.message) for n in app._notifications if n.severity == "error"]


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "quiztui.tui" and r.exc_info is not None]


async def test_a_run_that_raises_shows_one_toast_line_and_logs_the_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="quiztui.tui")

    async def events() -> AsyncIterator[Any]:
        yield "first"
        raise RuntimeError(BOOM)

    screen = ProbeScreen(events)
    app = ProbeApp(screen)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.ends, what="the run to end")
        assert screen.status == FAILED and screen.ends == [FAILED]
        assert screen.shown == ["first"]  # recorded before the error, and flushed at the end
        toasts = error_toasts(app)
        assert toasts == [
            ("Probe failed", "RuntimeError: boom [bold]x[/] second line of the message")
        ]
        assert screen.error is not None and "\n" in screen.error  # the screen keeps it whole
        assert app.return_code is None  # the app goes on
    [record] = tracebacks(caplog)
    assert record.levelno == logging.ERROR
    assert "ProbeScreen" in record.getMessage() and "probe-run" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
    assert "Traceback" in caplog.text and "second line of the message" in caplog.text
    assert "in events" in caplog.text  # the frame that raised


async def test_x_cancels_the_run_and_the_screen_records_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="quiztui.tui")
    reached, closed = asyncio.Event(), asyncio.Event()

    async def events() -> AsyncIterator[Any]:
        try:
            yield 1
            yield 2
            reached.set()
            await asyncio.Event().wait()  # a judge that never answers
            yield 3
        finally:
            closed.set()

    screen = ProbeScreen(events)
    app = ProbeApp(screen)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        assert screen.check_action("cancel_run", ()) is None  # nothing to cancel: disabled
        await pilot.press("r")
        await wait_until(pilot, reached.is_set, what="the second event")
        assert screen.running and screen.check_action("cancel_run", ()) is True
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.ends, what="the cancel to land")
        await app.workers.wait_for_complete()
        assert screen.ends == [CANCELLED] and screen.status == CANCELLED
        assert screen.shown == [1, 2]  # what arrived stays
        assert closed.is_set()  # the stream was closed, so its pipeline records the cancel
        assert not error_toasts(app) and not any(w.is_running for w in app.workers)
    assert not tracebacks(caplog)  # a cancel is not an error


async def test_a_new_run_supersedes_the_old_one_and_drops_its_late_events() -> None:
    runs: list[asyncio.Event] = []

    async def events() -> AsyncIterator[Any]:
        n = len(runs)
        runs.append(asyncio.Event())
        yield f"run {n} started"
        await runs[n].wait()
        yield f"run {n} late"

    screen = ProbeScreen(events)
    app = ProbeApp(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.recorded == ["run 0 started"], what="run 0")
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.recorded == ["run 1 started"], what="run 1")
        runs[0].set()  # the first run's stream is gone (cancelled by the exclusive group)
        runs[1].set()
        await wait_until(pilot, lambda: screen.ends, what="run 1 to end")
        await app.workers.wait_for_complete()
        assert screen.ends == [FINISHED]  # the superseded run ends nothing
        assert screen.shown == ["run 1 started", "run 1 late"]


# -- every live screen of the app --------------------------------------------------------------


async def raising(*args: Any) -> AsyncIterator[Any]:
    raise RuntimeError(BOOM)
    yield  # an async generator that raises on its first step


def broken_screens() -> list[tuple[str, Callable[[], LiveRunScreen], str | None]]:
    quiz = make_quiz(3)
    item = GradeItem("a1", "Q?", "ref", "cand")
    return [
        ("robustness", lambda: RobustnessScreen(quiz, raising), "Robustness failed"),
        ("review", lambda: ReviewScreen(quiz, raising), "Quality ratings failed"),
        ("grade", lambda: GradeScreen([item], raising), "Grading failed"),
        (
            "benchmark",
            lambda: BenchmarkScreen(
                raising, dataset="d", grader="lexical", calibration="c", train=1, test=1
            ),
            "Benchmark failed",
        ),
        # The Calibrate screen says it in its error line, not in a toast.
        ("calibrate", lambda: CalibrateScreen(raising, clock=constant_clock()), None),
    ]


@pytest.mark.parametrize(
    ("name", "make", "title"), broken_screens(), ids=[s[0] for s in broken_screens()]
)
async def test_every_run_screen_ends_a_raising_run_the_same_way(
    name: str,
    make: Callable[[], LiveRunScreen],
    title: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="quiztui.tui")
    screen = make()
    app = GradeApp(screen)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        if isinstance(screen, CalibrateScreen):
            await pilot.press("ctrl+r")  # the form's defaults
        await wait_until(pilot, lambda: screen.run_status == FAILED, what=f"{name} to fail")
        expected = "RuntimeError: boom [bold]x[/] second line of the message"
        if title is None:
            assert not error_toasts(app)
            assert "boom [bold]x[/]" in str(screen.query_one("#cal-error", Static).content)
        else:
            assert error_toasts(app) == [(title, expected)]
    [record] = tracebacks(caplog)
    assert type(screen).__name__ in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError


async def test_the_vet_screen_ends_a_raising_run_the_same_way(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="quiztui.tui")
    quiz = make_quiz(3)
    app = QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz, fail_with=RuntimeError(BOOM), fail_after=4),
            judge_label="SIMULATED judge",
            simulated=True,
        ),
        clock=constant_clock(),
        flush_interval=0.02,
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.vet_screen
        await wait_until(pilot, lambda: screen.run_status == FAILED, what="the vet run to fail")
        assert error_toasts(app) == [
            ("Run failed", "RuntimeError: boom [bold]x[/] second line of the message")
        ]
        assert screen.verdicts_table.row_count == 4  # flushed when the run ended
    [record] = tracebacks(caplog)
    assert "VetScreen" in record.getMessage()
