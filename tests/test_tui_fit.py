"""80×24 is a first-class size (issue 20 item 1, K1).

Pilot tests read what is painted: the header's one line names the judge (SIMULATED, or the
model), the run state and the cost; the vet table's question column shows at least 30 characters
at 80 columns, the columns it folds away are one key (`w`) away and the table then scrolls
sideways with a hint; every dialog's footer shows that dialog's keys. Then an SVG snapshot of every
screen and dialog at 80×24 and at 120×40 (pytest-textual-snapshot). Regenerate with
``.venv/bin/pytest tests/test_tui_fit.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from runs_helpers import vet_twice
from test_grade_snapshots import benchmark_app, benchmarked, grade_app
from test_grade_snapshots import finished as graded
from test_review_snapshots import finished as reviewed
from test_review_snapshots import review_app
from test_robustness_screen import finished as measured
from test_robustness_screen import robustness_app
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey
from tui_helpers import (
    Gate,
    constant_clock,
    make_quiz,
    settled,
    stream_factory,
    vet_flushed,
    wait_until,
)

from quiztui.core.quiz import Quiz
from quiztui.pipeline.history import StoreHistory
from quiztui.store import Store
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.help import HelpScreen
from quiztui.tui.services import AppServices
from quiztui.tui.widgets.header import RunHeader

SnapCompare = Callable[..., bool]
SMALL = (80, 24)
LARGE = (120, 40)
MODEL = "gpt-4o-mini"


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """The Runs screen shows dates in local time; pin it to UTC (restored afterwards)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def long_quiz() -> Quiz:
    """The planted quiz with a first question whose stem and options need several lines."""
    quiz = make_quiz(title="A quiz whose title is much too long for an eighty-column header")
    first = quiz.questions[0].model_copy(
        update={
            "text": "Which city was chosen as the capital of Australia in 1908, as a compromise"
            " between the two largest cities, and built from scratch after an international"
            " design competition won by Walter Burley Griffin and Marion Mahony Griffin?",
            "options": (
                "Sydney, the largest city and the capital of New South Wales",
                "Canberra, in the Australian Capital Territory carved out of New South Wales",
                "Melbourne, which hosted the federal parliament until 1927",
                "Perth",
            ),
        }
    )
    return quiz.model_copy(update={"questions": (first, *quiz.questions[1:])})


def vet_app(
    quiz: Quiz | None = None,
    *,
    simulated: bool = True,
    autorun: bool = True,
    gate: Gate | None = None,
    runs: Path | None = None,
) -> QuiztuiApp:
    quiz = quiz or make_quiz()
    label = (
        "SIMULATED judge (TPR 0.9, TNR 0.9)" if simulated else f"{MODEL} @ http://127.0.0.1:9/v1"
    )
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz, gate=gate, judge_label=label),
            judge_label=label,
            simulated=simulated,
            runs=StoreHistory(runs) if runs is not None else None,
        ),
        autorun=autorun,
        clock=constant_clock(),
        flush_interval=0.02,
    )


def header_line(app: App[Any]) -> str:
    header = app.screen.query_one(RunHeader)
    assert header.size.height == 1
    return "".join(segment.text for segment in header.render_line(0))


def table_line(table: DataTable[Any], y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


# -- the header ------------------------------------------------------------------------------------


async def test_at_80x24_the_header_is_one_line_with_simulated_state_and_cost() -> None:
    app = vet_app(long_quiz())
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot)
        line = header_line(app)
        assert "SIMULATED" in line and "[finished]" in line and "cost $0" in line
        assert len(line.rstrip()) <= 80
        # The title gave way (cut with an ellipsis), not the judge, the state or the cost.
        assert "A quiz whose title" in line and "eighty-column header" not in line


