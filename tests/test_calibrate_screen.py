"""The Calibrate screen (``c``): a real calibration (simulated judge, real SQLite store) driven
from the form; results rows with intervals, the modes comparison, errors, cancel, markup."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Checkbox, DataTable, Input, ProgressBar, Select, Static
from tui_helpers import (
    constant_clock,
    make_quiz,
    run_palette_command,
    stream_factory,
    wait_until,
)

from quiztui.assemble.calibrate import calibration_starter
from quiztui.config import load_config
from quiztui.pipeline.calibrate import (
    MODE_SETUPS,
    CalibrationRequest,
    ProfileMeasured,
    SetupStarted,
    load_gold,
)
from quiztui.pipeline.events import UsageUpdated, VerdictReceived
from quiztui.report.text import cheapest_note
from quiztui.store import Store
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.help import collect_sections
from quiztui.tui.screens.calibrate import UNAVAILABLE, CalibrateScreen
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.metrics import MetricsScreen
from quiztui.tui.screens.vet import VetScreen
from quiztui.tui.services import AppServices, CalibrateService

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "sample_quizzes" / "opentdb_sample.json"
SIZE = (100, 30)
Start = Callable[[CalibrationRequest], AsyncIterator[Any]]
SnapCompare = Callable[..., bool]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "calibrate.sqlite") as s:
        yield s


def make_app(start: Start | None) -> QuiztuiApp:
    quiz = make_quiz()
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz),
            judge_label="SIMULATED judge",
            simulated=True,
            calibrate=CalibrateService(start=start, batch_size=20),
        ),
        autorun=False,
        clock=constant_clock(),
        flush_interval=0.02,
    )


def real_starter(store: Store) -> Start:
    """What `quiztui` passes: the configured (here simulated, zero-latency) judge."""
    return calibration_starter(load_config(), store)  # type: ignore[no-any-return]


def plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def static_text(screen: CalibrateScreen, selector: str) -> str:
    return plain(screen.query_one(selector, Static).content)


def painted(screen: CalibrateScreen, selector: str) -> str:
    widget = screen.query_one(selector)
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def result_rows(screen: CalibrateScreen) -> list[list[str]]:
    table = screen.query_one("#cal-results", DataTable)
    return [[plain(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def open_calibrate(pilot: Pilot[None]) -> CalibrateScreen:
    await pilot.press("c")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CalibrateScreen)
    return screen


def fill(
    screen: CalibrateScreen, gold: Path | str, n: str = "20", *, compare: bool = False
) -> None:
    screen.query_one("#cal-gold", Input).value = str(gold)
    screen.query_one("#cal-n", Input).value = n
    screen.query_one("#cal-seed", Input).value = "0"
    screen.query_one("#cal-compare", Checkbox).value = compare


async def run_to_end(pilot: Pilot[None], screen: CalibrateScreen) -> None:
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: not screen.running, what="the calibration to end")
    await pilot.app.workers.wait_for_complete()
    screen.flush()
    await pilot.pause()


# -- opening it ---------------------------------------------------------------------------------


async def test_c_and_the_palette_open_the_screen_and_help_lists_it(store: Store) -> None:
    app = make_app(real_starter(store))
    async with app.run_test(size=SIZE) as pilot:
        help_lines = {
            (e.keys, e.description, e.binding_id)
            for s in collect_sections(app.screen)
            for e in s.entries
        }
        assert ("c", "Calibrate the judge", "view.calibrate") in help_lines
        screen = await open_calibrate(pilot)
        form = screen.request()
        assert form.n == 250 and form.sample_seed == 0 and form.batch_size == 20
        assert form.mode == "assertion" and not form.compare_modes
        keys = {e.binding_id for s in collect_sections(screen) for e in s.entries}
        assert {"calibrate.start", "calibrate.close"} <= keys
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, VetScreen)

        await run_palette_command(pilot, "calibrate")
        assert app.screen is screen  # the same screen: its results survive going back


async def test_without_a_runner_the_screen_says_calibration_is_unavailable() -> None:
    app = make_app(None)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        assert static_text(screen, "#cal-error") == UNAVAILABLE
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert not screen.running and not app.workers


async def test_form_errors_name_the_field() -> None:
    app = make_app(real_starter_unused)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        screen.query_one("#cal-n", Input).value = "0"
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert not screen.running
        assert "questions: must be at least 1" in static_text(screen, "#cal-error")
        screen.query_one("#cal-n", Input).value = ""  # empty = every question
        screen.query_one("#cal-batch", Input).value = "501"
        with pytest.raises(ValueError, match="batch size"):
            screen.request()
        screen.query_one("#cal-batch", Input).value = "7"
        assert screen.request().n is None and screen.request().batch_size == 7
        screen.query_one("#cal-mode", Select).value = "question"
        await pilot.pause()
        assert screen.query_one("#cal-batch", Input).disabled
        assert screen.request().batch_size == 1  # what a per-question profile is keyed by


def real_starter_unused(request: CalibrationRequest) -> AsyncIterator[Any]:
    raise AssertionError("the form should not have started a calibration")


# -- a real calibration ---------------------------------------------------------------------------


async def test_single_calibration_end_to_end(store: Store, tmp_path: Path) -> None:
    app = make_app(real_starter(store))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        fill(screen, GOLD)
        await run_to_end(pilot, screen)
        assert screen.progress.status == "finished"
        rows = result_rows(screen)
        assert len(rows) == 1
        setup, tpr, tnr, acc, counts, unjudged = rows[0][:6]
        assert setup == "batch 20"
        stored = store.profiles.list()
        assert len(stored) == 1
        profile = stored[0]
        (tpr_lo, tpr_hi), (tnr_lo, tnr_hi) = profile.tpr_ci, profile.tnr_ci
        assert tpr == f"{profile.tpr:.3f}\n[{tpr_lo:.2f}, {tpr_hi:.2f}]"
        assert tnr == f"{profile.tnr:.3f}\n[{tnr_lo:.2f}, {tnr_hi:.2f}]"
        assert tpr_lo < profile.tpr < tpr_hi
        c = profile.confusion
        assertions = sum(q.n for q in load_gold(GOLD, 20, 0).quiz.questions)
        assert counts == f"{c.tp}/{c.fn}/{c.tn}/{c.fp}" and c.total == assertions
        assert acc == f"{c.accuracy:.3f}" and unjudged == "0.0%"
        assert profile.batch_size == 20 and profile.mode == "assertion"
        assert profile.gold == "opentdb_sample.json: 20 of 50 questions, seed 0"
        # The app holds it (newest first) for the metrics screen; SQLite has it on disk.
        assert [p.id for p in app.profiles] == [profile.id]
        with sqlite3.connect(store.path) as conn:
            assert conn.execute("SELECT tp, fn, tn, fp FROM profiles").fetchall() == [
                (c.tp, c.fn, c.tn, c.fp)
            ]
        # Progress and usage reached their final values.
        bar = screen.query_one("#cal-progress", ProgressBar)
        assert bar.progress == bar.total == assertions
        assert f"judged {assertions} · unjudged 0 · total {assertions}" in static_text(
            screen, "#cal-count"
        )
        assert "requests 4" in static_text(screen, "#cal-usage")
        assert "20 of 50 questions" in static_text(screen, "#cal-setup")
        note = static_text(screen, "#cal-note")
        assert f"Stored as profile #{profile.id}." in note
        assert f"The next vet run (r) scores with profile #{profile.id}." in note
        assert "cheapest" not in note  # one set-up: nothing to compare
        assert not screen.query_one("#cal-error").display

        # Calibrations made in this session appear on the metrics screen's Profiles tab.
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        metrics = app.screen
        assert isinstance(metrics, MetricsScreen)
        metrics.show_tab("profiles")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert metrics.query_one("#profiles-table", DataTable).row_count == 1


async def test_compare_five_setups_names_the_cheapest(store: Store) -> None:
    app = make_app(real_starter(store))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        fill(screen, GOLD, compare=True)
        await pilot.pause()
        assert screen.query_one("#cal-mode", Select).disabled
        await run_to_end(pilot, screen)
        rows = result_rows(screen)
        assert [r[0] for r in rows] == [
            "batch 1",
            "batch 10",
            "batch 20",
            "batch 50",
            "per-question",
        ]
        assert len(rows) == len(MODE_SETUPS)
        measured = screen.progress.measured
        assert [(p.mode, p.batch_size) for p in measured] == list(MODE_SETUPS)
        assert len(store.profiles.list()) == 5 and len(app.profiles) == 5
        note = static_text(screen, "#cal-note")
        assert cheapest_note(measured) in note
        assert note.startswith("cheapest set-up within 1 point of the best accuracy")
        batch20 = next(p for p in measured if p.batch_size == 20 and p.mode == "assertion")
        assert f"The next vet run (r) scores with profile #{batch20.id}." in note
        assert "set-up 5/5" in static_text(screen, "#cal-setup")


# -- errors, markup, cancel -------------------------------------------------------------------------


async def test_missing_gold_file_shows_an_error_naming_it(store: Store, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-gold.json"
    app = make_app(real_starter(store))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        fill(screen, missing)
        await run_to_end(pilot, screen)
        assert screen.progress.status == "failed"
        error = static_text(screen, "#cal-error")
        assert "no-such-gold.json" in error
        assert screen.query_one("#cal-error").display
        assert not screen.query_one("#cal-results").display
        assert app.is_running and app.screen is screen
        assert not screen.query_one("#cal-gold", Input).disabled  # the form is usable again

        broken = tmp_path / "broken.json"
        broken.write_text("{ not json", encoding="utf-8")
        fill(screen, broken)
        await run_to_end(pilot, screen)
        assert "broken.json" in static_text(screen, "#cal-error")
        assert store.profiles.list() == []


async def test_markup_in_the_gold_file_name_is_shown_literally(
    store: Store, tmp_path: Path
) -> None:
    gold = tmp_path / "[red]gold[b] [link=x].json"
    shutil.copy(GOLD, gold)
    app = make_app(real_starter(store))
    async with app.run_test(size=(160, 30)) as pilot:
        screen = await open_calibrate(pilot)
        fill(screen, gold)
        await run_to_end(pilot, screen)
        assert screen.progress.status == "finished"
        assert "[red]gold[b] [link=x].json: 20 of 50" in painted(screen, "#cal-setup")
        assert store.profiles.list()[0].gold.startswith("[red]gold[b] [link=x].json")

        missing = tmp_path / "[bold]missing[/].json"
        fill(screen, missing)
        await run_to_end(pilot, screen)
        assert "[bold]missing[/].json" in painted(screen, "#cal-error")


def gated(
    start: Start,
    after_verdicts: int,
    release: asyncio.Event,
    reached: asyncio.Event | None = None,
) -> Start:
    """The real stream, paused after ``after_verdicts`` verdicts until ``release`` is set
    (``reached`` is set when it pauses)."""

    async def stream(request: CalibrationRequest) -> AsyncIterator[Any]:
        seen = 0
        async for event in start(request):
            yield event
            if isinstance(event, VerdictReceived):
                seen += 1
                if seen == after_verdicts:
                    if reached is not None:
                        reached.set()
                    await release.wait()

    return stream


async def test_escape_asks_then_cancels_a_running_calibration(store: Store) -> None:
    release, reached = asyncio.Event(), asyncio.Event()
    app = make_app(gated(real_starter(store), 10, release, reached))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        fill(screen, GOLD)
        await pilot.press("ctrl+r")
        await wait_until(pilot, reached.is_set, what="the tenth verdict")
        assert screen.running
        assert screen.query_one("#cal-gold", Input).disabled
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        await pilot.press("n")  # keep going
        await pilot.pause()
        assert app.screen is screen and screen.running
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.progress.status == "cancelled"
        assert "cancelled" in static_text(screen, "#cal-setup")
        assert store.profiles.list() == [] and app.profiles == []
        await pilot.press("escape")  # nothing running: back to the vet screen
        await pilot.pause()
        assert isinstance(app.screen, VetScreen)


async def test_quit_asks_while_a_calibration_runs(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = asyncio.Event()
    app = make_app(gated(real_starter(store), 5, release))
    exits: list[object] = []
    monkeypatch.setattr(app, "exit", lambda *a, **k: exits.append(a))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        fill(screen, GOLD)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.calibrating
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        assert "calibration" in plain(app.screen.query_one("#confirm-text", Static).content)
        await pilot.press("n")
        await pilot.pause()
        assert not exits
        release.set()
        await app.workers.wait_for_complete()


async def test_progress_is_flushed_on_a_timer_not_per_event(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3,000 usage events at full speed: the bar is redrawn a few times, not 3,000."""

    async def flood(request: CalibrationRequest) -> AsyncIterator[Any]:
        yield SetupStarted(0, 1, "assertion", 20, "flood: 3000", "SIMULATED judge")
        for i in range(1, 3001):
            yield UsageUpdated(i, 0, i * 10, i, i, 0, 3000, 0)

    updates: list[float] = []
    original = ProgressBar.update

    def counting(self: ProgressBar, **kwargs: Any) -> None:
        if "progress" in kwargs:  # the screen's redraws, not Textual's own total updates
            updates.append(kwargs["progress"])
        original(self, **kwargs)

    monkeypatch.setattr(ProgressBar, "update", counting)
    app = make_app(flood)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_calibrate(pilot)
        assert screen.flush_interval == pytest.approx(0.1)  # ≤ 10 Hz though the app asks 50 Hz
        updates.clear()
        await run_to_end(pilot, screen)
        assert updates[-1] == 3000
        assert len(updates) < 100


