"""Review runs (seed 004, MIRROR): every question rated 1–5 on five criteria, streamed as events.

``ReviewRun.events()`` reviews the questions concurrently (one question per request, its
iterations in order) and yields, as facts happen: ``ReviewStarted``, ``ReviewTextReceived`` (reply
text as the judge writes it), ``ReviewRetried`` (HTTP retries and re-asks), ``IterationDone`` (one
rating of the trajectory: judge, scores, strengths, flaws, raw reply), ``QuestionReviewed`` (the
final scores, converged or not, the rewrite flag) and ``ReviewFinished`` (the summary, with the
agreement against human ratings when they were given). The TUI and the CLI consume these alike;
each iteration and each question is written to the store as it arrives.

- direct: judge 1 rates once with ``prompts/review_direct.md``;
- feedback: judge 1 rates with ``prompts/review_feedback.md`` and no feedback, then the judges
  alternate, each shown the strengths and flaws of its partner's latest parsed rating, until
  :func:`quiztui.core.review.converged_at` holds (three ratings in a row with identical scores:
  two consecutive agreements) or ``max_iterations`` ratings were made — then *not converged*, and
  the final scores are the latest ones given.

A reply without all five scores is asked again up to ``max_reasks`` times, then recorded as an
unparsed iteration with the reason; the loop goes on (the partner sees the latest points that did
parse). A request that fails after the provider's retries ends that question's loop with the error
recorded; an authentication failure stops the run, and questions not yet reviewed are recorded as
not reviewed. A question with no parsed rating at all is *unscored* — never given made-up scores.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from quiztui.core.assertions import sanitise
from quiztui.core.question_mode import LETTERS
from quiztui.core.quiz import Question, Quiz
from quiztui.core.review import (
    MIN_FEEDBACK_ITERATIONS,
    MODES,
    HumanAgreement,
    Iteration,
    Review,
    ReviewOutcome,
    ReviewTally,
    Scores,
    converged_at,
    final_scores,
    human_agreement,
    needs_rewrite,
    next_judge,
    parse_review,
)
from quiztui.errors import ConfigError
from quiztui.pipeline.asking import Asked, Asker, RunStopped
from quiztui.pipeline.lifecycle import FAILED, FINISHED, Emit, RunLifecycle, usage_mark
from quiztui.pipeline.prompts import PromptTemplate, load_prompt
from quiztui.providers.base import Provider, RetryNotice
from quiztui.store import Store
from quiztui.store.reviews import ReviewStore

PROMPTS = {"direct": "review_direct", "feedback": "review_feedback"}
NO_CONTEXT = "(none given: judge relevance against the subject, or the question's own topic)"
NO_SUBJECT = "(not given)"
NOT_YET = "(none yet)"
NONE_LISTED = "(none listed)"
MAX_POINTS = 12  # strengths (and flaws) passed on per rating
MAX_POINT_CHARS = 400  # characters kept of each passed-on point


# --- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReviewStarted:
    run_id: int | None
    mode: str
    questions: int
    judge_label: str
    judge2_label: str | None  # feedback mode only
    simulated: bool
    source: str | None
    max_iterations: int


@dataclass(frozen=True, slots=True)
class ReviewTextReceived:
    question_id: str
    iteration: int
    judge: int
    text: str  # a piece of the reply, as streamed


@dataclass(frozen=True, slots=True)
class ReviewRetried:
    question_id: str
    iteration: int
    judge: int
    attempt: int
    error: str
    delay: float


@dataclass(frozen=True, slots=True)
class IterationDone:
    question_id: str
    iteration: Iteration


@dataclass(frozen=True, slots=True)
class QuestionReviewed:
    position: int  # 0-based, in the quiz
    question: Question
    outcome: ReviewOutcome
    rewrite: bool  # some final score is at or below low_score


@dataclass(frozen=True, slots=True)
class ReviewSummary:
    mode: str
    total: int
    scored: int
    unscored: int
    converged: int  # feedback mode
    not_converged: int
    mean_iterations: float | None  # over questions with at least one iteration
    rewrite: int
    low_score: int
    means: dict[str, float | None]  # mean final score per criterion
    requests: int
    retries: int
    reasks: int
    tokens_in: int
    tokens_out: int
    seconds: float
    stopped: str | None = None
    agreement: HumanAgreement | None = None
    humans_source: str | None = None


@dataclass(frozen=True, slots=True)
class ReviewFinished:
    run_id: int | None
    summary: ReviewSummary


ReviewEvent = (
    ReviewStarted
    | ReviewTextReceived
    | ReviewRetried
    | IterationDone
    | QuestionReviewed
    | ReviewFinished
)


@dataclass(frozen=True, slots=True)
class ReviewSettings:
    mode: str = "feedback"
    max_iterations: int = 5
    max_reasks: int = 1
    temperature: float = 0.7  # the seed's setting for GPT-4, Gemini and GPT-3.5
    max_tokens: int | None = None
    concurrency: int = 16
    stream: bool = True
    low_score: int = 2


# --- prompts -----------------------------------------------------------------------------------


def points_block(points: Sequence[str] | None) -> str:
    """One ``- point`` line per point, each flattened to one line; a placeholder when none."""
    if points is None:
        return f"- {NOT_YET}"
    lines = []
    for point in points[:MAX_POINTS]:
        clean = sanitise(point)[:MAX_POINT_CHARS]
        if clean:
            lines.append(f"- {clean}")
    return "\n".join(lines) or f"- {NONE_LISTED}"


def options_line(question: Question) -> str:
    return " | ".join(f"{LETTERS[i]}) {sanitise(o)}" for i, o in enumerate(question.options))


def render(template: str, question: Question, partner: Review | None) -> str:
    """The user message for ``question``: every field one sanitised line; the partner's latest
    parsed points one ``- `` line each ("(none yet)" before it has any). One pass, so nothing
    a value contains is expanded again."""
    values = {
        "question": sanitise(question.text),
        "options": options_line(question),
        "answer": sanitise(question.key_text) if 0 <= question.key < question.n else "",
        "subject": sanitise(question.category or "") or NO_SUBJECT,
        "context": sanitise(question.context or "") or NO_CONTEXT,
        "strengths": points_block(partner.strengths if partner else None),
        "flaws": points_block(partner.flaws if partner else None),
    }
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


# --- the run -----------------------------------------------------------------------------------


@dataclass
class _Shared:
    stopped: str | None = None


def check_settings(settings: ReviewSettings) -> None:
    """ConfigError for settings no run can honour (an unknown mode, a cap below 3 in feedback)."""
    if settings.mode not in MODES:
        raise ConfigError(f"review.mode: {settings.mode!r} is not one of {', '.join(MODES)}")
    if settings.mode == "feedback" and settings.max_iterations < MIN_FEEDBACK_ITERATIONS:
        raise ConfigError(
            f"review.max_iterations: {settings.max_iterations} is too few for feedback mode:"
            f" convergence needs {MIN_FEEDBACK_ITERATIONS} ratings in a row (two agreements)"
        )


def judge_label(provider: Provider, n: int) -> str:
    if provider.simulated:
        seed = getattr(provider, "seed", 0)
        return f"SIMULATED reviewer {n} (text features, seed {seed})"
    return provider.label


class ReviewRun:
    """Review ``quiz`` (or ``questions`` of it) in ``settings.mode``.

    ``provider2`` is judge 2 in feedback mode (default: ``provider`` again). ``humans`` (question
    id → rater → criterion → score, see :func:`quiztui.formats.ratings.resolve`) adds the
    agreement statistics to the summary.
    """

    def __init__(
        self,
        quiz: Quiz,
        settings: ReviewSettings,
        provider: Provider,
        *,
        provider2: Provider | None = None,
        store: Store | None = None,
        questions: Sequence[Question] | None = None,
        humans: Mapping[str, Mapping[str, Mapping[str, int | None]]] | None = None,
        humans_source: str | None = None,
        prompt_dir: Any = None,
    ) -> None:
        check_settings(settings)
        self.quiz = quiz
        self.questions = list(quiz.questions if questions is None else questions)
        self.settings = settings
        self.provider = provider
        self.provider2 = (provider2 or provider) if settings.mode == "feedback" else None
        self.store = store
        self.humans = humans
        self.humans_source = humans_source
        self.prompt: PromptTemplate = load_prompt(PROMPTS[settings.mode], prompt_dir)
        self.run_id: int | None = None
        self._shared = _Shared()
        # Counts the replies asked again because they did not parse, over the run.
        self._asker = Asker(settings.temperature, settings.max_tokens, settings.max_reasks)

    @property
    def simulated(self) -> bool:
        return self.provider.simulated or bool(self.provider2 and self.provider2.simulated)

    @property
    def judge_label(self) -> str:
        return judge_label(self.provider, 1)

    @property
    def judge2_label(self) -> str | None:
        return judge_label(self.provider2, 2) if self.provider2 is not None else None

    def _providers(self) -> list[Provider]:
        out = [self.provider]
        if self.provider2 is not None and self.provider2 is not self.provider:
            out.append(self.provider2)
        return out

    async def events(self) -> AsyncIterator[ReviewEvent]:
        started = time.monotonic()
        usage0 = usage_mark(self._providers())
        life: RunLifecycle[ReviewEvent, ReviewStore] = RunLifecycle(
            self.store.reviews if self.store is not None else None, record=_record
        )
        self.run_id = life.start(self._create_run)
        yield ReviewStarted(
            self.run_id,
            self.settings.mode,
            len(self.questions),
            self.judge_label,
            self.judge2_label,
            self.simulated,
            self.quiz.source_path,
            self._max_iterations,
        )
        outcomes: dict[str, ReviewOutcome] = {}
        tally = ReviewTally()
        async with life.stream(self._review_all) as events:
            async for event in events:
                if isinstance(event, QuestionReviewed):
                    outcomes[event.question.id] = event.outcome
                    tally.add(event.outcome, self.settings.low_score)
                yield event
        summary = self._summary(tally, outcomes, usage0, time.monotonic() - started)
        life.finish(FAILED if summary.stopped else FINISHED, summary_dict(summary))
        yield ReviewFinished(self.run_id, summary)

    @property
    def _max_iterations(self) -> int:
        return self.settings.max_iterations if self.settings.mode == "feedback" else 1

    def _create_run(self, reviews: ReviewStore) -> int:
        s = self.settings
        return reviews.create_run(
            quiz=self.quiz,
            mode=s.mode,
            max_iterations=self._max_iterations,
            provider=self.provider.name,
            model=self.provider.model,
            judge_label=self.judge_label,
            model2=self.provider2.model if self.provider2 else None,
            judge2_label=self.judge2_label,
            simulated=self.simulated,
            prompt_hash=self.prompt.hash,
            params={
                "max_reasks": s.max_reasks,
                "temperature": s.temperature,
                "low_score": s.low_score,
                "questions": len(self.questions),
                "humans": self.humans_source,
            },
        )

    async def _review_all(self, emit: Emit[ReviewEvent]) -> None:
        sem = asyncio.Semaphore(max(1, self.settings.concurrency))
        await asyncio.gather(
            *(self._review_one(p, q, sem, emit) for p, q in enumerate(self.questions))
        )

    async def _review_one(
        self, position: int, question: Question, sem: asyncio.Semaphore, emit: Emit[ReviewEvent]
    ) -> None:
        async with sem:
            if self._shared.stopped:
                outcome = self._not_reviewed(question, (), self._shared.stopped)
            else:
                outcome = await self._review(question, emit)
        rewrite = needs_rewrite(outcome.scores, self.settings.low_score)
        emit(QuestionReviewed(position, question, outcome, rewrite))

    def _not_reviewed(
        self, question: Question, iterations: tuple[Iteration, ...], why: str
    ) -> ReviewOutcome:
        converged = False if self.settings.mode == "feedback" else None
        return ReviewOutcome(
            question.id,
            self.settings.mode,
            None,
            iterations,
            converged,
            None,
            f"not reviewed: {why}",
        )

    async def _review(
        self, question: Question, emit: Callable[[ReviewEvent], None]
    ) -> ReviewOutcome:
        """One question's loop: one rating (direct) or the alternating judges (feedback)."""
        s = self.settings
        feedback = s.mode == "feedback"
        cap = s.max_iterations if feedback else 1
        latest: dict[int, Review] = {}
        done: list[Iteration] = []
        trajectory: list[Scores | None] = []
        for number in range(1, cap + 1):
            if self._shared.stopped:
                break
            judge = next_judge(number) if feedback else 1
            provider = (
                self.provider2 if judge == 2 and self.provider2 is not None else self.provider
            )
            user = render(self.prompt.user, question, latest.get(3 - judge))
            try:
                asked = await self._ask(provider, question, number, judge, user, emit)
            except RunStopped as stop:
                self._shared.stopped = self._shared.stopped or str(stop)
                break
            review = asked.value
            iteration = Iteration(
                number=number,
                judge=judge,
                model=provider.model,
                scores=review.scores if review else None,
                strengths=review.strengths if review else (),
                flaws=review.flaws if review else (),
                reply=asked.reply,
                unparsed=None if review else asked.reason,
                failed=asked.failed,
                attempts=asked.attempts,
                tokens_in=asked.tokens_in,
                tokens_out=asked.tokens_out,
            )
            done.append(iteration)
            trajectory.append(iteration.scores)
            emit(IterationDone(question.id, iteration))
            if review is not None:
                latest[judge] = review
            if asked.failed or (feedback and converged_at(trajectory) is not None):
                break
        return self._outcome(question, tuple(done), trajectory)

    def _outcome(
        self, question: Question, done: tuple[Iteration, ...], trajectory: list[Scores | None]
    ) -> ReviewOutcome:
        feedback = self.settings.mode == "feedback"
        if not done:
            return self._not_reviewed(question, done, self._shared.stopped or "no rating was made")
        at = converged_at(trajectory) if feedback else None
        scores = final_scores(trajectory)
        converged = (at is not None) if feedback else None
        unscored = None
        if scores is None:
            reasons = [it.unparsed for it in done if it.unparsed]
            unscored = f"no rating parsed in {len(done)} iteration(s)"
            if reasons:
                unscored += f"; last: {reasons[-1]}"
            if self._shared.stopped:
                unscored += f"; stopped: {self._shared.stopped}"
        return ReviewOutcome(question.id, self.settings.mode, scores, done, converged, at, unscored)

    async def _ask(
        self,
        provider: Provider,
        question: Question,
        number: int,
        judge: int,
        user: str,
        emit: Callable[[ReviewEvent], None],
    ) -> Asked[Review]:
        """Ask until the reply parses (1 + max_reasks tries); else the reason, never scores."""

        def on_retry(notice: RetryNotice) -> None:
            emit(
                ReviewRetried(
                    question.id, number, judge, notice.attempt, notice.error, notice.delay
                )
            )

        def on_text(text: str) -> None:
            emit(ReviewTextReceived(question.id, number, judge, text))

        return await self._asker.ask(
            provider,
            self.prompt.system,
            user,
            parse_review,
            on_retry=on_retry,
            on_text=on_text if self.settings.stream else None,
        )

    def _summary(
        self,
        tally: ReviewTally,
        outcomes: Mapping[str, ReviewOutcome],
        usage0: tuple[int, int, int, int],
        seconds: float,
    ) -> ReviewSummary:
        u = usage_mark(self._providers())
        with_iterations = [o for o in outcomes.values() if o.iterations]
        agreement = None
        if self.humans is not None:
            agreement = human_agreement({q: o.scores for q, o in outcomes.items()}, self.humans)
        return ReviewSummary(
            mode=self.settings.mode,
            total=tally.total,
            scored=tally.scored,
            unscored=tally.total - tally.scored,
            converged=tally.converged,
            not_converged=tally.not_converged,
            mean_iterations=(
                sum(len(o.iterations) for o in with_iterations) / len(with_iterations)
                if with_iterations
                else None
            ),
            rewrite=tally.rewrite,
            low_score=self.settings.low_score,
            means=tally.means(),
            requests=u[0] - usage0[0],
            retries=u[1] - usage0[1],
            reasks=self._asker.reasks,
            tokens_in=u[2] - usage0[2],
            tokens_out=u[3] - usage0[3],
            seconds=seconds,
            stopped=self._shared.stopped,
            agreement=agreement,
            humans_source=self.humans_source,
        )


