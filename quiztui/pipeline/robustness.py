"""Robustness runs (MultiQ&A, seed 002): rewrite each question v ways, answer every form apart.

``RobustnessRun.events()`` yields, as facts happen: ``RobustnessStarted``, ``FormsWritten`` (the
rewriter's forms for a question), ``FormAnswered`` (one per answer request: answered, refused,
filtered, unparsed, failed or not asked), ``RobustnessRetried``, ``QuestionMeasured`` (the
question's per-question metrics and fragility flag) and ``RobustnessFinished`` (the quiz's
metrics, counts by answer status and token usage per stage). The TUI and the CLI consume these
events alike.

Per question: one rewrite request (``prompts/robust_rewrite.md``, temperature 1.0) gives v forms
besides the identity q0; then v + 1 answer requests, each a fresh single-turn conversation, answer
the forms — multiple choice with the quiz's options unchanged, or abstractive (the question
alone). Refusals and content-filter stops are recorded as such, never as wrong answers, and never
asked again; an unparseable reply is asked again up to ``max_reasks`` times. An authentication
failure stops the run; every question not yet measured is recorded as such.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any, TypeVar

import numpy as np

from quiztui.core import robustness as metrics
from quiztui.core.paraphrase import (
    ANSWERED,
    FAILED,
    NOT_ASKED,
    STATUSES,
    UNPARSED,
    FormAnswer,
    Grouping,
    QuestionRobustness,
    StageUsage,
    fragility,
    group_by_similarity,
    group_by_text,
    parse_choice,
    parse_open,
    parse_rewrites,
    refusal_status,
    render_answer,
    render_rewrite,
)
from quiztui.core.question_mode import LETTERS
from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuiztuiError
from quiztui.pipeline.asking import Asked, Asker, RunStopped
from quiztui.pipeline.lifecycle import FAILED as RUN_FAILED
from quiztui.pipeline.lifecycle import FINISHED, Emit, RunLifecycle
from quiztui.pipeline.prompts import PromptTemplate, load_prompt
from quiztui.providers.base import ChatResult, Provider, RetryNotice
from quiztui.store import Store
from quiztui.store.robustness import RobustnessStore

T = TypeVar("T")

PROMPTS = {
    "rewrite": "robust_rewrite",
    "multiple-choice": "robust_answer_choice",
    "abstractive": "robust_answer_open",
}


@dataclass(frozen=True, slots=True)
class RobustnessSettings:
    variants: int = 5
    format: str = "multiple-choice"  # or "abstractive"
    temperature: float = 1.0
    concurrency: int = 16
    max_reasks: int = 1
    max_tokens: int | None = None
    match: str = "normalised"  # abstractive grouping: "normalised" or "embedding"
    similarity: float = 0.8
    fragile_certainty: float = 0.6


# --- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RobustnessStarted:
    run_id: int | None
    questions: int
    variants: int
    format: str
    judge_label: str
    simulated: bool
    source: str | None


@dataclass(frozen=True, slots=True)
class FormsWritten:
    position: int
    question_id: str
    forms: tuple[str, ...]  # q0 first
    note: str  # why fewer than v rewrites, else ""


@dataclass(frozen=True, slots=True)
class FormAnswered:
    position: int
    question_id: str
    answer: FormAnswer  # for abstractive answers, ``code`` is set when the question is measured


@dataclass(frozen=True, slots=True)
class RobustnessRetried:
    position: int
    question_id: str
    stage: str  # "rewrite" or "answer"
    attempt: int
    error: str
    delay: float


@dataclass(frozen=True, slots=True)
class QuestionMeasured:
    position: int
    result: QuestionRobustness


@dataclass(frozen=True, slots=True)
class RobustnessSummary:
    questions: int
    measured: int  # questions with at least one answer
    fragile: int
    statuses: dict[str, int]  # answer requests by status
    quiz: metrics.RobustnessSummary
    rewrite: StageUsage
    answer: StageUsage
    retries: int
    reasks: int
    seconds: float
    stopped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["quiz"] = {k: _plain(v) for k, v in out["quiz"].items()}
        out["quiz"]["ordering_holds"] = self.quiz.ordering_holds
        return out


@dataclass(frozen=True, slots=True)
class RobustnessFinished:
    run_id: int | None
    summary: RobustnessSummary


RobustnessEvent = (
    RobustnessStarted
    | FormsWritten
    | FormAnswered
    | RobustnessRetried
    | QuestionMeasured
    | RobustnessFinished
)


# --- the run -----------------------------------------------------------------------------------


@dataclass
class _Shared:
    stopped: str | None = None  # why the run stopped early (authentication failed)


class RobustnessRun:
    """Measure how every question of ``quiz`` stands up to being asked in other words."""

    def __init__(
        self,
        quiz: Quiz,
        settings: RobustnessSettings,
        provider: Provider,
        *,
        store: Store | None = None,
        prompt_dir: Any = None,
        embedder: Any = None,
    ) -> None:
        if settings.format not in ("multiple-choice", "abstractive"):
            raise QuiztuiError(f"unknown robustness format {settings.format!r}")
        if settings.variants < 1:
            raise QuiztuiError("robustness needs at least one rewrite (variants >= 1)")
        self.quiz = quiz
        self.settings = settings
        self.provider = provider
        self.store = store
        self.rewrite_prompt = load_prompt(PROMPTS["rewrite"], prompt_dir)
        self.answer_prompt = load_prompt(PROMPTS[settings.format], prompt_dir)
        self.embedder = embedder
        if settings.format == "abstractive" and settings.match == "embedding" and embedder is None:
            from quiztui.embed import load_embedder

            self.embedder = load_embedder()  # raises EmbedExtraMissing with the install line
        self.run_id: int | None = None

    @property
    def judge_label(self) -> str:
        if self.provider.simulated:
            return "SIMULATED rewriter and answerers (robustness oracle)"
        return self.provider.label

    @property
    def prompt_hash(self) -> str:
        return f"{self.rewrite_prompt.hash}+{self.answer_prompt.hash}"

    async def events(self) -> AsyncIterator[RobustnessEvent]:
        started = time.monotonic()
        s = self.settings
        life: RunLifecycle[RobustnessEvent, RobustnessStore] = RunLifecycle(
            self.store.robustness if self.store is not None else None, record=_record
        )
        self.run_id = life.start(self._create_run)
        yield RobustnessStarted(
            self.run_id,
            len(self.quiz.questions),
            s.variants,
            s.format,
            self.judge_label,
            self.provider.simulated,
            self.quiz.source_path,
        )
        results: dict[int, QuestionRobustness] = {}
        shared = _Shared()
        self._asker = Asker(
            s.temperature,
            s.max_tokens,
            s.max_reasks,
            stop_statuses=(401, 403),
            limit=asyncio.Semaphore(max(1, s.concurrency)),
            stopped=lambda: shared.stopped,
        )
        async with life.stream(partial(self._measure_all, shared)) as events:
            async for event in events:
                if isinstance(event, QuestionMeasured):
                    results[event.position] = event.result
                yield event
        ordered = [results[i] for i in sorted(results)]
        summary = summarise(
            ordered,
            s.variants,
            time.monotonic() - started,
            retries=self._asker.retries,
            reasks=self._asker.reasks,
            stopped=shared.stopped,
        )
        life.finish(RUN_FAILED if shared.stopped else FINISHED, summary.as_dict())
        yield RobustnessFinished(self.run_id, summary)

    def _create_run(self, table: RobustnessStore) -> int:
        s = self.settings
        return table.create_run(
            quiz=self.quiz,
            format=s.format,
            variants=s.variants,
            provider=self.provider.name,
            model=self.provider.model,
            judge_label=self.judge_label,
            simulated=self.provider.simulated,
            prompt_hash=self.prompt_hash,
            params={k: v for k, v in asdict(s).items() if k != "concurrency"}
            | {"questions": len(self.quiz.questions)},
        )

    async def _measure_all(self, shared: _Shared, emit: Emit[RobustnessEvent]) -> None:
        await asyncio.gather(
            *(self._measure_one(i, q, shared, emit) for i, q in enumerate(self.quiz.questions))
        )

    async def _measure_one(
        self, position: int, question: Question, shared: _Shared, emit: Emit[RobustnessEvent]
    ) -> None:
        try:
            if shared.stopped:
                raise RunStopped(shared.stopped)
            result = await self._measure(position, question, emit)
        except RunStopped as stop:
            shared.stopped = shared.stopped or str(stop)
            result = self._not_measured(question, f"not measured: {shared.stopped}")
        emit(QuestionMeasured(position, result))

    def _not_measured(self, question: Question, reason: str) -> QuestionRobustness:
        slots = self.settings.variants + 1
        answers = tuple(FormAnswer(i, NOT_ASKED, reason=reason) for i in range(slots))
        return self._result(question, (question.text,), "", reason, answers, StageUsage())

    async def _measure(
        self, position: int, question: Question, emit: Emit[RobustnessEvent]
    ) -> QuestionRobustness:
        """Rewrite the question, answer every form apart, and measure."""
        s = self.settings
        options = question.options if s.format == "multiple-choice" else ()
        user = render_rewrite(self.rewrite_prompt.user, question.text, s.variants, options)

        def parse(reply: str) -> list[str]:
            return parse_rewrites(reply, s.variants, question.text)

        asked = await self._ask(
            position, question.id, "rewrite", self.rewrite_prompt, user, parse, emit
        )
        rewrites = asked.value or []
        note = ""
        if asked.value is None:
            note = f"no rewrites: {asked.reason}"
        elif len(rewrites) < s.variants:
            note = f"{len(rewrites)} of {s.variants} rewrites came back"
        forms = (question.text, *rewrites)
        emit(FormsWritten(position, question.id, forms, note))
        answered = await asyncio.gather(
            *(
                self._answer(position, question.id, forms, form, options, note, emit)
                for form in range(s.variants + 1)
            )
        )
        answers = tuple(a for a, _ in answered)
        answer_usage = sum((u for _, u in answered), StageUsage())
        result = self._result(question, forms, asked.reply, note, answers, _usage(asked))
        return replace(result, answer_usage=answer_usage)

    async def _answer(
        self,
        position: int,
        question_id: str,
        forms: tuple[str, ...],
        form: int,
        options: tuple[str, ...],
        note: str,
        emit: Emit[RobustnessEvent],
    ) -> tuple[FormAnswer, StageUsage]:
        """One form answered in a fresh conversation (not asked when its rewrite is missing)."""
        if form >= len(forms):
            return FormAnswer(form, NOT_ASKED, reason=note or "no such rewrite"), StageUsage()
        prompt = render_answer(self.answer_prompt.user, forms[form], options)
        parse: Callable[[str], Any] = (
            (lambda r: parse_choice(r, options)) if options else parse_open
        )
        got = await self._ask(
            position, question_id, "answer", self.answer_prompt, prompt, parse, emit
        )
        if got.value is None:
            result = FormAnswer(form, _status(got), reason=got.reason, reply=got.reply)
        elif options:
            code = int(got.value)
            result = FormAnswer(form, ANSWERED, LETTERS[code], code, reply=got.reply)
        else:
            result = FormAnswer(form, ANSWERED, str(got.value), -1, reply=got.reply)
        result = replace(result, attempts=got.attempts)
        emit(FormAnswered(position, question_id, result))
        return result, _usage(got)

    def _result(
        self,
        question: Question,
        forms: tuple[str, ...],
        rewrite_reply: str,
        note: str,
        answers: tuple[FormAnswer, ...],
        rewrite_usage: StageUsage,
    ) -> QuestionRobustness:
        s = self.settings
        if s.format == "multiple-choice":
            categories = tuple(LETTERS[: question.n])
            correct, k = question.key, question.n
        else:
            grouping = self._group(question, answers)
            answers = tuple(
                replace(a, code=c) if a.status == ANSWERED else a
                for a, c in zip(answers, grouping.codes, strict=True)
            )
            categories, correct = grouping.labels, grouping.correct
            k = s.variants + 1  # at most v + 1 distinct answers: the certainty's H_max
        codes = [a.code if a.status == ANSWERED else metrics.MISSING for a in answers]
        row = metrics.question_row(codes, correct, k)
        certainty = row.get("certainty")
        fragile, why = fragility(
            answers,
            categories,
            correct,
            float(certainty) if certainty is not None else None,
            s.fragile_certainty,
        )
        return QuestionRobustness(
            question_id=question.id,
            text=question.text,
            forms=forms,
            rewrite_reply=rewrite_reply,
            rewrite_note=note,
            answers=answers,
            categories=categories,
            correct=correct,
            k=k,
            metrics=row,
            fragile=fragile,
            fragile_reason=why,
            rewrite_usage=rewrite_usage,
        )

    def _group(self, question: Question, answers: Sequence[FormAnswer]) -> Grouping:
        texts = [a.answer if a.status == ANSWERED else None for a in answers]
        references = [question.key_text]
        if self.embedder is None:
            return group_by_text(texts, references)
        given = [t for t in texts if t is not None]
        if not given:
            return group_by_text(texts, references)
        vectors = np.asarray(self.embedder.encode([*given, *references]), dtype=np.float64)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        sims = vectors[: len(given)] @ vectors[: len(given)].T
        to_ref = (vectors[: len(given)] @ vectors[len(given) :].T).max(axis=1)
        where = [i for i, t in enumerate(texts) if t is not None]
        full = [[0.0] * len(texts) for _ in texts]
        ref = [0.0] * len(texts)
        for a, i in enumerate(where):
            ref[i] = float(to_ref[a])
            for b, j in enumerate(where):
                full[i][j] = float(sims[a, b])
        return group_by_similarity(texts, full, ref, self.settings.similarity)

    async def _ask(
        self,
        position: int,
        question_id: str,
        stage: str,
        prompt: PromptTemplate,
        user: str,
        parse: Callable[[str], T],
        emit: Emit[RobustnessEvent],
    ) -> Asked[T]:
        """Ask until the reply parses (1 + max_reasks tries); a refusal ends it at once."""

        def on_retry(notice: RetryNotice) -> None:
            emit(
                RobustnessRetried(
                    position, question_id, stage, notice.attempt, notice.error, notice.delay
                )
            )

        return await self._asker.ask(
            self.provider, prompt.system, user, parse, on_retry=on_retry, declined=_declined
        )


def _declined(result: ChatResult) -> tuple[str, str] | None:
    """A refusal or a content-filter stop: its answer status and why; else None."""
    refused = refusal_status(result.text, result.finish_reason, result.refusal)
    if refused is None:
        return None
    if result.finish_reason == "content_filter":
        return refused, "the provider's content filter stopped the reply"
    return refused, f"the model declined: {_clip(result.text or (result.refusal or ''))}"


def _status(asked: Asked[Any]) -> str:
    """The answer status of one ask."""
    if asked.value is not None:
        return ANSWERED
    if asked.declined is not None:
        return asked.declined
    return FAILED if asked.failed else UNPARSED


def _usage(asked: Asked[Any]) -> StageUsage:
    return StageUsage(asked.replies, asked.tokens_in, asked.tokens_out)


def _record(table: RobustnessStore, run_id: int, event: RobustnessEvent) -> None:
    if isinstance(event, QuestionMeasured):
        table.record(run_id, event.position, event.result)


def summarise(
    results: Sequence[QuestionRobustness],
    variants: int,
    seconds: float,
    *,
    retries: int = 0,
    reasks: int = 0,
    stopped: str | None = None,
) -> RobustnessSummary:
    """The quiz's metrics (vectorised over questions × raters) and the run's counts."""
    raters = variants + 1
    n = len(results)
    answers = np.full((n, raters), metrics.MISSING, dtype=np.int64)
    correct = np.full(n, -1, dtype=np.int64)
    k = np.ones(n, dtype=np.int64)
    statuses = dict.fromkeys(STATUSES, 0)
    for j, r in enumerate(results):
        for a in r.answers[:raters]:
            statuses[a.status] = statuses.get(a.status, 0) + 1
            if a.status == ANSWERED and a.code >= 0:
                answers[j, a.form] = a.code
        correct[j], k[j] = r.correct, max(1, r.k)
    quiz = metrics.summarise(answers, correct, k)
    return RobustnessSummary(
        questions=n,
        measured=sum(any(a.status == ANSWERED for a in r.answers) for r in results),
        fragile=sum(r.fragile for r in results),
        statuses=statuses,
        quiz=quiz,
        rewrite=sum((r.rewrite_usage for r in results), StageUsage()),
        answer=sum((r.answer_usage for r in results), StageUsage()),
        retries=retries,
        reasks=reasks,
        seconds=seconds,
        stopped=stopped,
    )


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    if isinstance(value, np.generic):
        return _plain(value.item())
    return value


def _clip(text: str, n: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"
