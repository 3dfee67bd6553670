"""Real runs in a real SQLite file for the run-history tests: one quiz vetted by two simulated
judges of different TPR/TNR through the pipeline, with pinned times so snapshots are stable."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from pipeline_helpers import collect
from tui_helpers import make_quiz

from quiztui.core.quiz import Quiz
from quiztui.pipeline.events import RunSummary
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table

# 2024-03-01 09:00 and 09:30 UTC; each run "took" 42 s.
CREATED = (1709283600.0, 1709285400.0)
JUDGES = ((0.95, 0.9, 1), (0.7, 0.75, 2))  # (TPR, TNR, error seed) of judge A and judge B


def vet_twice(db: Path, quiz: Quiz | None = None) -> tuple[Quiz, list[RunSummary]]:
    """Vet ``quiz`` (default: the 12-question planted-errors quiz) once per judge of JUDGES."""
    quiz = quiz or make_quiz()
    summaries = []
    for tpr, tnr, seed in JUDGES:
        provider = SimulatedProvider(
            truth_table(quiz), tpr=tpr, tnr=tnr, seed=seed, truth_source="truth file"
        )
        settings = VetSettings(seed=7, batch_size=8, concurrency=2)
        _, summary = asyncio.run(collect(quiz, provider, db, settings=settings))
        summaries.append(summary)
    pin_times(db)
    return quiz, summaries


def pin_times(db: Path) -> None:
    """Give the stored runs fixed creation and finish times (the n-th run: CREATED[n % 2])."""
    with sqlite3.connect(db) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM runs ORDER BY id")]
        for n, run_id in enumerate(ids):
            start = CREATED[n % 2] + 86400 * (n // 2)
            conn.execute(
                "UPDATE runs SET created_at = ?, finished_at = ? WHERE id = ?",
                (start, start + 42, run_id),
            )


def listed_runs(stdout: str) -> list[str]:
    """``quiztui runs``'s output, one text per run: its figures line and the lines under it
    (quiz and judge; a partial run's state), joined with newlines. The header is left out."""
    runs: list[str] = []
    for line in stdout.splitlines()[1:]:
        if line.startswith(" " * 15) and runs:  # under a run's figures
            runs[-1] += "\n" + line
        elif line.strip():
            runs.append(line)
    return runs
