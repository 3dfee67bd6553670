"""Soak: a long vet run against the fake server with injected faults loses nothing and leaks nothing.

    .venv/bin/python bench/soak.py                     # 100,000 assertions, 10 % faults (S4)
    .venv/bin/python bench/soak.py --assertions 20000 --fault-rate 0.2 --concurrency 32

Builds a quiz of four-option questions in code (every fifth key wrong), judges it through the real
pipeline (``VetRun``, ``OpenAICompatProvider`` with fast retries, a real SQLite file in a temporary
directory) against ``FakeOpenAI`` on loopback with ``--fault-rate`` faults of every default kind,
and consumes the events as the headless CLI does. The fake runs in this process (its own thread and
event loop), so the RSS printed covers client and server together: an upper bound for the client.

Printed: RSS (current and peak) at 25, 50, 75 and 100 % of assertions done, elapsed seconds,
requests, retries, faults by kind, and the checks. Exits 1, saying why, when an assertion is lost
(no verdict and no unjudged reason in the store, or counts that disagree with the summary), a
verdict is wrong (the fake answers from the truth, TPR = TNR = 1), peak RSS reaches ``--max-rss``
MB, or RSS grows from 25 % to 100 % by ``--max-growth`` of RSS(25 %) or more. The per-assertion
state of a run is O(n) by nature, but it is all allocated when the run starts (the order, one state
per assertion, the rows in SQLite), before 25 %; what grows after that is a leak.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from quiztui.core.quiz import Question, Quiz
from quiztui.pipeline.events import (
    AssertionUnjudged,
    RunFinished,
    RunSummary,
    UsageUpdated,
    VerdictReceived,
)
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.simulate.vet import truth_table
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI

CHECKPOINTS = (0.25, 0.5, 0.75, 1.0)
# Fast retries: the fault mix, not the back-off, is what a soak exercises. Six retries at 10 %
# faults leave a request failing for good about once in 10^6 (its assertions are re-asked anyway).
FAST_RETRY = RetryPolicy(max_retries=6, base_delay=0.005, max_delay=0.05)
LOG_LIMIT = 256  # the fake keeps only its newest requests: its memory must not grow either


def rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB: VmRSS and VmHWM where /proc has
    them, else the peak from getrusage for both."""
    try:
        fields = dict(
            line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines()
        )
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024
    except (OSError, KeyError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return peak, peak


def soak_quiz(questions: int, *, wrong_every: int = 5) -> Quiz:
    """Four-option arithmetic questions with distinct texts; every ``wrong_every``-th key wrong."""
    items, truth = [], {}
    for i in range(1, questions + 1):
        options = (str(2 * i), str(2 * i + 1), str(2 * i + 2), str(2 * i - 1))
        key = 1 if wrong_every and i % wrong_every == 0 else 0
        items.append(Question(id=f"q{i}", text=f"What is {i} + {i}?", options=options, key=key))
        truth[f"q{i}"] = 0
    return Quiz(title=f"soak {questions}", questions=tuple(items), truth=truth)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    fraction: float
    done: int
    seconds: float
    rss_mb: float
    peak_mb: float


@dataclass
class SoakResult:
    assertions: int
    summary: RunSummary
    elapsed: float
    faults: Counter[str]
    baseline_mb: float  # RSS before the quiz was built (interpreter, imports, the fake server)
    checkpoints: list[Checkpoint]
    final_mb: float  # after RunFinished: the summary of every question is built and stored
    peak_mb: float
    stored: dict[str, int]  # counts of verdict rows in SQLite
    wrong: int  # stored verdicts that disagree with the truth
    events_final: Counter[str]  # assertions whose last event was a verdict / unjudged
    connections: tuple[int, int, int] = (0, 0, 0)  # from UsageUpdated: max in flight, min/max limit
    problems: list[str] = field(default_factory=list)  # empty when nothing was lost or wrong


async def soak(
    assertions: int = 100_000,
    *,
    fault_rate: float = 0.1,
    batch_size: int = 20,
    concurrency: int = 16,
    db_dir: Path,
    on_checkpoint: Callable[[Checkpoint], None] | None = None,
) -> SoakResult:
    """Run one soak and check that every assertion ends judged (rightly) or unjudged with a reason.

    ``assertions`` is rounded down to whole four-option questions. Memory figures are measured,
    not checked here: :func:`memory_problems` judges them (the test at a small size does not).
    """
    baseline, _ = rss_mb()
    quiz = soak_quiz(assertions // 4)
    n = 4 * len(quiz.questions)
    truth = truth_table(quiz)
    marks = [max(1, round(f * n)) for f in CHECKPOINTS]
    checkpoints: list[Checkpoint] = []
    final_kind = bytearray(n)  # per seq: 0 nothing yet, 1 verdict, 2 unjudged (the last event)
    summary: RunSummary | None = None
    in_flight_max, limits = 0, set[int]()
    with FakeOpenAI(truth, fault_rate=fault_rate, retry_after=0, log_limit=LOG_LIMIT) as server:
        provider = OpenAICompatProvider(
            base_url=server.base_url,
            model="fake-judge",
            concurrency=concurrency,
            retry=FAST_RETRY,
        )
        store = Store(db_dir / "soak.db")
        started = time.perf_counter()
        try:
            run = VetRun(
                quiz,
                provider,
                store,
                load_prompt("judge_assertions"),
                VetSettings(batch_size=batch_size, concurrency=concurrency),
            )
            async for event in run.events():
                if isinstance(event, VerdictReceived):
                    final_kind[event.seq] = 1
                elif isinstance(event, AssertionUnjudged):
                    final_kind[event.seq] = 2
                elif isinstance(event, UsageUpdated):
                    in_flight_max = max(in_flight_max, event.in_flight)
                    limits.add(event.limit)
                    done = event.judged + event.unjudged
                    while len(checkpoints) < len(marks) and done >= marks[len(checkpoints)]:
                        current, peak = rss_mb()
                        point = Checkpoint(
                            CHECKPOINTS[len(checkpoints)],
                            done,
                            time.perf_counter() - started,
                            current,
                            peak,
                        )
                        checkpoints.append(point)
                        if on_checkpoint is not None:
                            on_checkpoint(point)
                elif isinstance(event, RunFinished):
                    summary = event.summary
            elapsed = time.perf_counter() - started
            run_id = run.run_id
        finally:
            store.close()
            await provider.aclose()
        faults = Counter(server.fault_counts)
    final, peak = rss_mb()
    assert summary is not None, "the run ended without RunFinished"
    stored, wrong = _check_store(db_dir / "soak.db", run_id, truth)
    kinds = Counter({1: "verdict", 2: "unjudged", 0: "none"}[k] for k in final_kind)
    result = SoakResult(
        n, summary, elapsed, faults, baseline, checkpoints, final, peak, stored, wrong, kinds
    )
    result.connections = (in_flight_max, min(limits, default=0), max(limits, default=0))
    result.problems = _lost(result)
    return result


def _check_store(db: Path, run_id: int, truth: dict[str, bool]) -> tuple[dict[str, int], int]:
    """Counts of the run's verdict rows, and how many stored verdicts contradict the truth."""
    with closing(sqlite3.connect(db)) as conn:
        rows, seqs, judged, with_reason, no_reason, reason_chars = conn.execute(
            """SELECT count(*), count(DISTINCT seq), count(verdict),
                      sum(verdict IS NULL AND coalesce(unjudged_reason, '') != ''),
                      sum(verdict IS NULL AND coalesce(unjudged_reason, '') = ''),
                      avg(CASE WHEN verdict IS NOT NULL THEN length(reason) END)
               FROM verdicts WHERE run_id = ?""",
            (run_id,),
        ).fetchone()
        (status,) = conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
        wrong = 0
        for text, verdict in conn.execute(
            """SELECT a.text, v.verdict FROM verdicts v JOIN assertions a USING (run_id, seq)
               WHERE v.run_id = ? AND v.verdict IS NOT NULL""",
            (run_id,),
        ):
            wrong += bool(verdict) != truth[text]
    stored = {
        "rows": rows,
        "distinct_seqs": seqs,
        "judged": judged,
        "unjudged_with_reason": with_reason or 0,
        "unjudged_without_reason": no_reason or 0,
        "finished": int(status == "finished"),
        "mean_reason_chars": round(reason_chars or 0),
    }
    return stored, wrong


def _lost(r: SoakResult) -> list[str]:
    """Why the run lost or misjudged assertions; empty when every one is accounted for."""
    s, st, n = r.summary, r.stored, r.assertions
    problems = []
    if s.status != "finished" or not st["finished"]:
        problems.append(f"run status {s.status!r} ({s.error or 'no error'})")
    if s.judged + s.unjudged != n:
        problems.append(f"summary: judged {s.judged} + unjudged {s.unjudged} != {n}")
    if st["rows"] != n or st["distinct_seqs"] != n:
        problems.append(f"store: {st['rows']} verdict rows ({st['distinct_seqs']} seqs), not {n}")
    if st["unjudged_without_reason"]:
        problems.append(f"store: {st['unjudged_without_reason']} rows without verdict or reason")
    if (st["judged"], st["unjudged_with_reason"]) != (s.judged, s.unjudged):
        problems.append(
            f"store: judged {st['judged']}, unjudged {st['unjudged_with_reason']};"
            f" summary: {s.judged}, {s.unjudged}"
        )
    events = r.events_final
    if (events["verdict"], events["unjudged"]) != (s.judged, s.unjudged) or events["none"]:
        problems.append(
            f"events: {events['verdict']} verdicts, {events['unjudged']} unjudged,"
            f" {events['none']} with no final event; summary: {s.judged}, {s.unjudged}"
        )
    if r.wrong:
        problems.append(f"{r.wrong} stored verdicts contradict the truth")
    if len(r.checkpoints) != len(CHECKPOINTS):
        problems.append(f"only {len(r.checkpoints)} of {len(CHECKPOINTS)} checkpoints reached")
    return problems


def memory_problems(r: SoakResult, *, max_rss: float, max_growth: float) -> list[str]:
    """Peak RSS must stay under ``max_rss`` MB, and RSS(100 %) − RSS(25 %) under ``max_growth``
    of RSS(25 %)."""
    problems = []
    if r.peak_mb >= max_rss:
        problems.append(f"peak RSS {r.peak_mb:.0f} MB >= {max_rss:.0f} MB")
    if len(r.checkpoints) == len(CHECKPOINTS):
        first, last = r.checkpoints[0].rss_mb, r.checkpoints[-1].rss_mb
        if last - first >= max_growth * first:
            problems.append(
                f"RSS grew {last - first:.1f} MB from 25 % to 100 %"
                f" (limit {max_growth:.0%} of {first:.1f} MB = {max_growth * first:.1f} MB)"
            )
    return problems


def report(r: SoakResult, max_growth: float) -> None:
    s = r.summary
    print(
        f"elapsed {r.elapsed:.1f} s ({r.assertions / r.elapsed:.0f} assertions/s);"
        f" requests {s.requests}, retries {s.retries}, re-asked {s.reasked}"
    )
    most, low, high = r.connections
    print(f"connections: up to {most} in flight; the limit ranged {low}..{high}")
    total_faults = sum(r.faults.values())
    by_kind = ", ".join(f"{k} {v}" for k, v in sorted(r.faults.items())) or "none"
    print(f"faults {total_faults} ({total_faults / max(s.requests, 1):.1%} of requests): {by_kind}")
    print(
        f"verdicts {s.judged}, unjudged with a reason {s.unjudged};"
        f" store rows {r.stored['rows']} (judged {r.stored['judged']},"
        f" unjudged with reason {r.stored['unjudged_with_reason']},"
        f" without {r.stored['unjudged_without_reason']}); wrong verdicts {r.wrong}"
    )
    if len(r.checkpoints) == len(CHECKPOINTS):
        first, last = r.checkpoints[0], r.checkpoints[-1]
        growth = last.rss_mb - first.rss_mb
        window = max(last.done - first.done, 1)
        print(
            f"memory: baseline {r.baseline_mb:.1f} MB; run footprint at 100 %"
            f" {(last.rss_mb - r.baseline_mb) * 2**20 / r.assertions:.0f} B/assertion;"
            f" 25 % -> 100 % growth {growth:+.1f} MB = {growth * 2**20 / window:+.0f} B/assertion"
            f" (criterion: < {max_growth:.0%} of RSS(25 %) = {max_growth * first.rss_mb:.1f} MB)"
        )
    chars = r.stored["mean_reason_chars"]
    print(
        f"what legitimately fills as verdicts arrive: each verdict's reason, kept for the summary"
        f" (mean {chars} chars, a {49 + chars} B str)"
    )
    print(
        f"after the summary is built and stored: RSS {r.final_mb:.1f} MB, peak {r.peak_mb:.1f} MB"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--assertions", type=int, default=100_000)
    p.add_argument("--fault-rate", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--max-rss", type=float, default=400.0, help="peak RSS limit in MB")
    p.add_argument(
        "--max-growth", type=float, default=0.15, help="RSS growth limit, fraction of RSS(25 %%)"
    )
    args = p.parse_args()
    if args.assertions < 4:
        p.error("--assertions must be at least 4 (one four-option question)")
    print(
        f"soak: {args.assertions // 4 * 4:,} assertions, faults {args.fault_rate:.0%},"
        f" batch {args.batch_size}, concurrency {args.concurrency}",
        flush=True,
    )

    def show(c: Checkpoint) -> None:
        print(
            f"{c.fraction:>4.0%} done ({c.done:,}) at {c.seconds:6.1f} s:"
            f" RSS {c.rss_mb:6.1f} MB, peak {c.peak_mb:6.1f} MB",
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="quiztui-soak-") as tmp:
        result = asyncio.run(
            soak(
                args.assertions,
                fault_rate=args.fault_rate,
                batch_size=args.batch_size,
                concurrency=args.concurrency,
                db_dir=Path(tmp),
                on_checkpoint=show,
            )
        )
    report(result, args.max_growth)
    problems = result.problems + memory_problems(
        result, max_rss=args.max_rss, max_growth=args.max_growth
    )
    if problems:
        for why in problems:
            print(f"FAIL: {why}")
        sys.exit(1)
    print("OK: no assertion lost, every verdict right, memory bounded")


if __name__ == "__main__":
    main()
