"""How fast do streamed verdicts become visible in the TUI, and does it keep answering keys?

    python bench/tui_stream.py [--n 4000] [--rate 0] [--chunk 20] [--size 120x40]
                               [--flush-interval 0.1] [--probe-interval 0.05]

A synthetic producer emits N verdicts (N/4 four-option questions) plus the scores and usage
events a real run sends, as fast as possible (``--rate 0``; it yields to the loop every
``--chunk`` verdicts, as a streamed batch reply would) or at ``--rate`` verdicts per second. The
app runs headless (the compositor renders every frame; only the terminal write is skipped).

Printed: time from the last verdict emitted until all N rows are in the verdicts table and a
frame has been painted after that; input-to-paint while the verdicts stream (a key press, k or j,
sent through the driver to the focused verdicts table every ``--probe-interval`` seconds, timed
until the first compositor frame in which the table's cursor has moved), p50/p99/max; the number
of add_rows calls; event-loop lag (overshoot of a 10 ms sleep, measured by a separate task)
p50/p99/max; and the process's peak RSS. Targets: the last verdict visible within 1 s of
arriving, input-to-paint p99 ≤ 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time
from collections.abc import AsyncIterator

from textual import events

from quiztui.core.assertions import decompose, shuffled
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.quiz import Question, Quiz
from quiztui.pipeline.events import (
    RunStarted,
    UsageUpdated,
    VerdictReceived,
    VetEvent,
)
from quiztui.pipeline.scoring import score_question
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.services import AppServices
from quiztui.tui.widgets.verdict_window import VerdictsTable


def make_quiz(n_verdicts: int) -> Quiz:
    questions = tuple(
        Question(
            id=f"q{i + 1}",
            text=f"Synthetic question number {i + 1}: which option is the right one?",
            options=(f"alpha {i}", f"beta {i}", f"gamma {i}", f"delta {i}"),
            key=i % 4,
        )
        for i in range((n_verdicts + 3) // 4)
    )
    return Quiz(title=f"bench: {n_verdicts} verdicts", questions=questions)


class Producer:
    def __init__(self, quiz: Quiz, n: int, rate: float, chunk: int) -> None:
        self.quiz = quiz
        self.n = n
        self.rate = rate
        self.chunk = max(1, chunk)
        self.last_emitted: float | None = None

    async def events(self) -> AsyncIterator[VetEvent]:
        order = shuffled(decompose(self.quiz), 1)[: self.n]
        acc = JudgeAccuracy()
        yield RunStarted(
            run_id=1,
            quiz_title=self.quiz.title,
            quiz_path=None,
            questions=len(self.quiz.questions),
            assertions=len(order),
            batches=(len(order) + 19) // 20,
            already_judged=0,
            judge_label="SIMULATED bench producer",
            simulated=True,
            seed=1,
            batch_size=20,
            concurrency=16,
            calibration="uncalibrated",
        )
        said: dict[str, dict[int, bool]] = {}
        questions = {q.id: q for q in self.quiz.questions}
        start = time.perf_counter()
        for i, a in enumerate(order):
            verdict = a.keyed if (i % 17) else not a.keyed
            said.setdefault(a.question_id, {})[a.option_index] = verdict
            yield VerdictReceived(
                seq=i,
                question_id=a.question_id,
                option_index=a.option_index,
                verdict=verdict,
                reason="synthetic reason " + ("agrees" if verdict == a.keyed else "disagrees"),
            )
            self.last_emitted = time.perf_counter()
            q = questions[a.question_id]
            if len(said[q.id]) == q.n:
                yield score_question(q, [said[q.id][j] for j in range(q.n)], acc)
            if (i + 1) % 20 == 0:
                yield UsageUpdated(
                    requests=(i + 1) // 20,
                    retries=0,
                    tokens_in=(i + 1) * 30,
                    tokens_out=(i + 1) * 8,
                    judged=i + 1,
                    unjudged=0,
                    total=len(order),
                    cached=0,
                )
            if self.rate > 0:
                delay = start + (i + 1) / self.rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                elif (i + 1) % self.chunk == 0:
                    await asyncio.sleep(0)
            elif (i + 1) % self.chunk == 0:
                await asyncio.sleep(0)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


async def run(args: argparse.Namespace) -> None:
    width, height = (int(x) for x in args.size.lower().split("x"))
    cpu_started = time.process_time()
    quiz = make_quiz(args.n)
    producer = Producer(quiz, args.n, args.rate, args.chunk)
    calls: list[int] = []
    original = VerdictsTable.add_rows

    def counting(self: VerdictsTable, rows):  # type: ignore[no-untyped-def]
        calls.append(len(rows))
        return original(self, rows)

    VerdictsTable.add_rows = counting  # type: ignore[method-assign]
    app = QuiztuiApp(
        quiz,
        AppServices(
            start_run=producer.events, judge_label="SIMULATED bench producer", simulated=True
        ),
        autorun=False,
        flush_interval=args.flush_interval,
    )
    lags: list[float] = []
    paints: list[float] = []  # input-to-paint of each probe key
    probe: tuple[float, int] | None = None  # (sent at, cursor row then) of the key in flight
    timed_out = 0
    visible_at: float | None = None
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()
        table = app.vet_screen.verdicts_table
        table.focus()
        await pilot.pause()
        stop = asyncio.Event()
        display = app._display

        def painted(screen, renderable):  # type: ignore[no-untyped-def]
            """Every compositor frame (headless: rendered, then not written) ends here."""
            nonlocal probe, visible_at
            display(screen, renderable)
            now = time.perf_counter()
            if probe is not None and table.cursor_row != probe[1]:
                paints.append(now - probe[0])
                probe = None
            if visible_at is None and table.row_count >= args.n:
                visible_at = now

        app._display = painted  # type: ignore[method-assign]
        driver = app._driver
        assert driver is not None

        async def measure_lag() -> None:
            while not stop.is_set():
                t0 = time.perf_counter()
                await asyncio.sleep(0.010)
                now = time.perf_counter()
                lags.append(now - t0 - 0.010)

        async def press_keys() -> None:
            """A user moving the cursor while the verdicts stream in, one key at a time."""
            nonlocal probe, timed_out
            while not stop.is_set() and visible_at is None:
                await asyncio.sleep(args.probe_interval)
                if stop.is_set() or visible_at is not None:
                    break
                if probe is not None:
                    if time.perf_counter() - probe[0] < 5.0:
                        continue
                    timed_out += 1  # never painted (e.g. the cursor could not move)
                key = "k" if table.cursor_row > 0 else "j"
                probe = (time.perf_counter(), table.cursor_row)
                event = events.Key(key, key)
                event.set_sender(app)
                driver.send_message(event)

        lag_task = asyncio.create_task(measure_lag())
        started = time.perf_counter()
        app.vet_screen.action_start_run()
        key_task = asyncio.create_task(press_keys())
        deadline = started + args.timeout
        while visible_at is None and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        await app.workers.wait_for_complete()
        stop.set()
        await lag_task
        await key_task
        await pilot.pause()  # a probe key still queued is handled before the app closes
        rows = table.row_count
    VerdictsTable.add_rows = original  # type: ignore[method-assign]

    last = producer.last_emitted
    print(
        f"tui_stream: {args.n} verdicts at {width}x{height}, rate "
        f"{'max' if args.rate <= 0 else f'{args.rate:g}/s'}, chunk {args.chunk}, "
        f"flush every {args.flush_interval * 1000:.0f} ms"
    )
    if last is not None:
        print(f"  producer: last verdict emitted {last - started:.2f} s after start")
    if visible_at is not None and last is not None:
        print(
            f"  all rows visible: {max(0.0, visible_at - last) * 1000:.0f} ms after the last "
            f"verdict ({visible_at - started:.2f} s after start)"
        )
    else:
        print(f"  NOT all rows visible within {args.timeout:g} s: {rows}/{args.n}")
    print(
        f"  input-to-paint: p50 {statistics.median(paints or [0]) * 1000:.1f} ms, "
        f"p99 {percentile(paints, 99) * 1000:.1f} ms, max {max(paints, default=0) * 1000:.1f} ms "
        f"({len(paints)} keys, {timed_out} not painted within 5 s)"
    )
    print(f"  add_rows calls: {len(calls)} (largest {max(calls, default=0)} rows)")
    print(
        f"  event-loop lag: p50 {statistics.median(lags) * 1000:.1f} ms, "
        f"p99 {percentile(lags, 99) * 1000:.1f} ms, max {max(lags, default=0) * 1000:.1f} ms "
        f"({len(lags)} samples)"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu = time.process_time() - cpu_started
    load = os.getloadavg()[0]
    print(f"  peak RSS: {peak:.0f} MB · CPU {cpu:.1f} s · load average {load:.1f} (2 cores shared)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=4000, help="verdicts to stream")
    parser.add_argument("--rate", type=float, default=0.0, help="verdicts per second (0 = max)")
    parser.add_argument("--chunk", type=int, default=20, help="verdicts between yields at max rate")
    parser.add_argument("--size", default="120x40", help="terminal size WxH")
    parser.add_argument("--flush-interval", type=float, default=0.1)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument(
        "--probe-interval", type=float, default=0.05, help="seconds between probe key presses"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
