"""The vet screen's stats line shows connections in use (of the limit) and retries (issue 7, item 4).

The pipeline copies the provider's ``usage.in_flight`` / ``usage.limit`` into ``UsageUpdated``; the
simulated provider keeps them as the HTTP providers do, so the footer fills offline too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from pipeline_helpers import collect
from pipeline_helpers import make_quiz as arith_quiz
from rich.text import Text
from textual.widgets import Static
from tui_helpers import constant_clock, make_quiz, wait_until

from quiztui.pipeline.events import RunFinished, RunStarted, RunSummary, UsageUpdated, VetEvent
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.base import ChatRequest
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.services import AppServices

SIZE = (120, 40)


def usage(*, in_flight: int, limit: int, retries: int, requests: int = 9) -> UsageUpdated:
    return UsageUpdated(
        requests=requests,
        retries=retries,
        tokens_in=1200,
        tokens_out=300,
        judged=0,
        unjudged=0,
        total=48,
        cached=0,
        in_flight=in_flight,
        limit=limit,
    )


async def test_stats_line_shows_connections_while_running_and_final_retries_after() -> None:
    quiz = make_quiz()
    steps = [asyncio.Event() for _ in range(3)]
    shown = [asyncio.Event() for _ in range(3)]

    async def stream() -> AsyncIterator[VetEvent]:
        yield RunStarted(
            run_id=1,
            quiz_title=quiz.title,
            quiz_path=None,
            questions=12,
            assertions=48,
            batches=6,
            already_judged=0,
            judge_label="fake",
            simulated=True,
            seed=1,
            batch_size=8,
            concurrency=16,
            calibration="uncalibrated",
        )
        yield usage(in_flight=7, limit=16, retries=3)
        shown[0].set()
        await steps[0].wait()
        yield usage(in_flight=5, limit=0, retries=4)  # a provider that knows no limit
        shown[1].set()
        await steps[1].wait()
        yield usage(in_flight=0, limit=16, retries=5, requests=11)
        summary = RunSummary(
            run_id=1,
            status="finished",
            quiz_title=quiz.title,
            quiz_path=None,
            judge_label="fake",
            simulated=True,
            calibration="uncalibrated",
            seed=1,
            batch_size=8,
            tpr=0.9,
            tnr=0.9,
            prior=0.95,
            questions=(),
            requests=11,
            retries=5,
        )
        yield RunFinished(summary)

    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream, judge_label="fake", simulated=True),
        clock=constant_clock(),
        flush_interval=0.02,
    )

    async with app.run_test(size=SIZE) as pilot:

        def line() -> str:
            content = app.vet_screen.query_one("#stats-line", Static).content
            return content.plain if isinstance(content, Text) else str(content)

        async def flushed(part: str) -> str:
            """The stats line once a flush has put ``part`` in it."""
            await wait_until(pilot, lambda: part in line(), what=f"{part!r} in the stats line")
            return line()

        await shown[0].wait()
        text = await flushed("requests 9 · conn 7/16 · retries 3 ·")
        steps[0].set()
        await shown[1].wait()
        text = await flushed("conn 5 · retries 4")
        assert "conn 5/" not in text
        steps[1].set()
        await app.workers.wait_for_complete()
        text = await flushed("requests 11 · retries 5 ·")
        assert app.vet_screen.state.status == "finished"
        assert "conn" not in text


async def test_simulated_provider_counts_requests_in_flight_against_its_limit() -> None:
    provider = SimulatedProvider({}, latency=0.05, concurrency=2)
    assert (provider.usage.in_flight, provider.usage.limit) == (0, 2)
    request = ChatRequest(messages=(("user", "no assertions here"),))
    calls = [asyncio.create_task(provider.complete(request)) for _ in range(3)]
    await asyncio.sleep(0.02)
    assert provider.usage.in_flight == 2  # the third waits for a slot: not on the wire
    await asyncio.gather(*calls)
    assert (provider.usage.in_flight, provider.usage.requests) == (0, 3)


async def test_usage_events_carry_the_providers_connections(tmp_path: Path) -> None:
    quiz = arith_quiz(12)
    provider = SimulatedProvider(truth_table(quiz), latency=0.01, concurrency=4)
    events, summary = await collect(
        quiz, provider, tmp_path / "q.db", settings=VetSettings(batch_size=4, concurrency=4)
    )
    updates = [e for e in events if isinstance(e, UsageUpdated)]
    assert summary.judged == 48 and updates
    assert {u.limit for u in updates} == {4}
    assert all(0 <= u.in_flight <= 4 for u in updates)
    assert max(u.in_flight for u in updates) > 0  # other batches were on the wire
    assert updates[-1].in_flight == 0