def _record(reviews: ReviewStore, run_id: int, event: ReviewEvent) -> None:
    """Each iteration and each reviewed question is stored as it arrives."""
    if isinstance(event, IterationDone):
        reviews.record_iteration(run_id, event.question_id, event.iteration)
    elif isinstance(event, QuestionReviewed):
        reviews.record_question(
            run_id, event.position, event.question, event.outcome, event.rewrite
        )


def summary_dict(summary: ReviewSummary) -> dict[str, Any]:
    """The summary as plain data (reports, the store)."""
    return asdict(summary)


def outcome_dict(question: Question, outcome: ReviewOutcome, rewrite: bool) -> dict[str, Any]:
    """One reviewed question with its whole trajectory, as plain data."""
    from quiztui.core.review import CRITERIA

    def scores(values: Scores | None) -> dict[str, int] | None:
        return None if values is None else dict(zip(CRITERIA, values, strict=True))

    return {
        "id": question.id,
        "question": question.text,
        "context": question.context,
        "mode": outcome.mode,
        "scores": scores(outcome.scores),
        "converged": outcome.converged,
        "converged_at": outcome.converged_at,
        "iterations": len(outcome.iterations),
        "rewrite": rewrite,
        "unscored": outcome.unscored,
        "trajectory": [
            {
                "iteration": it.number,
                "judge": it.judge,
                "model": it.model,
                "scores": scores(it.scores),
                "strengths": list(it.strengths),
                "flaws": list(it.flaws),
                "unparsed": it.unparsed,
                "failed": it.failed,
                "attempts": it.attempts,
                "tokens_in": it.tokens_in,
                "tokens_out": it.tokens_out,
                "reply": it.reply,
            }
            for it in outcome.iterations
        ],
    }


