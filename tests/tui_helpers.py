"""Synthetic quizzes and event streams for the TUI tests, snapshots and benchmark.

The stream follows the pipeline's contract (quiztui/pipeline/events.py): RunStarted, verdicts in
shuffled batches, QuestionScored once a question's options are all judged, UsageUpdated after
each batch, RunFinished. Scores come from quiztui.core, exactly as the pipeline computes them;
the TUI only displays them. A ``Gate`` pauses the stream after N verdicts until released, so
tests can act mid-run without sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from quiztui.core.assertions import decompose, shuffled
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.kscore import Badge
from quiztui.core.quiz import Question, Quiz
from quiztui.pipeline.events import (
    AssertionUnjudged,
    QuestionScored,
    QuestionSummary,
    RunFinished,
    RunStarted,
    RunSummary,
    UsageUpdated,
    VerdictReceived,
    VetEvent,
)
from quiztui.pipeline.scoring import score_question
from quiztui.simulate.vet import judge_verdict

MARKUP_QUESTION = "Which tag is [bold]x[/] and [link=x]y, not [/bold]?"
MARKUP_OPTION = "[red]z[/red]"

_ROWS: list[tuple[str, tuple[str, ...], int, int]] = [
    # text, options, key, true answer (differs from key = a planted error)
    ("What is the capital of Australia?", ("Sydney", "Canberra", "Melbourne", "Perth"), 0, 1),
    ("What is the chemical symbol for sodium?", ("So", "Sd", "Na", "S"), 2, 2),
    ("How many sides does a hexagon have?", ("5", "6", "7", "8"), 1, 1),
    ("Which planet is closest to the Sun?", ("Venus", "Mercury", "Mars", "Earth"), 0, 1),
    ("Who wrote Romeo and Juliet?", ("Marlowe", "Jonson", "Shakespeare", "Milton"), 2, 2),
    ("At what temperature (°C) does water boil at sea level?", ("90", "100", "110", "120"), 1, 1),
    ("Which is the largest ocean on Earth?", ("Atlantic", "Indian", "Arctic", "Pacific"), 3, 3),
    ("In which year did the Second World War end?", ("1943", "1944", "1945", "1946"), 1, 2),
    ("Which gas do plants absorb for photosynthesis?", ("Oxygen", "Nitrogen", "CO2", "H2"), 2, 2),
    ("What is the square root of 144?", ("10", "11", "12", "14"), 3, 2),
    ("Which element has atomic number 1?", ("Helium", "Hydrogen", "Oxygen", "Carbon"), 1, 1),
    ("What is the currency of Japan?", ("Yuan", "Won", "Yen", "Ringgit"), 2, 2),
]


def make_quiz(n: int = 12, *, markup: bool = True, title: str = "Planted errors") -> Quiz:
    """``n`` four-option questions (cycling the rows above); the third one carries markup."""
    questions = []
    truth: dict[str, int] = {}
    for i in range(n):
        text, options, key, true_index = _ROWS[i % len(_ROWS)]
        if i >= len(_ROWS):
            text = f"{text} (#{i + 1})"
        if markup and i == 2:
            text, options = MARKUP_QUESTION, (options[0], MARKUP_OPTION, *options[2:])
        qid = f"q{i + 1}"
        questions.append(Question(id=qid, text=text, options=options, key=key))
        truth[qid] = true_index
    return Quiz(title=title, questions=tuple(questions), truth=truth)


@dataclass
class Gate:
    """Pause the stream after ``pause_after`` verdicts until ``release`` is set."""

    pause_after: int
    release: asyncio.Event = field(default_factory=asyncio.Event)
    reached: asyncio.Event = field(default_factory=asyncio.Event)


def synthetic_events(
    quiz: Quiz,
    *,
    seed: int = 7,
    batch_size: int = 8,
    tpr: float = 0.9,
    tnr: float = 0.9,
    gate: Gate | None = None,
    fail_with: BaseException | None = None,
    fail_after: int = 0,
    delay: float = 0.0,
    judge_label: str = "SIMULATED judge (TPR 0.9, TNR 0.9)",
    unjudged: frozenset[str] = frozenset(),
) -> AsyncIterator[VetEvent]:
    """One run's events. ``fail_with`` is raised after ``fail_after`` verdicts; assertions whose
    uid (``q3#1``) is in ``unjudged`` end as AssertionUnjudged."""
    return _events(
        quiz, seed, batch_size, tpr, tnr, gate, fail_with, fail_after, delay, judge_label, unjudged
    )


async def _events(
    quiz: Quiz,
    seed: int,
    batch_size: int,
    tpr: float,
    tnr: float,
    gate: Gate | None,
    fail_with: BaseException | None,
    fail_after: int,
    delay: float,
    judge_label: str,
    unjudged: frozenset[str],
) -> AsyncIterator[VetEvent]:
    order = shuffled(decompose(quiz), seed)
    acc = JudgeAccuracy(tpr=tpr, tnr=tnr)
    yield RunStarted(
        run_id=1,
        quiz_title=quiz.title,
        quiz_path=None,
        questions=len(quiz.questions),
        assertions=len(order),
        batches=(len(order) + batch_size - 1) // batch_size,
        already_judged=0,
        judge_label=judge_label,
        simulated=True,
        seed=seed,
        batch_size=batch_size,
        concurrency=4,
        calibration="uncalibrated",
        tpr=tpr,
        tnr=tnr,
    )
    verdicts: dict[str, dict[int, bool | None]] = {q.id: {} for q in quiz.questions}
    reasons: dict[str, dict[int, str]] = {q.id: {} for q in quiz.questions}
    scores: dict[str, QuestionScored] = {}
    requests = tokens_in = tokens_out = emitted = 0
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        requests += 1
        tokens_in += 40 + sum(len(a.text) // 4 for a in batch)
        for a in batch:
            if gate is not None and emitted == gate.pause_after:
                gate.reached.set()
                await gate.release.wait()
            if fail_with is not None and emitted == fail_after:
                raise fail_with
            if delay:
                await asyncio.sleep(delay)
            q = quiz.question(a.question_id)
            seq = start + batch.index(a)
            if a.uid in unjudged:
                verdicts[q.id][a.option_index] = None
                reasons[q.id][a.option_index] = "no verdict after 2 re-asks"
                yield AssertionUnjudged(
                    seq=seq,
                    question_id=q.id,
                    option_index=a.option_index,
                    reason="no verdict after 2 re-asks",
                )
            else:
                said = _said(quiz, q, a.text, a.option_index, tpr, tnr, seed)
                why = f"{a.option} fits the question" if said else f"{a.option} does not answer it"
                verdicts[q.id][a.option_index] = said
                reasons[q.id][a.option_index] = why
                tokens_out += 6
                yield VerdictReceived(
                    seq=seq,
                    question_id=q.id,
                    option_index=a.option_index,
                    verdict=said,
                    reason=why,
                )
            emitted += 1
            if len(verdicts[q.id]) == q.n:
                scores[q.id] = _score(q, verdicts[q.id], acc)
                yield scores[q.id]
        yield UsageUpdated(
            requests=requests,
            retries=0,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            judged=emitted,
            unjudged=sum(1 for v in verdicts.values() for x in v.values() if x is None),
            total=len(order),
            cached=0,
            # At concurrency 4, the other workers' requests are still on the wire.
            in_flight=min(3, -(-(len(order) - start - len(batch)) // batch_size)),
            limit=4,
        )
    counts: dict[str, int] = {}
    summaries = []
    for q in quiz.questions:
        s = scores[q.id]
        counts[str(s.badge)] = counts.get(str(s.badge), 0) + 1
        summaries.append(
            QuestionSummary(
                question_id=q.id,
                text=q.text,
                options=q.options,
                key=q.key,
                k=s.k,
                badge=s.badge,
                confidence=s.confidence,
                suggested_option=s.suggested_option,
                suggested_p=s.suggested_p,
                verdicts=tuple(verdicts[q.id][i] for i in range(q.n)),
                reasons=tuple(reasons[q.id][i] for i in range(q.n)),
            )
        )
    yield RunFinished(
        _summary(
            quiz,
            judge_label,
            seed,
            batch_size,
            tpr,
            tnr,
            summaries,
            counts,
            requests,
            tokens_in,
            tokens_out,
            emitted,
        )
    )


def _summary(
    quiz: Quiz,
    judge_label: str,
    seed: int,
    batch_size: int,
    tpr: float,
    tnr: float,
    summaries: list[QuestionSummary],
    counts: dict[str, int],
    requests: int,
    tokens_in: int,
    tokens_out: int,
    judged: int,
) -> RunSummary:
    return RunSummary(
        run_id=1,
        status="finished",
        quiz_title=quiz.title,
        quiz_path=None,
        judge_label=judge_label,
        simulated=True,
        calibration="uncalibrated",
        seed=seed,
        batch_size=batch_size,
        tpr=tpr,
        tnr=tnr,
        prior=0.95,
        questions=tuple(summaries),
        badge_counts=counts,
        requests=requests,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        judged=judged,
    )


def _said(
    quiz: Quiz, q: Question, text: str, index: int, tpr: float, tnr: float, seed: int
) -> bool:
    true_index = quiz.truth.get(q.id, q.key)
    return judge_verdict(text, index == true_index, tpr, tnr, seed)


def _score(q: Question, said: dict[int, bool | None], acc: JudgeAccuracy) -> QuestionScored:
    vs: list[bool | None] = [said.get(i) for i in range(q.n)]
    return score_question(q, vs, acc, unjudged=sum(v is None for v in vs))


def stream_factory(quiz: Quiz, **kwargs: object) -> Callable[[], AsyncIterator[VetEvent]]:
    """A ``start_run`` for QuiztuiApp: each call starts a fresh synthetic run."""

    def start_run() -> AsyncIterator[VetEvent]:
        return synthetic_events(quiz, **kwargs)  # type: ignore[arg-type]

    return start_run


def constant_clock(value: float = 1000.0) -> Callable[[], float]:
    return lambda: value


async def wait_until(
    pilot: Any, predicate: Callable[[], object], *, timeout: float = 10.0, what: str = ""
) -> None:
    """Let the app run in small steps until ``predicate()`` holds.

    Fails naming ``what`` (or the predicate) if it does not hold within ``timeout`` seconds: a
    bound for a hung test, not a measurement. A condition already met costs nothing; each step
    is a short sleep, not ``pilot.pause()``'s wait for an idle CPU (20 ms at least, up to 1 s
    while a timer keeps the app busy).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what or predicate}")
        await asyncio.sleep(0.005)


async def paste(pilot: Any, text: str) -> None:
    """Paste ``text`` into the focused widget: one bracketed paste, not a key per character
    (each simulated key waits for the app to go idle, ~0.1 s)."""
    from textual import events

    focused = pilot.app.focused
    assert focused is not None, "nothing has the focus to paste into"
    focused.post_message(events.Paste(text))
    await pilot.pause()


def vet_flushed(app: Any) -> bool:
    """The vet screen's buffered events have all reached its tables."""
    state = app.vet_screen.state
    return not (state.pending_seqs or state.changed_seqs or state.dirty_questions)


async def settled(pilot: Any) -> None:
    """Wait for the vet app's workers, then until its buffered table updates are flushed."""
    app = pilot.app
    await app.workers.wait_for_complete()
    await wait_until(pilot, lambda: vet_flushed(app), what="the vet tables to be flushed")
    await pilot.pause()


def shown_toasts(pilot: Any) -> list[str]:
    """The text of every toast on the current screen."""
    from textual.widgets._toast import Toast

    return [str(toast.render()) for toast in pilot.app.screen.query(Toast)]


async def run_palette_command(pilot: Any, query: str) -> None:
    """ctrl+p, enter ``query``, wait until the palette has finished searching and highlights a
    command whose title contains it, then enter."""
    from textual.command import CommandInput, CommandList, CommandPalette

    await pilot.press("ctrl+p")
    await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, CommandPalette), what="the command palette"
    )
    palette = pilot.app.screen
    # Typed in one go (as a paste): a key at a time would start a search per key.
    palette.query_one(CommandInput).value = query

    def found() -> bool:
        if any(w.node is palette and w.is_running for w in pilot.app.workers):  # still searching
            return False
        commands = palette.query_one(CommandList)
        index = commands.highlighted
        if index is None:
            return False
        hit = getattr(commands.get_option_at_index(index), "hit", None)
        return hit is not None and query.casefold() in str(hit.text).casefold()

    await wait_until(pilot, found, what=f"the palette to offer {query!r}")
    await pilot.press("enter")
    await pilot.pause()


__all__ = [
    "Badge",
    "Gate",
    "constant_clock",
    "make_quiz",
    "paste",
    "run_palette_command",
    "settled",
    "stream_factory",
    "synthetic_events",
    "shown_toasts",
    "vet_flushed",
    "wait_until",
]
