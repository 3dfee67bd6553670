"""SVG snapshots of the key screens (pytest-textual-snapshot).

Deterministic by construction: a fixed clock (elapsed 0:00), a synthetic stream with a fixed
seed, and gates instead of sleeps. Regenerate with
``.venv/bin/pytest tests/test_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from tui_helpers import Gate, constant_clock, make_quiz, stream_factory, vet_flushed, wait_until

from quiztui.tui.app import QuiztuiApp
from quiztui.tui.services import AppServices

SnapCompare = Callable[..., bool]
SIZE = (120, 40)


def make_app(*, autorun: bool = True, gate: Gate | None = None) -> QuiztuiApp:
    quiz = make_quiz()
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz, gate=gate),
            judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
            simulated=True,
        ),
        autorun=autorun,
        clock=constant_clock(),
        flush_interval=0.02,
    )


async def drained(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, QuiztuiApp)
    await wait_until(pilot, lambda: vet_flushed(app), what="the vet tables to be flushed")
    await pilot.pause()


async def run_finished(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await drained(pilot)


def test_quiz_loaded(snap_compare: SnapCompare) -> None:
    """Before any run (autorun off): every question pending, empty verdicts table."""
    assert snap_compare(make_app(autorun=False), terminal_size=SIZE)


def test_mid_run(snap_compare: SnapCompare) -> None:
    """Half the verdicts in; the stream waits on a gate that is never opened."""
    gate = Gate(pause_after=24)

    async def halfway(pilot: Pilot[None]) -> None:
        await gate.reached.wait()
        await drained(pilot)

    assert snap_compare(make_app(gate=gate), terminal_size=SIZE, run_before=halfway)


def test_finished(snap_compare: SnapCompare) -> None:
    """A finished run: badges, confidence, suggested options, all 48 verdicts."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_finished)


def test_finished_small_terminal(snap_compare: SnapCompare) -> None:
    """The same at 80×24."""
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_finished)


def test_filter_poor(snap_compare: SnapCompare) -> None:
    """`f` once: only poor questions, filter shown in the section bar."""
    assert snap_compare(make_app(), press=["f"], terminal_size=SIZE, run_before=run_finished)


def test_question_detail(snap_compare: SnapCompare) -> None:
    """Detail of question 3, whose text and option carry markup that must show literally."""
    assert snap_compare(
        make_app(), press=["j", "j", "enter"], terminal_size=SIZE, run_before=run_finished
    )


def test_help(snap_compare: SnapCompare) -> None:
    """F1 over the questions table: its keys, the screen's and the global ones."""
    assert snap_compare(make_app(), press=["f1"], terminal_size=SIZE, run_before=run_finished)


def test_metrics_small_terminal(snap_compare: SnapCompare) -> None:
    """`m` after a finished run at 80×24: the seed's Bayes table and the curve of the Bayes tab."""
    assert snap_compare(make_app(), press=["m"], terminal_size=(80, 24), run_before=run_finished)