# --- text shared by the CLI reports and the Review screen ------------------------------------


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def scores_text(scores: Scores | None) -> str:
    return "—" if scores is None else " ".join(str(v) for v in scores)


def converged_text(outcome: ReviewOutcome) -> str:
    """ "yes @3", "no (5)" (stopped at the cap after 5), "—" in direct mode."""
    if outcome.converged is None:
        return "—"
    if outcome.converged:
        return f"yes @{outcome.converged_at}"
    return f"no ({len(outcome.iterations)})"


def summary_lines(s: ReviewSummary, md: bool = False) -> list[str]:
    """The run in a few lines: counts, mean final scores, usage, why it stopped."""
    from quiztui.core.review import CRITERIA

    bullet = "- " if md else ""
    head = f"{bullet}{s.mode}: {s.scored} of {s.total} questions rated, {s.unscored} unscored"
    if s.mode == "feedback":
        head += f" · converged {s.converged} · not converged {s.not_converged}"
        head += f" · mean iterations {_num(s.mean_iterations, 1)}"
    head += f" · rewrite {s.rewrite} (gram/appr/rel ≤ {s.low_score})"
    means = " · ".join(f"{c} {_num(s.means.get(c))}" for c in CRITERIA)
    lines = [
        head,
        f"{bullet}mean final scores: {means}",
        f"{bullet}requests {s.requests} · retries {s.retries} · re-asked {s.reasks}"
        f" · tokens {s.tokens_in}/{s.tokens_out} · {s.seconds:.1f}s",
    ]
    if s.stopped:
        lines.append(f"{bullet}STOPPED: {s.stopped}")
    return lines