# -- snapshot ---------------------------------------------------------------------------------------


def fixed_timings(start: Start) -> Start:
    """Wall time and latency are measured, so they vary; the snapshot shows fixed ones."""

    async def stream(request: CalibrationRequest) -> AsyncIterator[Any]:
        async for event in start(request):
            if isinstance(event, ProfileMeasured):
                event = ProfileMeasured(
                    dataclasses.replace(event.profile, wall_time=1.25, latency=0.05)
                )
            yield event

    return stream


def test_snapshot_after_a_single_calibration(
    snap_compare: SnapCompare, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the gold path shows relative to the working directory
    app = make_app(fixed_timings(real_starter(store)))

    async def calibrated(pilot: Pilot[None]) -> None:
        screen = await open_calibrate(pilot)
        fill(screen, "sample_quizzes/opentdb_sample.json")
        await run_to_end(pilot, screen)

    assert snap_compare(app, terminal_size=SIZE, run_before=calibrated)


def test_calibrate_bindings_have_ids_unlike_any_other() -> None:
    from textual.binding import Binding

    from quiztui.tui.screens.confirm import ConfirmQuitScreen as Confirm

    ids = [b.id for cls in (QuiztuiApp, VetScreen, Confirm) for b in cls.BINDINGS]  # type: ignore[union-attr]
    for binding in CalibrateScreen.BINDINGS:
        assert isinstance(binding, Binding) and binding.id
        assert binding.id not in ids
