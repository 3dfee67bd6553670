"""The one run lifecycle (pipeline/lifecycle.py): how every kind of run ends in the store.

Each kind runs against the simulated judge (or the fake server, for an authentication failure)
with a real SQLite store: a run that ends normally is "finished", one that cannot go on is
"failed" with its summary, and one that ends early (the stream closed, or its task cancelled) is
"stopped" (grade, review, robustness) or "cancelled" (vet) — recorded, with its work cancelled and
awaited, by the time the stream is closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pipeline_helpers import make_quiz

from quiztui.core.assertions import decompose
from quiztui.core.grading import GradeItem
from quiztui.formats import load_quiz
from quiztui.pipeline.calibrate import CalibrationRun, GoldSet, ProfileMeasured
from quiztui.pipeline.events import RunFinished, VerdictReceived
from quiztui.pipeline.grade import GradeFinished, GradeRun, GradeSettings, ItemGraded
from quiztui.pipeline.lifecycle import RunLifecycle, events_of
from quiztui.pipeline.panel import PanelFinished, PanelRun
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.review import QuestionReviewed, ReviewFinished, ReviewRun, ReviewSettings
from quiztui.pipeline.robustness import (
    QuestionMeasured,
    RobustnessFinished,
    RobustnessRun,
    RobustnessSettings,
)
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import Provider
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_quizzes" / "opentdb_sample.json"
FAST_RETRY = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)


# --- the lifecycle on its own -------------------------------------------------------------------


@dataclass
class Table:
    """A run table that records what the lifecycle wrote, and when."""

    log: list[tuple[Any, ...]]

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None) -> None:
        self.log.append(("finish", run_id, status, summary))


async def test_events_come_in_order_then_the_works_error() -> None:
    async def work(emit: Callable[[int], None]) -> None:
        for i in range(3):
            emit(i)
            await asyncio.sleep(0)
        raise ValueError("broke after three")

    seen: list[int] = []
    with pytest.raises(ValueError, match="broke after three"):
        async for event in events_of(work):
            seen.append(event)
    assert seen == [0, 1, 2]


async def test_closing_the_stream_cancels_the_work_then_records_the_early_end() -> None:
    log: list[tuple[Any, ...]] = []

    async def work(emit: Callable[[str], None]) -> None:
        try:
            emit("first")
            await asyncio.Event().wait()  # never set: only cancellation ends it
        finally:
            log.append(("work ended",))

    life: RunLifecycle[str, Table] = RunLifecycle(
        Table(log), record=lambda _t, run_id, e: log.append(("record", run_id, e))
    )
    assert life.start(lambda _t: 7) == 7
    life.emit("queued before the stream")
    seen = []
    with pytest.raises(GeneratorExit):
        async with life.stream(work) as events:
            async for event in events:
                seen.append(event)
                if event == "first":
                    raise GeneratorExit  # what closing a pipeline's generator raises at its yield
    assert seen == ["queued before the stream", "first"]
    assert log == [
        ("record", 7, "queued before the stream"),
        ("record", 7, "first"),
        ("work ended",),
        ("finish", 7, "stopped", None),
    ]


async def test_a_kind_that_counts_only_cancellation_records_nothing_on_an_error() -> None:
    log: list[tuple[Any, ...]] = []

    async def work(emit: Callable[[str], None]) -> None:
        raise RuntimeError("a bug, resumable")

    life: RunLifecycle[str, Table] = RunLifecycle(
        Table(log), early_status="cancelled", early_on=(asyncio.CancelledError, GeneratorExit)
    )
    life.run_id = 3
    with pytest.raises(RuntimeError):
        async with life.stream(work) as events:
            async for _ in events:
                pass
    assert log == []
    with pytest.raises(asyncio.CancelledError), life.ending():
        raise asyncio.CancelledError
    assert log == [("finish", 3, "cancelled", None)]


async def test_a_run_not_stored_streams_alike_and_records_nothing() -> None:
    life: RunLifecycle[int, Table] = RunLifecycle()

    async def work(emit: Callable[[int], None]) -> None:
        emit(1)

    async with life.stream(work) as events:
        assert [e async for e in events] == [1]
    assert life.start(lambda _t: 1) is None
    life.finish("finished", {})  # nothing to write to: no error


# --- every kind of run, in a real store -----------------------------------------------------------


def quiz_of(n: int) -> Any:
    full = load_quiz(SAMPLE)
    return full.model_copy(update={"questions": full.questions[:n]})


GRADE_ITEMS = [
    GradeItem(f"i{i}", f"What is {i} + {i}?", f"{2 * i}", f"{2 * i if i % 3 else i}")
    for i in range(1, 13)
]


@dataclass
class Kind:
    """How to start one kind of run and read its stored status back."""

    name: str
    early: str  # the status of a run that ended early
    start: Callable[[Provider, Store], Any]  # → the run (with .events() and .run_id)
    status: Callable[[Store, int], str]
    item: type  # the event of one item done
    finished: type
    server: Callable[..., FakeOpenAI]


def _grade(provider: Provider, store: Store) -> GradeRun:
    return GradeRun(
        GRADE_ITEMS, GradeSettings("pass3", concurrency=2), provider=provider, store=store
    )


def _review(provider: Provider, store: Store) -> ReviewRun:
    settings = ReviewSettings(mode="direct", concurrency=2)
    return ReviewRun(quiz_of(8), settings, provider, store=store)


def _robustness(provider: Provider, store: Store) -> RobustnessRun:
    settings = RobustnessSettings(variants=2, concurrency=2)
    return RobustnessRun(quiz_of(8), settings, provider, store=store)


def _vet(provider: Provider, store: Store) -> VetRun:
    settings = VetSettings(batch_size=4, concurrency=2)
    return VetRun(make_quiz(12), provider, store, load_prompt("judge_assertions"), settings)


def _robust_status(store: Store, run_id: int) -> str:
    return next(r.status for r in store.robustness.runs() if r.id == run_id)


KINDS = [
    Kind(
        "grade",
        "stopped",
        _grade,
        lambda s, i: s.grades.get_run(i).status,  # type: ignore[union-attr]
        ItemGraded,
        GradeFinished,
        lambda **kw: FakeOpenAI(**kw),
    ),
    Kind(
        "review",
        "stopped",
        _review,
        lambda s, i: s.reviews.get_run(i).status,  # type: ignore[union-attr]
        QuestionReviewed,
        ReviewFinished,
        lambda **kw: FakeOpenAI(**kw),
    ),
    Kind(
        "robustness",
        "stopped",
        _robustness,
        _robust_status,
        QuestionMeasured,
        RobustnessFinished,
        lambda **kw: FakeOpenAI.from_quiz(quiz_of(8), **kw),
    ),
    Kind(
        "vet",
        "cancelled",
        _vet,
        lambda s, i: s.get_run(i).status,
        VerdictReceived,
        RunFinished,
        lambda **kw: FakeOpenAI.from_quiz(make_quiz(12), **kw),
    ),
]


def simulated(latency: float = 0.0) -> SimulatedProvider:
    quiz = make_quiz(12)
    return SimulatedProvider(truth_table(quiz), latency=latency, concurrency=2)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
async def test_a_run_that_ends_normally_is_finished_with_its_summary(
    kind: Kind, tmp_path: Path
) -> None:
    with Store(tmp_path / "q.db") as store:
        run = kind.start(simulated(), store)
        events = [e async for e in run.events()]
        assert isinstance(events[-1], kind.finished)
        assert kind.status(store, run.run_id) == "finished"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
async def test_a_run_the_judge_refuses_is_failed_with_its_summary(
    kind: Kind, tmp_path: Path
) -> None:
    with kind.server(require_key="right") as server, Store(tmp_path / "q.db") as store:
        provider = OpenAICompatProvider(
            base_url=server.base_url, model="fake-judge", retry=FAST_RETRY
        )
        try:
            run = kind.start(provider, store)
            events = [e async for e in run.events()]
        finally:
            await provider.aclose()
        assert isinstance(events[-1], kind.finished)
        assert kind.status(store, run.run_id) == "failed"


async def _until_first_item(events: AsyncIterator[Any], item: type) -> None:
    async for event in events:
        if isinstance(event, item):
            return
    raise AssertionError("the run ended before its first item")


@pytest.mark.parametrize("how", ["closed", "task cancelled"])
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
async def test_a_run_that_ends_early_is_recorded_and_leaves_nothing_running(
    kind: Kind, how: str, tmp_path: Path
) -> None:
    provider = simulated(latency=0.05)
    with Store(tmp_path / "q.db") as store:
        run = kind.start(provider, store)
        stream = run.events()
        if how == "closed":
            await _until_first_item(stream, kind.item)
            await stream.aclose()
        else:
            first = asyncio.Event()

            async def consume() -> None:
                await _until_first_item(stream, kind.item)
                first.set()
                async for _ in stream:
                    pass

            task = asyncio.create_task(consume())
            await first.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        # Recorded, and every request of the run cancelled and awaited, by the time it returns.
        assert kind.status(store, run.run_id) == kind.early
        assert provider.usage.in_flight == 0


async def test_calibration_and_panel_runs_are_vet_runs_of_their_kind(tmp_path: Path) -> None:
    quiz = make_quiz(6)
    gold = GoldSet(quiz, {a.uid: a.keyed for a in decompose(quiz)}, "synthetic")
    prompt = load_prompt("judge_assertions")
    with Store(tmp_path / "q.db") as store:
        calibration = CalibrationRun(gold, simulated(), store, prompt, VetSettings(batch_size=4))
        measured = [e async for e in calibration.events() if isinstance(e, ProfileMeasured)]
        run_id = measured[0].profile.run_id or 0
        assert store.run_kind(run_id) == "calibrate"
        assert store.get_run(run_id).status == "finished"

        panel = PanelRun(quiz, [simulated(), simulated()], store, prompt, VetSettings())
        finished = [e async for e in panel.events() if isinstance(e, PanelFinished)]
        for judge in finished[0].summary.judges:
            assert store.run_kind(judge.run_id) == "panel"
            assert store.get_run(judge.run_id).status == "finished"


async def test_closing_a_calibration_records_its_vet_run_cancelled_at_once(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(12)
    gold = GoldSet(quiz, {a.uid: a.keyed for a in decompose(quiz)}, "synthetic")
    provider = simulated(latency=0.05)
    with Store(tmp_path / "q.db") as store:
        calibration = CalibrationRun(
            gold, provider, store, load_prompt("judge_assertions"), VetSettings(batch_size=4)
        )
        async with aclosing(calibration.events()) as events:
            await _until_first_item(events, VerdictReceived)
        assert [(r.kind, r.status) for r in store.run_listings()] == [("calibrate", "cancelled")]
        assert provider.usage.in_flight == 0
