"""What the TUI knows about a run: a record of the events it has seen, nothing computed.

The vet screen feeds every event to :class:`RunState.apply`; the state keeps per-question and
per-assertion records plus a buffer of verdict rows that have not reached the table yet. It holds
no judging or scoring logic: k, badges and confidence arrive in ``QuestionScored``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from quiztui.core.decisions import Decision
from quiztui.core.lint import LintFinding
from quiztui.core.quiz import Question, Quiz
from quiztui.pipeline.events import (
    AssertionUnjudged,
    BatchFailed,
    BatchRetried,
    ProviderBatchStatus,
    QuestionScored,
    RunFinished,
    RunStarted,
    RunSummary,
    UsageUpdated,
    VerdictReceived,
    VetEvent,
)

IDLE, RUNNING, FINISHED, CANCELLED, FAILED = "idle", "running", "finished", "cancelled", "failed"
STOPPED = "stopped"  # a vet run that reached its budget: the rest is not run, resumable


@dataclass(slots=True)
class AssertionRecord:
    """The latest news about one assertion (one option of one question)."""

    seq: int
    question_id: str
    option_index: int
    verdict: bool | None  # None: unjudged
    reason: str
    cached: bool = False
    p_true: float | None = None  # from the judge's token logprobs, when it sent them


@dataclass(slots=True)
class QuestionRecord:
    number: int  # 1-based position in the quiz
    question: Question
    options: dict[int, AssertionRecord] = field(default_factory=dict)
    score: QuestionScored | None = None
    fragile: tuple[bool, str] | None = None  # from the newest robustness run: (fragile, why)
    lint: tuple[LintFinding, ...] = ()  # offline lint findings about this question
    decision: Decision | None = None  # the review desk's, carried over by content hash


class RunState:
    """Event-sourced view model of one run."""

    def __init__(self, quiz: Quiz, clock: Callable[[], float]) -> None:
        self.quiz = quiz
        self.clock = clock
        self.status = IDLE
        self.started: RunStarted | None = None
        self.usage: UsageUpdated | None = None
        self.summary: RunSummary | None = None
        self.last_error: str | None = None
        self.provider_batch: ProviderBatchStatus | None = None  # batch mode: the latest news
        self.total = sum(q.n for q in quiz.questions)
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.questions: dict[str, QuestionRecord] = {
            q.id: QuestionRecord(i + 1, q) for i, q in enumerate(quiz.questions)
        }
        self.assertions: dict[int, AssertionRecord] = {}
        self.unjudged = 0
        # Buffers drained by the screen's flush timer.
        self.pending_seqs: list[int] = []  # assertions new to the verdicts table, in arrival order
        self.changed_seqs: set[int] = set()  # assertions already in the table whose row changed
        self.dirty_questions: set[str] = set()
        self.stats_dirty = True

    # -- lifecycle ---------------------------------------------------------------------------

    def begin(self) -> None:
        self.status = RUNNING
        self.started_at = self.clock()
        self.ended_at = None

    def end(self, status: str) -> None:
        if self.status == RUNNING:
            self.status = status
        self.ended_at = self.clock()
        self.stats_dirty = True

    @property
    def done(self) -> int:
        return len(self.assertions)

    @property
    def not_run(self) -> int:
        """Assertions never sent: the summary's count (a run stopped at its budget), else those
        with no news at all (a cancelled run). See core/figures.run_state_text."""
        if self.summary is not None:
            return self.summary.not_run
        return self.total - len(self.assertions)

    @property
    def elapsed(self) -> float:
        if self.started_at is None:
            return 0.0
        end = self.ended_at if self.ended_at is not None else self.clock()
        return max(0.0, end - self.started_at)

    # -- events ------------------------------------------------------------------------------

    def apply(self, event: VetEvent) -> None:
        match event:
            case VerdictReceived():
                self._record(
                    AssertionRecord(
                        event.seq,
                        event.question_id,
                        event.option_index,
                        event.verdict,
                        event.reason,
                        event.cached,
                        event.p_true,
                    )
                )
            case AssertionUnjudged():
                self._record(
                    AssertionRecord(
                        event.seq, event.question_id, event.option_index, None, event.reason
                    )
                )
            case QuestionScored():
                rec = self.questions.get(event.question_id)
                if rec is not None:
                    rec.score = event
                    self.dirty_questions.add(event.question_id)
            case UsageUpdated():
                self.usage = event
                self.stats_dirty = True
            case RunStarted():
                self.started = event
                self.total = event.assertions
                self.stats_dirty = True
            case BatchRetried():
                self.last_error = (
                    f"batch {event.batch_no} retry {event.attempt}: {event.error}"
                    f" (in {event.delay:.1f}s)"
                )
                self.stats_dirty = True
            case BatchFailed():
                self.last_error = f"batch {event.batch_no} failed: {event.error}"
                self.stats_dirty = True
            case ProviderBatchStatus():
                self.provider_batch = event
                self.stats_dirty = True
            case RunFinished():
                self.summary = event.summary
                self.stats_dirty = True

    def _record(self, record: AssertionRecord) -> None:
        previous = self.assertions.get(record.seq)
        is_new = previous is None
        if previous is not None and previous.verdict is None:
            self.unjudged -= 1
        if record.verdict is None:
            self.unjudged += 1
        self.assertions[record.seq] = record
        q = self.questions.get(record.question_id)
        if q is not None:
            q.options[record.option_index] = record
            self.dirty_questions.add(record.question_id)
        if is_new:
            self.pending_seqs.append(record.seq)
        else:
            self.changed_seqs.add(record.seq)
        self.stats_dirty = True
