"""Question–answer pairs from a document (seed 001): ``GenerateRun.events()``.

The document is cut into chunks; each chunk is sent with the QA-generation prompt, chunks running
concurrently (bounded). Replies are parsed leniently (code fences, prose around the JSON, a
single object, "None"); a reply with nothing usable makes a *failed chunk* with its reason, never
a silent gap. Identical questions from different chunks are kept once. Every Context is then
located in the document (:mod:`quiztui.core.locate`). Optional stages, in batches of pairs:
rephrasing (seed prompt 2), candidate answers (seed prompt 4) and distractors (three wrong options,
so the pairs can be vetted as multiple choice). The events below are the whole interface: the CLI
(and any other front end) only consumes them.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from quiztui.core.locate import DEFAULT_MIN_RATIO, Location
from quiztui.core.markers import DONT_KNOW, neutralise_markers
from quiztui.core.qa_replies import (
    QAItem,
    ReplyError,
    as_items,
    extract_json,
    is_dont_know,
    is_none,
    item_field,
    parse_qa_reply,
)
from quiztui.errors import QuiztuiError
from quiztui.formats._validate import normalise as loose
from quiztui.formats._validate import shuffled_order
from quiztui.formats.document import DEFAULT_CHUNK_CHARS, Chunk, Document, chunk_document
from quiztui.pipeline.lifecycle import Emit, RunLifecycle, RunTable
from quiztui.pipeline.prompts import PromptTemplate
from quiztui.providers.base import (
    ChatRequest,
    Provider,
    RequestFailed,
    RetryNotice,
    StreamInterrupted,
)

STAGES = ("rephrase", "candidates", "distractors")
PROMPT_NAMES = {
    "qa": "generate_qa",
    "rephrase": "rephrase_qa",
    "candidates": "candidate_answers",
    "distractors": "distractors",
}

# -- settings, results, events -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GenerateSettings:
    subject: str
    chunk_chars: int = DEFAULT_CHUNK_CHARS
    min_ratio: float = DEFAULT_MIN_RATIO
    rephrase: bool = False
    candidates: bool = False
    distractors: bool = False
    concurrency: int = 4  # chunk (and batch) requests in flight
    batch_size: int = 20  # pairs per rephrase / candidates / distractors request
    temperature: float = 0.0
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class GeneratedPair:
    number: int  # 1-based position in the output
    chunk_no: int
    question: str
    answer: str
    context: str
    location: Location
    rephrased_question: str | None = None
    rephrased_answer: str | None = None
    candidate: str | None = None
    distractors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GenerateStarted:
    document: str
    kind: str  # "pdf" or "text"
    pages: int | None
    chars: int
    chunks: int
    subject: str
    judge_label: str
    simulated: bool
    stages: tuple[str, ...]  # the optional stages asked for, in order


@dataclass(frozen=True, slots=True)
class RequestRetried:
    stage: str  # "qa" or one of STAGES
    batch_no: int  # the chunk number for "qa"
    attempt: int
    error: str
    delay: float


@dataclass(frozen=True, slots=True)
class ChunkGenerated:
    chunk_no: int
    pairs: int  # usable pairs in the reply (before removing duplicates)
    none_skipped: int  # items whose question was "None" (or a reply that was just "None")
    incomplete: int  # items without a question or answer
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True, slots=True)
class ChunkFailed:
    chunk_no: int
    reason: str  # one line, e.g. "reply had no JSON: 'Hard to say…'"
    start: int  # the chunk's character range in the document
    end: int
    pages: tuple[int, int] | None  # first and last page of the chunk (PDF)


@dataclass(frozen=True, slots=True)
class PairLocated:
    pair: GeneratedPair


@dataclass(frozen=True, slots=True)
class StageFinished:
    stage: str  # one of STAGES
    done: int  # pairs that got a result
    failed: int  # pairs that did not
    reasons: tuple[str, ...]  # why, one per failed request or pair (first few)


@dataclass(frozen=True, slots=True)
class GenerateFailed:
    reason: str


@dataclass(frozen=True, slots=True)
class GenerateSummary:
    document: str
    subject: str
    chunks: int
    pairs: tuple[GeneratedPair, ...]
    failed_chunks: tuple[ChunkFailed, ...]
    none_skipped: int
    incomplete: int
    duplicates: int
    stages: tuple[StageFinished, ...]
    requests: int
    retries: int
    tokens_in: int
    tokens_out: int
    elapsed: float
    min_ratio: float

    def count(self, status: str) -> int:
        return sum(p.location.status == status for p in self.pairs)

    @property
    def dont_know(self) -> int:
        return sum(p.candidate is not None and is_dont_know(p.candidate) for p in self.pairs)


@dataclass(frozen=True, slots=True)
class GenerateFinished:
    summary: GenerateSummary


GenerateEvent = (
    GenerateStarted
    | RequestRetried
    | ChunkGenerated
    | ChunkFailed
    | PairLocated
    | StageFinished
    | GenerateFailed
    | GenerateFinished
)

# -- rendering prompts ---------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{(subject|text|items)\}")


def render(template: PromptTemplate, **values: str) -> tuple[str, str]:
    """(system, user) with placeholders filled in one pass: inserted text is not re-scanned."""

    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group()), text)

    return fill(template.system), fill(template.user)


def _items_json(rows: Iterable[dict[str, Any]]) -> str:
    return "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n]"


# -- the run -------------------------------------------------------------------------------------


@dataclass
class _Tally:
    requests: int = 0
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass
class _StageResult:
    values: dict[int, Any] = field(default_factory=dict)  # pair index -> parsed result
    reasons: list[str] = field(default_factory=list)


class GenerateRun:
    def __init__(
        self,
        document: Document,
        provider: Provider,
        prompts: dict[str, PromptTemplate],
        settings: GenerateSettings,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        missing = [PROMPT_NAMES[k] for k in ("qa", *self._stages_of(settings)) if k not in prompts]
        if missing:
            raise QuiztuiError(f"generate: prompt(s) not loaded: {', '.join(missing)}")
        self.document = document
        self.provider = provider
        self.prompts = prompts
        self.settings = settings
        self.clock = clock
        self.chunks = chunk_document(document, settings.chunk_chars)
        self._tally = _Tally()

    @staticmethod
    def _stages_of(settings: GenerateSettings) -> tuple[str, ...]:
        return tuple(s for s in STAGES if getattr(settings, s))

    async def _ask(
        self,
        stage: str,
        batch_no: int,
        template: PromptTemplate,
        emit: Callable[[GenerateEvent], None],
        **values: str,
    ) -> tuple[str, int, int]:
        """(reply text, tokens in, tokens out); raises ReplyError on a failed request."""
        system, user = render(template, subject=neutralise_markers(self.settings.subject), **values)

        def on_retry(notice: RetryNotice) -> None:
            self._tally.retries += 1
            emit(RequestRetried(stage, batch_no, notice.attempt, notice.error, notice.delay))

        request = ChatRequest(
            messages=(("system", system), ("user", user)),
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
        )
        self._tally.requests += 1
        try:
            result = await self.provider.complete(request, on_retry=on_retry)
        except StreamInterrupted as exc:
            raise ReplyError(f"reply stream broke: {_one_line(exc)}") from None
        except RequestFailed as exc:
            raise ReplyError(f"request failed: {_one_line(exc)}") from None
        self._tally.tokens_in += result.tokens_in
        self._tally.tokens_out += result.tokens_out
        if result.finish_reason not in (None, "stop", "length") and not result.text.strip():
            raise ReplyError(f"no reply (finish_reason={result.finish_reason})")
        return result.text, result.tokens_in, result.tokens_out

    async def _bounded(self, jobs: Sequence[Callable[[], Any]]) -> list[Any]:
        sem = asyncio.Semaphore(max(1, self.settings.concurrency))

        async def one(job: Callable[[], Any]) -> Any:
            async with sem:
                return await job()

        return list(await asyncio.gather(*(one(j) for j in jobs)))

    # -- chunks --------------------------------------------------------------------------------

    def _chunk_failed(self, chunk: Chunk, reason: str) -> ChunkFailed:
        pages = None
        if self.document.page_starts:
            first, _ = self.document.position(chunk.start)
            last, _ = self.document.position(max(chunk.start, chunk.end - 1))
            pages = (first or 1, last or 1)
        return ChunkFailed(chunk.number, reason, chunk.start, chunk.end, pages)

    async def _generate_chunk(
        self, chunk: Chunk, emit: Callable[[GenerateEvent], None]
    ) -> tuple[list[QAItem], ChunkGenerated | ChunkFailed]:
        try:
            text, t_in, t_out = await self._ask(
                "qa", chunk.number, self.prompts["qa"], emit, text=neutralise_markers(chunk.text)
            )
            pairs, nones, incomplete = parse_qa_reply(text)
        except ReplyError as exc:
            failed = self._chunk_failed(chunk, str(exc))
            emit(failed)
            return [], failed
        done = ChunkGenerated(chunk.number, len(pairs), nones, incomplete, t_in, t_out)
        emit(done)
        return pairs, done

    # -- optional stages -----------------------------------------------------------------------

    def _stage_rows(self, stage: str, pair: GeneratedPair, ident: int) -> dict[str, Any]:
        if stage == "rephrase":
            return {"id": ident, "Question": pair.question, "Answer": pair.answer}
        if stage == "candidates":
            return {"id": ident, "question": pair.question}
        return {"id": ident, "question": pair.question, "answer": pair.answer}

    def _stage_value(self, stage: str, item: dict[str, Any], pair: GeneratedPair) -> Any:
        """The usable result of one reply item, or None."""
        if stage == "rephrase":
            question, answer = item_field(item, "question"), item_field(item, "answer")
            return (question, answer or pair.answer) if question and not is_none(question) else None
        if stage == "candidates":
            return item_field(item, "answer", "candidate", "response")
        options = next(
            (v for k, v in item.items() if str(k).casefold() in ("distractors", "options")), None
        )
        if not isinstance(options, list):
            return None
        kept: list[str] = []
        seen = {loose(pair.answer)}
        for option in options:
            text = f"{option:g}" if isinstance(option, float) else str(option).strip()
            if text and loose(text) not in seen and not isinstance(option, dict | list):
                seen.add(loose(text))
                kept.append(text)
        return tuple(kept[:3]) or None

    async def _stage_batch(
        self,
        stage: str,
        batch_no: int,
        indexes: list[int],
        pairs: list[GeneratedPair],
        result: _StageResult,
        emit: Callable[[GenerateEvent], None],
    ) -> None:
        rows = [
            {
                k: neutralise_markers(v) if isinstance(v, str) else v
                for k, v in self._stage_rows(stage, pairs[i], n).items()
            }
            for n, i in enumerate(indexes, 1)
        ]
        try:
            text, _, _ = await self._ask(
                stage, batch_no, self.prompts[stage], emit, items=_items_json(rows)
            )
            items = as_items(extract_json(text))
        except ReplyError as exc:
            result.reasons.append(f"batch {batch_no}: {exc}")
            return
        by_id: dict[int, dict[str, Any]] = {}
        for item in items:
            ident = item.get("id")
            if isinstance(ident, str) and ident.strip().isdigit():
                ident = int(ident)
            if isinstance(ident, int) and not isinstance(ident, bool):
                by_id.setdefault(ident, item)
        if not by_id and len(items) == len(indexes):
            by_id = {n: item for n, item in enumerate(items, 1)}
        for n, i in enumerate(indexes, 1):
            answer = by_id.get(n)
            value = None if answer is None else self._stage_value(stage, answer, pairs[i])
            if value is None:
                what = "missing" if answer is None else "unusable"
                result.reasons.append(f"batch {batch_no}: pair {pairs[i].number}: answer {what}")
            else:
                result.values[i] = value

    async def _run_stage(
        self, stage: str, pairs: list[GeneratedPair], emit: Callable[[GenerateEvent], None]
    ) -> StageFinished:
        result = _StageResult()
        todo = list(range(len(pairs)))
        rounds = 2 if stage == "distractors" else 1  # missing distractors are asked again once
        batch_no = 0
        for _ in range(rounds):
            if not todo:
                break
            size = max(1, self.settings.batch_size)
            jobs = []
            for start in range(0, len(todo), size):
                batch_no += 1
                part = todo[start : start + size]
                jobs.append(
                    lambda b=batch_no, part=part: self._stage_batch(
                        stage, b, part, pairs, result, emit
                    )
                )
            await self._bounded(jobs)
            todo = [i for i in todo if i not in result.values]
        for i, value in result.values.items():
            pairs[i] = _apply(stage, pairs[i], value)
        return StageFinished(stage, len(result.values), len(todo), tuple(result.reasons[:10]))

    # -- the event stream ----------------------------------------------------------------------

    async def events(self) -> AsyncIterator[GenerateEvent]:
        started = self.clock()
        stages = self._stages_of(self.settings)
        yield GenerateStarted(
            document=self.document.path,
            kind=self.document.kind,
            pages=self.document.pages,
            chars=len(self.document.text),
            chunks=len(self.chunks),
            subject=self.settings.subject,
            judge_label=self.provider.label,
            simulated=self.provider.simulated,
            stages=stages,
        )
        life: RunLifecycle[GenerateEvent, RunTable] = RunLifecycle()  # nothing stored
        outcomes: dict[int, tuple[list[QAItem], ChunkGenerated | ChunkFailed]] = {}
        locator_task = asyncio.create_task(
            asyncio.to_thread(self.document.locator, self.settings.min_ratio)
        )
        try:
            async with life.stream(partial(self._generate_chunks, outcomes)) as events:
                async for event in events:
                    yield event
        except BaseException:
            locator_task.cancel()
            await asyncio.gather(locator_task, return_exceptions=True)
            raise
        try:
            locator = await locator_task
        except Exception as exc:  # a bug, not a user error: report it as a failed run
            yield GenerateFailed(f"locating contexts failed: {_one_line(exc)}")
            return
        collected = _collect(outcomes)
        qas = collected.qas
        locations = await asyncio.to_thread(lambda: [locator.locate(qa.context) for _, qa in qas])
        pairs = [
            GeneratedPair(n, chunk_no, qa.question, qa.answer, qa.context, location)
            for n, ((chunk_no, qa), location) in enumerate(zip(qas, locations, strict=True), 1)
        ]
        for pair in pairs:
            yield PairLocated(pair)
        finished_stages: list[StageFinished] = []
        for stage in stages if pairs else ():
            async with life.stream(partial(self._stage_work, stage, pairs)) as events:
                async for event in events:
                    if isinstance(event, StageFinished):
                        finished_stages.append(event)
                    yield event
        yield GenerateFinished(self._summary(started, pairs, collected, finished_stages))

    async def _generate_chunks(
        self,
        outcomes: dict[int, tuple[list[QAItem], ChunkGenerated | ChunkFailed]],
        emit: Emit[GenerateEvent],
    ) -> None:
        jobs = [partial(self._generate_chunk, chunk, emit) for chunk in self.chunks]
        for chunk, outcome in zip(self.chunks, await self._bounded(jobs), strict=True):
            outcomes[chunk.number] = outcome

    async def _stage_work(
        self, stage: str, pairs: list[GeneratedPair], emit: Emit[GenerateEvent]
    ) -> None:
        """One optional stage; its StageFinished comes last."""
        emit(await self._run_stage(stage, pairs, emit))

    def _summary(
        self,
        started: float,
        pairs: list[GeneratedPair],
        collected: _Collected,
        stages: list[StageFinished],
    ) -> GenerateSummary:
        return GenerateSummary(
            document=self.document.path,
            subject=self.settings.subject,
            chunks=len(self.chunks),
            pairs=tuple(pairs),
            failed_chunks=tuple(collected.failed),
            none_skipped=collected.none_skipped,
            incomplete=collected.incomplete,
            duplicates=collected.duplicates,
            stages=tuple(stages),
            requests=self._tally.requests,
            retries=self._tally.retries,
            tokens_in=self._tally.tokens_in,
            tokens_out=self._tally.tokens_out,
            elapsed=self.clock() - started,
            min_ratio=self.settings.min_ratio,
        )


@dataclass
class _Collected:
    """The chunks' pairs in chunk order, each question once, and what was left out."""

    qas: list[tuple[int, QAItem]] = field(default_factory=list)  # (chunk number, pair)
    failed: list[ChunkFailed] = field(default_factory=list)
    duplicates: int = 0
    none_skipped: int = 0
    incomplete: int = 0


