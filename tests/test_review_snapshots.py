"""SVG snapshots of the Review screen (pytest-textual-snapshot).

Deterministic by construction: two simulated reviewers (seeds 0 and 1) at zero latency over the
bundled ``sample_quizzes/planted_errors.json`` (rows are in quiz order from the start, whatever
order questions finish in), and the run's duration zeroed in ``ReviewFinished`` (the summary
prints it). Regenerate with ``.venv/bin/pytest tests/test_review_snapshots.py --snapshot-update``
and look at the SVGs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from quiztui.assemble.review import review_starter
from quiztui.config import load_config
from quiztui.core.quiz import Quiz
from quiztui.formats import load_quiz
from quiztui.formats.ratings import load_ratings, resolve
from quiztui.pipeline.review import ReviewFinished
from quiztui.store import Store
from quiztui.tui.review_app import ReviewApp
from quiztui.tui.screens.review import ReviewScreen

SnapCompare = Callable[..., bool]
REPO = Path(__file__).resolve().parents[1]
PLANTED = REPO / "sample_quizzes" / "planted_errors.json"
SIZE = (120, 40)
SMALL = (80, 24)
HUMANS = """question_id,rater,grammaticality,appropriateness,relevance,novelty,complexity
q1,a,5,4,4,2,1
q1,b,5,5,4,2,2
q1,c,4,5,5,3,1
q2,a,5,5,3,2,1
q2,b,5,4,3,3,1
q2,c,5,5,4,2,2
q3,a,5,5,5,3,2
q3,b,5,4,5,3,2
q3,c,5,5,4,2,3
q4,a,4,5,4,3,2
q4,b,5,5,4,3,2
q4,c,5,5,4,3,1
q5,a,5,4,4,2,2
q5,b,4,4,4,2,2
q5,c,5,5,3,2,1
"""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "review.sqlite") as s:
        yield s


def zero_duration(start: Callable[[Quiz, str], AsyncIterator[Any]]) -> Any:
    async def wrapped(quiz: Quiz, mode: str) -> AsyncIterator[Any]:
        async for event in start(quiz, mode):
            if isinstance(event, ReviewFinished):
                event = ReviewFinished(event.run_id, dataclasses.replace(event.summary, seconds=0))
            yield event

    return wrapped


def review_app(store: Store, humans: Path | None = None) -> ReviewApp:
    quiz = load_quiz(PLANTED)
    table = resolve(load_ratings(humans), quiz) if humans is not None else None
    start = review_starter(
        load_config(), store, humans=table, humans_source="humans.csv" if humans else None
    )
    return ReviewApp(ReviewScreen(quiz, zero_duration(start), flush_interval=0.02))


async def finished(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    screen.flush()
    await pilot.pause()


def test_review_finished_feedback(snap_compare: SnapCompare, store: Store) -> None:
    """Twelve rows with five ratings, converged/iterations and REWRITE flags; question 1's
    trajectory (J1, J2, J1 with their strengths and flaws) below."""
    assert snap_compare(review_app(store), terminal_size=SIZE, run_before=finished)


def test_review_finished_small_terminal(snap_compare: SnapCompare, store: Store) -> None:
    """The same at 80×24: header, table, trajectory and footer still fit."""
    assert snap_compare(review_app(store), terminal_size=SMALL, run_before=finished)


def test_review_not_converged_trajectory(snap_compare: SnapCompare, store: Store) -> None:
    """Question 2 (never agreed): five iterations, the judges' kept and taken-up points; the
    trajectory pane focused with enter."""

    async def open_q2(pilot: Pilot[None]) -> None:
        await finished(pilot)
        await pilot.press("j", "enter")
        await pilot.pause()

    assert snap_compare(review_app(store), terminal_size=SIZE, run_before=open_q2)


def test_review_summary_with_human_ratings(
    snap_compare: SnapCompare, store: Store, tmp_path: Path
) -> None:
    """``s``: the summary and the agreement table (Pearson r, exact match, the raters' Fleiss κ)
    beside the paper's GPT-4 figures."""
    humans = tmp_path / "humans.csv"
    humans.write_text(HUMANS, encoding="utf-8")

    async def summary(pilot: Pilot[None]) -> None:
        await finished(pilot)
        await pilot.press("s")
        await pilot.pause()

    assert snap_compare(review_app(store, humans), terminal_size=SIZE, run_before=summary)
