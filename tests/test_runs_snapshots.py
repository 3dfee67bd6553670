"""SVG snapshots of the Runs screen, an opened run and the comparison of two runs (S6).

Deterministic by construction: the runs are real (two simulated judges with fixed seeds through
the pipeline into a real SQLite file), their creation and finish times are pinned
(``runs_helpers.pin_times``) and shown in UTC. Regenerate with
``.venv/bin/pytest tests/test_runs_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from runs_helpers import vet_twice
from textual.pilot import Pilot

from quiztui.pipeline.history import StoreHistory
from quiztui.tui.grade_app import GradeApp
from quiztui.tui.screens.runs import RunsScreen

SnapCompare = Callable[..., bool]
SIZE = (120, 40)
SMALL = (80, 24)


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """Dates are shown in local time; pin it to UTC (and restore the zone afterwards)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.fixture
def app(tmp_path: Path) -> GradeApp:
    db = tmp_path / "runs.db"
    vet_twice(db)
    return GradeApp(RunsScreen(StoreHistory(db)), title="quiztui runs")


async def loaded(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def compared(pilot: Pilot[None]) -> None:
    await loaded(pilot)
    await pilot.press("space", "down", "space", "c")
    await loaded(pilot)


def test_runs_list(snap_compare: SnapCompare, app: GradeApp) -> None:
    """Two runs, newest first: counts, SIM-marked judges, no cost; the highlighted run below."""
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded)


def test_runs_list_small_terminal(snap_compare: SnapCompare, app: GradeApp) -> None:
    """The same at 80×24: the date column folds away, quiz and judge keep readable widths."""
    assert snap_compare(app, terminal_size=SMALL, run_before=loaded)


def test_run_opened(snap_compare: SnapCompare, app: GradeApp) -> None:
    """`enter`: the newest run read-only — badges, confidence, verdicts, suggested options."""

    async def opened(pilot: Pilot[None]) -> None:
        await loaded(pilot)
        await pilot.press("enter")
        await loaded(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=opened)


def test_comparison(snap_compare: SnapCompare, app: GradeApp) -> None:
    """`space`, `down`, `space`, `c`: agreement, κ, the 2×2 verdict table, badge counts and the
    disagreeing questions with both judges' verdicts per option."""
    assert snap_compare(app, terminal_size=SIZE, run_before=compared)


def test_comparison_small_terminal(snap_compare: SnapCompare, app: GradeApp) -> None:
    assert snap_compare(app, terminal_size=SMALL, run_before=compared)


def test_comparison_question(snap_compare: SnapCompare, app: GradeApp) -> None:
    """`enter` on the first disagreement: each option with run A's and run B's verdict."""

    async def question(pilot: Pilot[None]) -> None:
        await compared(pilot)
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=question)