AGREEMENT_NOTES = (
    "exact match: the judge's final score equals the mean human score rounded half up (2.5 → 3);"
    " Pearson r: judge's final score against the mean human score; Fleiss' κ: among the human"
    " raters, categories 1-5.",
    "paper: the MIRROR paper's published figures for GPT-4 on its own data (EduProbe and"
    " SciQ, three educators) — Table 9 exact match, direct approach, and the educators' Fleiss' κ;"
    " not figures for this quiz. Its Pearson r values (Tables 3, 7, 8) are not in the text we have.",
)


def agreement_rows(a: HumanAgreement) -> list[dict[str, str]]:
    """The seed's Tables 3 and 9 in form, this run beside the paper's GPT-4 figures."""
    from quiztui.core.review import PAPER_EXACT_MATCH_DIRECT, PAPER_EXPERT_KAPPA

    return [
        {
            "criterion": c.criterion,
            "n": str(c.n),
            "judge mean": _num(c.judge_mean),
            "human mean": _num(c.human_mean),
            "Pearson r": _num(c.pearson),
            "exact match": _pct(c.exact_match),
            "Fleiss κ (humans)": _num(c.fleiss_kappa),
            "paper exact (GPT-4 direct)": f"{PAPER_EXACT_MATCH_DIRECT[c.criterion]:.0f}%",
            "paper κ (experts)": f"{PAPER_EXPERT_KAPPA[c.criterion]:.2f}",
        }
        for c in a.criteria
    ]


__all__ = [
    "IterationDone",
    "QuestionReviewed",
    "ReviewEvent",
    "ReviewFinished",
    "ReviewRetried",
    "ReviewRun",
    "ReviewSettings",
    "ReviewStarted",
    "ReviewSummary",
    "ReviewTextReceived",
    "agreement_rows",
    "check_settings",
    "converged_text",
    "outcome_dict",
    "render",
    "scores_text",
    "summary_dict",
    "summary_lines",
]