def _collect(outcomes: dict[int, tuple[list[QAItem], ChunkGenerated | ChunkFailed]]) -> _Collected:
    """Identical questions from different chunks are kept once (the first)."""
    out = _Collected()
    seen: set[str] = set()
    for number in sorted(outcomes):
        found, outcome = outcomes[number]
        if isinstance(outcome, ChunkFailed):
            out.failed.append(outcome)
            continue
        out.none_skipped += outcome.none_skipped
        out.incomplete += outcome.incomplete
        for qa in found:
            key = loose(qa.question)
            if key in seen:
                out.duplicates += 1
                continue
            seen.add(key)
            out.qas.append((number, qa))
    return out


def _apply(stage: str, pair: GeneratedPair, value: Any) -> GeneratedPair:
    if stage == "rephrase":
        question, answer = value
        return replace(pair, rephrased_question=question, rephrased_answer=answer)
    if stage == "candidates":
        return replace(pair, candidate=value)
    return replace(pair, distractors=tuple(value))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# -- the output file -----------------------------------------------------------------------------


def pair_item(pair: GeneratedPair, subject: str) -> dict[str, Any]:
    """One output object: read by ``grade`` (question/answer/candidate) and, with distractors,
    by the Quizaic reader (question/responses/correct) that ``vet`` uses."""
    loc = pair.location
    check: dict[str, Any] = {
        "status": loc.status,
        "ratio": round(loc.ratio, 3),
        "page": loc.page,
        "line": loc.line,
        "offset": loc.offset,
    }
    if loc.status != "exact":
        check["matched"] = loc.matched
    item: dict[str, Any] = {
        "question": pair.question,
        "answer": pair.answer,
        "context": pair.context,
        "context_check": check,
        "chunk": pair.chunk_no,
    }
    if pair.rephrased_question is not None:
        item["rephrased_question"] = pair.rephrased_question
        item["rephrased_answer"] = pair.rephrased_answer
    if pair.candidate is not None:
        item["candidate"] = pair.candidate
    if pair.distractors:
        options = [pair.answer, *pair.distractors]
        item["responses"] = [options[i] for i in shuffled_order(pair.question, len(options))]
        item["correct"] = pair.answer
        item["category"] = subject
    return item


__all__ = [
    "DONT_KNOW",
    "ChunkFailed",
    "ChunkGenerated",
    "GenerateEvent",
    "GenerateFailed",
    "GenerateFinished",
    "GenerateRun",
    "GenerateSettings",
    "GenerateStarted",
    "GenerateSummary",
    "GeneratedPair",
    "PairLocated",
    "ReplyError",
    "RequestRetried",
    "StageFinished",
    "extract_json",
    "pair_item",
    "parse_qa_reply",
]