async def test_at_80x24_the_header_names_the_model_of_a_real_judge() -> None:
    app = vet_app(long_quiz(), simulated=False, autorun=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        line = header_line(app)
        assert line.lstrip().startswith(MODEL) and "[idle]" in line and "cost" in line
        assert "SIMULATED" not in line


async def test_the_header_shows_more_as_the_terminal_widens() -> None:
    app = vet_app(long_quiz())
    async with app.run_test(size=(200, 40)) as pilot:
        await settled(pilot)
        line = header_line(app)
        assert "eighty-column header" in line and "uncalibrated" in line


# -- the vet table -----------------------------------------------------------------------------------


async def test_at_80x24_the_question_column_shows_at_least_30_characters() -> None:
    app = vet_app()
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot)
        table = app.vet_screen.questions_table
        header = table_line(table, 0)
        first = table_line(table, 1)
        start = header.index("question")
        end = header.index("key", start)
        shown = first[start:end].rstrip()
        question = app.quiz.questions[0].text
        assert len(shown) >= 30, shown
        assert shown.rstrip("…") and question.startswith(shown.rstrip("…"))
        # Lower-priority columns were folded away; the badge and the suggestion stayed.
        assert "badge" in header and "suggested" in header
        assert table.hidden_columns and "lint" not in header


async def test_w_shows_every_column_and_the_table_scrolls_sideways() -> None:
    app = vet_app()
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot)
        screen = app.vet_screen
        table = screen.questions_table
        label = screen.query_one("#questions-label")
        assert "+" in str(label.render()) and "(w)" in str(label.render())
        await pilot.press("w")
        await wait_until(pilot, lambda: not table.hidden_columns, what="every column shown")
        await wait_until(pilot, lambda: table.overflowing, what="the table wider than the screen")
        await wait_until(
            pilot, lambda: "scroll" in str(label.render()), what="the sideways-scroll hint"
        )
        await pilot.press("right", "right", "right")
        await wait_until(pilot, lambda: table.scroll_x > 0, what="the table scrolled sideways")
        await pilot.press("w")
        await wait_until(pilot, lambda: bool(table.hidden_columns), what="columns folded again")


async def test_at_120x40_every_column_fits() -> None:
    app = vet_app()
    async with app.run_test(size=LARGE) as pilot:
        await settled(pilot)
        table = app.vet_screen.questions_table
        assert not table.hidden_columns and not table.overflowing
        assert table.columns[next(iter(k for k in table.columns if k == "question"))].width >= 30


# -- footers ---------------------------------------------------------------------------------------


def footer_keys(app: App[Any]) -> set[str]:
    footer = app.screen.query_one(Footer)
    return {key.description for key in footer.query(FooterKey)}


