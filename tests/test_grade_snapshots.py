"""SVG snapshots of the Grade, grade detail and Benchmark screens (pytest-textual-snapshot).

Deterministic by construction: the simulated judge at zero latency over the bundled
``sample_quizzes/answers_sample.csv`` (rows are put back in file order when a run ends), the run's
duration zeroed in ``GradeFinished`` (the summary line prints it), and for the Benchmark screen a
synthetic word-share dataset graded by the offline ``lexical`` grader, so no shared data is
needed. Regenerate with ``.venv/bin/pytest tests/test_grade_snapshots.py --snapshot-update`` and
look at the SVGs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_grade_screen import SAMPLE, bench_app, synthetic_benchmark
from textual.pilot import Pilot
from tui_helpers import paste

from quiztui.assemble.grade import grade_events
from quiztui.config import load_config
from quiztui.core.grading import GradeItem
from quiztui.formats.answers import load_answers
from quiztui.pipeline.grade import BenchmarkRun, GradeFinished, GradeSettings
from quiztui.store import Store
from quiztui.tui.grade_app import GradeApp
from quiztui.tui.screens.grade import GradeScreen

SnapCompare = Callable[..., bool]
SIZE = (120, 40)
SMALL = (80, 24)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "grade.sqlite") as s:
        yield s


def zero_duration(store: Store) -> Callable[[list[GradeItem], str], AsyncIterator[Any]]:
    config = load_config()

    async def start(items: list[GradeItem], grader: str) -> AsyncIterator[Any]:
        async for event in grade_events(config, store, items, "answers_sample.csv", grader):
            if isinstance(event, GradeFinished):
                event = GradeFinished(event.run_id, dataclasses.replace(event.summary, seconds=0))
            yield event

    return start


def grade_app(store: Store, grader: str, *, items: bool = True) -> GradeApp:
    screen = GradeScreen(
        load_answers(SAMPLE) if items else [],
        zero_duration(store),
        grader=grader,
        source="sample_quizzes/answers_sample.csv" if items else None,
        flush_interval=0.02,
    )
    return GradeApp(screen)


async def finished(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, GradeScreen)
    screen.flush()
    await pilot.pause()


def test_grade_finished_facts(snap_compare: SnapCompare, store: Store) -> None:
    """The fact grader over the sample answers: scores, labels, reasoning, the summary."""
    assert snap_compare(grade_app(store, "facts"), terminal_size=SIZE, run_before=finished)


def test_grade_finished_rubric10_small_terminal(snap_compare: SnapCompare, store: Store) -> None:
    """rubric10 at 80×24: the header, the grader row, the table and the summary still fit."""
    assert snap_compare(grade_app(store, "rubric10"), terminal_size=SMALL, run_before=finished)


def test_grade_detail_facts(snap_compare: SnapCompare, store: Store) -> None:
    """Answer a2 (two reference facts) in the detail view: per-fact said, weight, P(1), value."""

    async def open_a2(pilot: Pilot[None]) -> None:
        await finished(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, GradeScreen)
        screen.table.focus()
        await pilot.press("g", "j", "enter")
        await pilot.pause()

    assert snap_compare(grade_app(store, "facts"), terminal_size=SIZE, run_before=open_a2)


def test_grade_one_answer_form(snap_compare: SnapCompare, store: Store) -> None:
    """Opened without a file: the one-answer form, one answer graded (lexical) and the next
    candidate typed."""

    async def one_answer(pilot: Pilot[None]) -> None:
        await pilot.pause()
        await paste(pilot, "Why is the sky blue?")
        await pilot.press("tab")
        await paste(pilot, "Air scatters blue light more than red light")
        await pilot.press("tab")
        await paste(pilot, "[bold]blue[/] light scatters more")
        await pilot.press("enter")
        await finished(pilot)
        await pilot.press(*"the sea")

    app = grade_app(store, "lexical", items=False)
    assert snap_compare(app, terminal_size=SMALL, run_before=one_answer)


def benchmark_app() -> GradeApp:
    bench = synthetic_benchmark()

    async def start() -> AsyncIterator[Any]:
        async for event in BenchmarkRun(bench, GradeSettings(grader="lexical")).events():
            yield event

    return bench_app(start, bench)


async def benchmarked(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    pilot.app.screen.flush()  # type: ignore[attr-defined]
    await pilot.pause()


def test_benchmark_synthetic(snap_compare: SnapCompare) -> None:
    """The comparison table, the bracket confusion, the map and the scatter plot at 120×40."""
    assert snap_compare(benchmark_app(), terminal_size=SIZE, run_before=benchmarked)


def test_benchmark_synthetic_small_terminal(snap_compare: SnapCompare) -> None:
    """The same at 80×24."""
    assert snap_compare(benchmark_app(), terminal_size=SMALL, run_before=benchmarked)
