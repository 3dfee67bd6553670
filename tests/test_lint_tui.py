"""The vet screen's lint column fills without blocking input (issue 17 item 5).

A 5,000-question bank (``bench/lint_scale.py``'s generator, written as CSV and loaded as a user's
file is) opens in the TUI with the real offline lint. The lint is held mid-way — its per-question
rules done, the near-duplicate index not yet run — until the test has pressed a key and seen the
app answer it; then it finishes and the column fills. The test asserts the order of those events,
never a duration: were the lint on the UI thread, the key could not be answered before it ended.
"""

from __future__ import annotations

import csv
import importlib.util
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from rich.text import Text
from tui_helpers import constant_clock, stream_factory, wait_until

import quiztui.core.lint as lint_module
from quiztui.core.lint import lint_quiz
from quiztui.formats import load_quiz
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.services import AppServices

SIZE = (120, 40)
QUESTIONS = 5_000


def bank(directory: Path) -> Path:
    spec = importlib.util.spec_from_file_location("lint_scale", REPO / "bench" / "lint_scale.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    rows, _ = generator.generate(QUESTIONS)
    path = directory / "bank.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "correct", "distractor1", "distractor2", "distractor3"])
        writer.writerows(rows)
    return path


def lint_cells(app: QuiztuiApp) -> dict[str, str]:
    table = app.vet_screen.questions_table
    out = {}
    for row_key in table.rows:
        cell = table.get_cell(row_key, "lint")
        out[str(row_key.value)] = cell.plain if isinstance(cell, Text) else str(cell)
    return out


async def test_a_key_is_answered_while_a_large_quiz_is_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiz = load_quiz(bank(tmp_path))
    assert len(quiz.questions) == QUESTIONS
    events: list[str] = []
    midway = threading.Event()
    answered = threading.Event()
    index = lint_module.near_duplicate_questions

    def held_index(*args: Any, **kwargs: Any) -> Any:
        """The lint's near-duplicate step, entered after every per-question rule has run."""
        events.append("lint mid-way")
        midway.set()
        answered.wait(timeout=30)  # a bound for a UI thread that never answers, not a timing
        return index(*args, **kwargs)

    monkeypatch.setattr(lint_module, "near_duplicate_questions", held_index)

    def lint(q: Any) -> Any:
        report = lint_quiz(q)
        events.append("lint finished")
        return report

    app = QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz),
            judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
            simulated=True,
            lint=lint,
        ),
        autorun=False,
        clock=constant_clock(),
        flush_interval=0.02,
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = app.vet_screen
        await wait_until(pilot, midway.is_set, timeout=60, what="the lint to be under way")
        table = screen.questions_table
        assert table.row_count == QUESTIONS
        start = table.cursor_row
        await pilot.press("j")
        await wait_until(pilot, lambda: table.cursor_row == start + 1, what="the cursor to move")
        assert screen.lint_report is None  # the lint has not finished
        assert not any(lint_cells(app).values())  # and the column is still empty
        events.append("key answered")
        answered.set()
        await wait_until(pilot, lambda: screen.lint_report is not None, timeout=60, what="lint")
        await pilot.pause()
        assert events == ["lint mid-way", "key answered", "lint finished"]
        # The column now shows each question's findings as the lint reports them.
        report = lint_quiz(quiz)
        cells = lint_cells(app)
        flagged = {q.id for q in quiz.questions if report.findings_for(q.id)}
        assert len(flagged) > 150
        assert {qid for qid, text in cells.items() if text} == flagged
        for qid in sorted(flagged)[:50]:
            top = report.label(qid).split()[1]  # "warning L104 +1" -> "L104"
            assert cells[qid].startswith(top)