async def test_the_footer_shows_the_keys_of_the_dialog_that_has_the_focus() -> None:
    app = vet_app()
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot)
        assert "Run" in footer_keys(app)
        await pilot.press("e")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditQuestionScreen")
        await pilot.pause()
        keys = footer_keys(app)
        assert "Re-judge" in keys and "Cancel" in keys and "Run" not in keys
        await pilot.press("escape", "enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "QuestionDetailScreen")
        await pilot.pause()
        assert "Close" in footer_keys(app) and "Run" not in footer_keys(app)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        assert "Close help" in footer_keys(app)


# -- every screen and dialog at 80×24 and 120×40 ---------------------------------------------------

Step = Callable[[Pilot[None]], Awaitable[None]]


async def finished_vet(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await wait_until(pilot, lambda: vet_flushed(pilot.app), what="the vet tables flushed")
    await pilot.pause()


def then(*keys: str, screen: str | None = None) -> Step:
    """Finish the vet run, press ``keys``, wait for ``screen`` (a class name) to be on top."""

    async def step(pilot: Pilot[None]) -> None:
        await finished_vet(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        if screen is not None:
            await wait_until(
                pilot, lambda: type(pilot.app.screen).__name__ == screen, what=f"the {screen}"
            )
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()

    return step


def vet_cases(tmp_path: Path) -> dict[str, tuple[Callable[[], App[Any]], Step]]:
    db = tmp_path / "runs.db"
    vet_twice(db)
    return {
        "vet_idle": (lambda: vet_app(autorun=False), lambda p: p.pause()),
        "vet_finished": (lambda: vet_app(long_quiz()), finished_vet),
        "vet_all_columns": (vet_app, then("w")),
        "detail_wraps": (
            lambda: vet_app(long_quiz()),
            then("enter", screen="QuestionDetailScreen"),
        ),
        "edit": (vet_app, then("e", screen="EditQuestionScreen")),
        "help": (vet_app, then("f1", screen="HelpScreen")),
        "help_in_edit": (vet_app, then("e", "f1", screen="HelpScreen")),
        "metrics": (vet_app, then("m", screen="MetricsScreen")),
        "calibrate": (vet_app, then("c", screen="CalibrateScreen")),
        "grade_form": (vet_app, then("a", screen="GradeScreen")),
        "runs": (lambda: vet_app(runs=db), then("h", screen="RunsScreen")),
        "run_opened": (lambda: vet_app(runs=db), then("h", "enter", screen="RunScreen")),
        "compare": (
            lambda: vet_app(runs=db),
            then("h", "space", "down", "space", "c", screen="CompareScreen"),
        ),
        "compare_detail": (
            lambda: vet_app(runs=db),
            then("h", "space", "down", "space", "c", "enter", screen="CompareDetailScreen"),
        ),
    }


SCREENS = [
    "vet_idle",
    "vet_finished",
    "vet_all_columns",
    "detail_wraps",
    "edit",
    "help",
    "help_in_edit",
    "metrics",
    "calibrate",
    "grade_form",
    "runs",
    "run_opened",
    "compare",
    "compare_detail",
]


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
@pytest.mark.parametrize("name", SCREENS)
def test_snapshot_vet_app_screens(
    snap_compare: SnapCompare,
    tmp_path: Path,
    name: str,
    size: tuple[int, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The calibrate form shows the default gold set's path, which is the shared Open Trivia DB
    # dump when ../shared/data is beside the checkout: the packaged sample, wherever this runs.
    from quiztui import resources
    from quiztui.tui.screens import calibrate

    packaged = resources.as_path(resources.default_gold())
    monkeypatch.setattr(calibrate, "default_gold_path", lambda: packaged)
    make, step = vet_cases(tmp_path)[name]
    assert snap_compare(make(), terminal_size=size, run_before=step)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot_confirm_quit_during_a_run(
    snap_compare: SnapCompare, size: tuple[int, int]
) -> None:
    gate = Gate(pause_after=24)

    async def quit_mid_run(pilot: Pilot[None]) -> None:
        await gate.reached.wait()
        await wait_until(pilot, lambda: vet_flushed(pilot.app), what="the vet tables flushed")
        await pilot.press("q")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "ConfirmQuitScreen")
        await pilot.pause()

    assert snap_compare(vet_app(gate=gate), terminal_size=size, run_before=quit_mid_run)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot_review(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    with Store(tmp_path / "review.sqlite") as store:
        assert snap_compare(review_app(store), terminal_size=size, run_before=reviewed)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot_robustness(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    async def step(pilot: Pilot[None]) -> None:
        await measured(pilot)

    assert snap_compare(robustness_app(), terminal_size=size, run_before=step)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot_robustness_detail(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    async def step(pilot: Pilot[None]) -> None:
        screen = await measured(pilot)
        screen.query_one(DataTable).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: pilot.app.screen is not screen, what="the detail")
        await pilot.pause()

    assert snap_compare(robustness_app(), terminal_size=size, run_before=step)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot_grade_and_its_detail(
    snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]
) -> None:
    async def step(pilot: Pilot[None]) -> None:
        await graded(pilot)
        pilot.app.screen.query_one(DataTable).focus()
        await pilot.press("g", "j", "enter")
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "GradeDetailScreen", what="detail"
        )
        await pilot.pause()

    with Store(tmp_path / "grade.sqlite") as store:
        assert snap_compare(grade_app(store, "facts"), terminal_size=size, run_before=step)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot_benchmark(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(benchmark_app(), terminal_size=size, run_before=benchmarked)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_snapshot_save_or_discard_before_quitting(
    snap_compare: SnapCompare, size: tuple[int, int]
) -> None:
    # The dialog q opens when edits are not written to the file (K4), in the app's own words.
    from quiztui.tui.screens.confirm import SaveQuitScreen

    async def ask(pilot: Pilot[None]) -> None:
        app = pilot.app
        await wait_until(pilot, lambda: vet_flushed(app), what="the vet tables flushed")
        question = app._unsaved_question(1)  # type: ignore[attr-defined]
        app.push_screen(SaveQuitScreen(question))
        await wait_until(pilot, lambda: isinstance(app.screen, SaveQuitScreen), what="asked")
        await pilot.pause()

    assert snap_compare(vet_app(), terminal_size=size, run_before=ask)
