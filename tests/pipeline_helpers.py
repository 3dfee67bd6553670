"""Shared helpers for pipeline tests: build a run against a provider, collect its events."""

from __future__ import annotations

from pathlib import Path

from quiztui.core.quiz import Question, Quiz
from quiztui.pipeline.events import RunFinished, RunSummary, VetEvent
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import Provider
from quiztui.store import Store


def make_quiz(n: int = 30, *, wrong_every: int = 0, title: str = "arith") -> Quiz:
    """n four-option arithmetic questions; with wrong_every, every k-th key is wrong."""
    questions, truth = [], {}
    for i in range(1, n + 1):
        options = (str(2 * i), str(2 * i + 1), str(2 * i + 2), str(2 * i - 1))
        key = 1 if wrong_every and i % wrong_every == 0 else 0
        questions.append(Question(id=f"q{i}", text=f"What is {i} + {i}?", options=options, key=key))
        truth[f"q{i}"] = 0
    return Quiz(title=title, questions=tuple(questions), truth=truth)


async def collect(
    quiz: Quiz,
    provider: Provider,
    db: Path,
    *,
    settings: VetSettings | None = None,
    resume: int | None = None,
) -> tuple[list[VetEvent], RunSummary]:
    store = Store(db)
    try:
        run = VetRun(
            quiz,
            provider,
            store,
            load_prompt("judge_assertions"),
            settings or VetSettings(),
            resume_run_id=resume,
        )
        events = [e async for e in run.events()]
    finally:
        store.close()
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert len(finished) == 1
    return events, finished[0].summary
