"""Grade runs: candidate answers graded against references, streamed as typed events.

``GradeRun.events()`` grades items concurrently and yields, as facts happen: ``GradeStarted``,
``GradeTextReceived`` (reply text as the judge writes it, for the live reasoning column),
``GradeRetried``, ``ItemGraded`` (one per item, scored or unscored with the reason) and
``GradeFinished``. ``BenchmarkRun`` grades a benchmark's train and test splits the same way, then
fits the monotone calibration and yields ``BenchmarkScored``. The TUI and the CLI consume these
events alike.

LLM graders send one item per request (fact scoring: one fact per request), so nothing in one
item can change another's score. A scored reply is cached in the store by the grader's identity
(provider, model, base URL, prompts, temperature, max tokens, logprobs) and the item, as vet
verdicts are: a re-run, a resumed grade or the folds of ``--fit kfold`` ask nothing twice (not
for the simulated judge, as in vet). An unparseable reply is asked again up to ``max_reasks`` times
and then recorded as unscored with the reason; a request that fails after the provider's retries
is unscored with the error; an authentication failure stops the run and every item not yet graded
is recorded as not graded.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from quiztui.core.assertions import sanitise
from quiztui.core.benchmark import BenchmarkResult, evaluate
from quiztui.core.grading import (
    LLM_GRADERS,
    FactScore,
    GradeItem,
    GradeOutcome,
    fact_token_probability,
    facts_outcome,
    parse_fact_score,
    parse_facts,
    parse_pass3,
    parse_rubric10,
    unscored,
)
from quiztui.core.lexical import best_match
from quiztui.errors import QuiztuiError
from quiztui.formats.benchmarks import Benchmark
from quiztui.pipeline.asking import Asked, Asker, RunStopped
from quiztui.pipeline.lifecycle import (
    FAILED,
    FINISHED,
    Emit,
    RunLifecycle,
    Work,
    usage_mark,
)
from quiztui.pipeline.prompts import PromptTemplate, load_prompt
from quiztui.providers.base import Provider, RetryNotice
from quiztui.store import Store
from quiztui.store.grades import GradeStore

T = TypeVar("T")

PROMPTS = {
    "rubric10": ("grade_rubric10",),
    "pass3": ("grade_pass3",),
    "facts": ("grade_fact_extract", "grade_fact_score"),
}


# --- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GradeStarted:
    run_id: int | None
    grader: str
    items: int
    judge_label: str  # the model (or "offline: …" for lexical/embedding)
    simulated: bool
    source: str | None


@dataclass(frozen=True, slots=True)
class GradeTextReceived:
    seq: int
    item_id: str
    text: str  # a piece of the reply, as streamed


@dataclass(frozen=True, slots=True)
class GradeRetried:
    seq: int
    item_id: str
    attempt: int
    error: str
    delay: float


@dataclass(frozen=True, slots=True)
class ItemGraded:
    seq: int
    item: GradeItem
    outcome: GradeOutcome
    split: str = ""


@dataclass(frozen=True, slots=True)
class GradeSummary:
    grader: str
    total: int
    scored: int
    unscored: int
    mean_normalised: float | None  # mean of scored outcomes on 0–1
    labels: dict[str, int]
    requests: int
    retries: int
    tokens_in: int
    tokens_out: int
    seconds: float
    pearson: float | None = None  # raw score vs the items' human scores, where given
    spearman: float | None = None
    humans: int = 0
    stopped: str | None = None  # why the run stopped early
    reasks: int = 0  # unparseable replies asked again (retries are the provider's HTTP retries)
    cached: int = 0  # items whose scored reply came from the grade cache (no request)


@dataclass(frozen=True, slots=True)
class GradeFinished:
    run_id: int | None
    summary: GradeSummary


@dataclass(frozen=True, slots=True)
class BenchmarkScored:
    run_id: int | None
    result: BenchmarkResult


GradeEvent = GradeStarted | GradeTextReceived | GradeRetried | ItemGraded | GradeFinished
BenchmarkEvent = GradeEvent | BenchmarkScored


@dataclass(frozen=True, slots=True)
class GradeSettings:
    grader: str = "rubric10"
    concurrency: int = 16
    max_reasks: int = 1
    temperature: float = 0.0
    max_tokens: int | None = None
    logprobs: bool = True  # fact scoring asks for logprobs (the provider may go on without)
    stream: bool = True  # stream reply text as GradeTextReceived (rubric10, pass3)


def fill(template: str, **values: str) -> str:
    """Put one-line, sanitised values into ``{name}`` slots in one pass (no re-expansion)."""
    clean = {k: sanitise(v) for k, v in values.items()}
    return re.sub(r"\{(\w+)\}", lambda m: clean.get(m.group(1), m.group(0)), template)


def _extra(asked: Asked[Any]) -> dict[str, Any]:
    """Outcome fields of one ask: attempts, tokens and the reply."""
    return {
        "attempts": asked.attempts,
        "tokens_in": asked.tokens_in,
        "tokens_out": asked.tokens_out,
        "reply": asked.reply,
    }


@dataclass
class _Shared:
    facts: dict[str, asyncio.Future[list[str] | str]] = field(default_factory=dict)
    stopped: str | None = None
    cached: int = 0


class GradeRun:
    """Grade ``items`` with one grader. ``splits`` tags each item (benchmark train/test)."""

    def __init__(
        self,
        items: Sequence[GradeItem],
        settings: GradeSettings,
        *,
        provider: Provider | None = None,
        store: Store | None = None,
        source: str | None = None,
        splits: Sequence[str] | None = None,
        prompt_dir: Any = None,
    ) -> None:
        if settings.grader in LLM_GRADERS and provider is None:
            raise QuiztuiError(f"grader {settings.grader!r} needs a judge provider")
        self.items = list(items)
        self.splits = list(splits) if splits is not None else [""] * len(self.items)
        self.settings = settings
        self.provider = provider
        self.store = store
        self.source = source
        self.prompts: dict[str, PromptTemplate] = {
            name: load_prompt(name, prompt_dir) for name in PROMPTS.get(settings.grader, ())
        }
        self.embedder: Any = None
        if settings.grader == "embedding":
            from quiztui.embed import load_embedder

            self.embedder = load_embedder()  # raises EmbedExtraMissing with the install line
        self.run_id: int | None = None
        self._judge: str | None = None  # the grade cache's judge key, made on first use
        self._cached = 0
        # Counts the replies asked again because they did not parse, over the run.
        self._asker = Asker(settings.temperature, settings.max_tokens, settings.max_reasks)

    @property
    def judge_label(self) -> str:
        if self.settings.grader == "lexical":
            return "offline: normalised exact match / token F1"
        if self.settings.grader == "embedding":
            return f"offline: {self.embedder.name}"
        assert self.provider is not None
        if self.provider.simulated:
            return f"SIMULATED grader ({self.settings.grader}: token-overlap oracle)"
        return self.provider.label

    @property
    def prompt_hash(self) -> str:
        return "+".join(p.hash for p in self.prompts.values()) or self.settings.grader

    @property
    def simulated(self) -> bool:
        return bool(self.provider and self.provider.simulated)

    async def events(self) -> AsyncIterator[GradeEvent]:
        started = time.monotonic()
        usage0 = usage_mark([self.provider])
        life: RunLifecycle[GradeEvent, GradeStore] = RunLifecycle(
            self.store.grades if self.store is not None else None, record=_record
        )
        self.run_id = life.start(self._create_run)
        yield GradeStarted(
            self.run_id,
            self.settings.grader,
            len(self.items),
            self.judge_label,
            self.simulated,
            self.source,
        )
        outcomes: list[GradeOutcome] = []
        shared = _Shared()
        async with life.stream(self._work(shared)) as events:
            async for event in events:
                if isinstance(event, ItemGraded):
                    outcomes.append(event.outcome)
                yield event
        self._cached = shared.cached
        summary = self._summary(outcomes, usage0, time.monotonic() - started, shared.stopped)
        life.finish(FAILED if shared.stopped else FINISHED, _summary_dict(summary))
        yield GradeFinished(self.run_id, summary)

    def _create_run(self, grades: GradeStore) -> int:
        return grades.create_run(
            source=self.source,
            grader=self.settings.grader,
            provider=self.provider.name if self.provider else "offline",
            model=self.provider.model if self.provider else self.settings.grader,
            judge_label=self.judge_label,
            simulated=self.simulated,
            prompt_hash=self.prompt_hash,
            params={"max_reasks": self.settings.max_reasks, "items": len(self.items)},
        )

    def _work(self, shared: _Shared) -> Work[GradeEvent]:
        """What grades the items, emitting one ItemGraded per item."""
        if self.settings.grader == "lexical":
            return self._grade_lexical
        if self.settings.grader == "embedding":
            return self._grade_embedding
        return partial(self._grade_all_llm, shared)

    async def _grade_lexical(self, emit: Emit[GradeEvent]) -> None:
        for seq, item in enumerate(self.items):
            emit(ItemGraded(seq, item, lexical_outcome(item), self.splits[seq]))
            if seq % 256 == 255:
                await asyncio.sleep(0)

    async def _grade_embedding(self, emit: Emit[GradeEvent]) -> None:
        step = 128
        for start in range(0, len(self.items), step):
            chunk = self.items[start : start + step]
            scores = await asyncio.to_thread(_embedding_scores, self.embedder, chunk)
            for offset, (item, cosine) in enumerate(zip(chunk, scores, strict=True)):
                seq = start + offset
                outcome = GradeOutcome(
                    item.id, "embedding", cosine, f"{cosine:.3f}", "cosine similarity"
                )
                emit(ItemGraded(seq, item, outcome, self.splits[seq]))

    async def _grade_all_llm(self, shared: _Shared, emit: Emit[GradeEvent]) -> None:
        sem = asyncio.Semaphore(max(1, self.settings.concurrency))
        await asyncio.gather(
            *(self._grade_one(seq, item, sem, shared, emit) for seq, item in enumerate(self.items))
        )

    async def _grade_one(
        self,
        seq: int,
        item: GradeItem,
        sem: asyncio.Semaphore,
        shared: _Shared,
        emit: Emit[GradeEvent],
    ) -> None:
        grader = self.settings.grader
        async with sem:
            if shared.stopped:
                outcome = unscored(item.id, grader, f"not graded: {shared.stopped}")
            else:
                key = self._cache_key(item)
                hit = (
                    self.store.grades.cache.get(key, item.id)
                    if key and self.store is not None
                    else None
                )
                try:
                    if hit is not None:
                        outcome = hit
                        shared.cached += 1
                    else:
                        outcome = await self._grade_llm(seq, item, emit, shared)
                        if key and self.store is not None:
                            self.store.grades.cache.put(key, outcome)
                except RunStopped as stop:
                    shared.stopped = shared.stopped or str(stop)
                    outcome = unscored(item.id, grader, f"not graded: {stop}")
        emit(ItemGraded(seq, item, outcome, self.splits[seq]))

    def _cache_key(self, item: GradeItem) -> str | None:
        """The item's grade-cache key; None when there is no store or the judge is simulated."""
        if self.store is None or self.provider is None or self.provider.simulated:
            return None
        if self._judge is None:
            from quiztui.store.cache import judge_key

            p = self.provider
            self._judge = judge_key(
                provider=p.name,
                model=p.model,
                base_url=p.base_url,
                prompt="\x00".join(t.system + "\x00" + t.user for t in self.prompts.values()),
                params={
                    "grader": self.settings.grader,
                    "temperature": self.settings.temperature,
                    "max_tokens": self.settings.max_tokens,
                    "logprobs": self.settings.logprobs and self.settings.grader == "facts",
                },
            )
        from quiztui.store.grades import grade_cache_key

        return grade_cache_key(self._judge, item)

    # --- LLM graders ---------------------------------------------------------------------------

    async def _grade_llm(
        self, seq: int, item: GradeItem, emit: Callable[[GradeEvent], None], shared: _Shared
    ) -> GradeOutcome:
        grader = self.settings.grader
        if grader == "facts":
            return await self._grade_facts(seq, item, emit, shared)
        prompt = self.prompts[PROMPTS[grader][0]]
        user = fill(
            prompt.user, question=item.question, reference=item.reference, candidate=item.candidate
        )
        if grader == "rubric10":
            asked = await self._ask(seq, item, prompt, user, parse_rubric10, emit)
            if asked.value is None:
                return unscored(item.id, grader, asked.reason, **_extra(asked))
            rating, explanation = asked.value
            return GradeOutcome(
                item.id, grader, rating, f"{rating:g}/10", explanation, **_extra(asked)
            )
        verdict = await self._ask(seq, item, prompt, user, parse_pass3, emit)
        if verdict.value is None:
            return unscored(item.id, grader, verdict.reason, **_extra(verdict))
        word, score, evaluation = verdict.value
        return GradeOutcome(item.id, grader, float(score), word, evaluation, **_extra(verdict))

    async def _grade_facts(
        self, seq: int, item: GradeItem, emit: Callable[[GradeEvent], None], shared: _Shared
    ) -> GradeOutcome:
        facts, extracted = await self._facts_for(seq, item, emit, shared)
        # The extraction's requests count for the item that made them (the first of its reference).
        own = [extracted] if extracted is not None else []
        if isinstance(facts, str):
            extra = _extra(own[0]) if own else {}
            return unscored(item.id, "facts", f"fact extraction: {facts}", **extra)
        prompt = self.prompts["grade_fact_score"]
        scored = await asyncio.gather(
            *(self._score_fact(seq, item, prompt, fact, emit) for fact in facts)
        )
        asked: list[Asked[Any]] = [*own, *(a for _, a in scored)]
        return facts_outcome(
            item.id,
            [f for f, _ in scored],
            tokens_in=sum(a.tokens_in for a in asked),
            tokens_out=sum(a.tokens_out for a in asked),
            attempts=sum(a.attempts for a in asked),
            reply="\n".join(a.reply.strip() for a in asked),
        )

    async def _facts_for(
        self, seq: int, item: GradeItem, emit: Callable[[GradeEvent], None], shared: _Shared
    ) -> tuple[list[str] | str, Asked[list[str]] | None]:
        """The reference's facts (or why none), extracted once per distinct reference in the run;
        the extraction request itself goes to the item that asked first, None to the others."""
        key = sanitise(item.reference)
        future = shared.facts.get(key)
        if future is not None:
            return await asyncio.shield(future), None
        future = asyncio.get_running_loop().create_future()
        shared.facts[key] = future
        prompt = self.prompts["grade_fact_extract"]
        user = fill(prompt.user, reference=item.reference)
        try:
            asked = await self._ask(seq, item, prompt, user, parse_facts, emit, stream=False)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: items waiting on it get it; nobody else must
            raise
        future.set_result(asked.reason if asked.value is None else asked.value)
        return future.result(), asked

    async def _score_fact(
        self,
        seq: int,
        item: GradeItem,
        prompt: PromptTemplate,
        fact: str,
        emit: Callable[[GradeEvent], None],
    ) -> tuple[FactScore, Asked[tuple[int, int]]]:
        user = fill(prompt.user, fact=fact, candidate=item.candidate)
        asked = await self._ask(
            seq,
            item,
            prompt,
            user,
            parse_fact_score,
            emit,
            stream=False,
            logprobs=self.settings.logprobs,
        )
        if asked.value is None:
            return FactScore(fact, None, reason=asked.reason), asked
        score, offset = asked.value
        weight, p_one = fact_token_probability(asked.tokens, offset, score)
        return FactScore(fact, score, weight, p_one), asked

    async def _ask(
        self,
        seq: int,
        item: GradeItem,
        prompt: PromptTemplate,
        user: str,
        parse: Callable[[str], T],
        emit: Callable[[GradeEvent], None],
        *,
        stream: bool | None = None,
        logprobs: bool = False,
    ) -> Asked[T]:
        """Ask until the reply parses (1 + max_reasks tries); else the reason, never a score."""
        assert self.provider is not None
        stream = self.settings.stream if stream is None else stream

        def on_retry(notice: RetryNotice) -> None:
            emit(GradeRetried(seq, item.id, notice.attempt, notice.error, notice.delay))

        def on_text(text: str) -> None:
            emit(GradeTextReceived(seq, item.id, text))

        return await self._asker.ask(
            self.provider,
            prompt.system,
            user,
            parse,
            on_retry=on_retry,
            on_text=on_text if stream else None,
            logprobs=logprobs,
        )

    def _summary(
        self,
        outcomes: Sequence[GradeOutcome],
        usage0: tuple[int, int, int, int],
        seconds: float,
        stopped: str | None,
    ) -> GradeSummary:
        labels: dict[str, int] = {}
        for o in outcomes:
            labels[o.label] = labels.get(o.label, 0) + 1
        scored = [o for o in outcomes if o.normalised is not None]
        u = usage_mark([self.provider])
        by_id = {it.id: it for it in self.items}
        pairs = [
            (o.raw, by_id[o.item_id].human)
            for o in scored
            if by_id[o.item_id].human is not None and o.raw is not None
        ]
        pearson = spearman = None
        if len(pairs) >= 3:
            from quiztui.core.benchmark import agreement

            a = agreement([p for p, _ in pairs], [h for _, h in pairs if h is not None])
            pearson, spearman = a.pearson, a.spearman
        return GradeSummary(
            grader=self.settings.grader,
            total=len(outcomes),
            scored=len(scored),
            unscored=len(outcomes) - len(scored),
            mean_normalised=(sum(o.normalised or 0.0 for o in scored) / len(scored))
            if scored
            else None,
            labels=labels,
            requests=u[0] - usage0[0],
            retries=u[1] - usage0[1],
            reasks=self._asker.reasks,
            tokens_in=u[2] - usage0[2],
            tokens_out=u[3] - usage0[3],
            seconds=seconds,
            pearson=pearson,
            spearman=spearman,
            humans=len(pairs),
            stopped=stopped,
            cached=self._cached,
        )


def lexical_outcome(item: GradeItem) -> GradeOutcome:
    exact, f1 = best_match(item.candidate, item.references)
    raw = 1.0 if exact else f1
    label = "EM" if exact else f"F1 {f1:.2f}"
    why = (
        "exact match after normalisation"
        if exact
        else f"best token F1 over {len(item.references)} reference(s)"
    )
    return GradeOutcome(item.id, "lexical", raw, label, why)


def _embedding_scores(embedder: Any, items: Sequence[GradeItem]) -> list[float]:
    """Max cosine over each item's references (aliases included)."""
    left: list[str] = []
    right: list[str] = []
    owner: list[int] = []
    for i, item in enumerate(items):
        for ref in item.references:
            left.append(ref)
            right.append(item.candidate)
            owner.append(i)
    sims = embedder.similarity(left, right)
    best = [-1.0] * len(items)
    for i, s in zip(owner, sims, strict=True):
        best[i] = max(best[i], float(s))
    return best


def _record(grades: GradeStore, run_id: int, event: GradeEvent) -> None:
    if isinstance(event, ItemGraded):
        grades.record(run_id, event.seq, event.split, event.item, event.outcome)


def _summary_dict(s: GradeSummary) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(s)


class BenchmarkRun:
    """Grade a benchmark's train and test splits, then fit the map on train and score test."""

    def __init__(
        self,
        bench: Benchmark,
        settings: GradeSettings,
        *,
        calibration: str = "isotonic",
        provider: Provider | None = None,
        store: Store | None = None,
        prompt_dir: Any = None,
    ) -> None:
        self.bench = bench
        self.calibration = calibration
        self.run = GradeRun(
            [*bench.train, *bench.test],
            settings,
            provider=provider,
            store=store,
            source=f"benchmark:{bench.name}",
            splits=["train"] * len(bench.train) + ["test"] * len(bench.test),
            prompt_dir=prompt_dir,
        )

    async def events(self) -> AsyncIterator[BenchmarkEvent]:
        raw: dict[tuple[str, str], float | None] = {}
        async for event in self.run.events():
            if isinstance(event, ItemGraded):
                raw[(event.split, event.item.id)] = event.outcome.raw
            yield event
        try:
            result = evaluate(
                self.bench.name,
                self.run.settings.grader,
                [raw.get(("train", it.id)) for it in self.bench.train],
                [float(it.human or 0.0) for it in self.bench.train],
                [raw.get(("test", it.id)) for it in self.bench.test],
                [float(it.human or 0.0) for it in self.bench.test],
                self.calibration,
            )
        except ValueError as exc:
            raise QuiztuiError(
                f"benchmark {self.bench.name}: {exc} (every reply was unscored; see the reasons"
                f" in grade run {self.run.run_id})"
            ) from None
        if self.run.store is not None and self.run.run_id is not None:
            self.run.store.grades.set_benchmark(self.run.run_id, benchmark_dict(result))
        yield BenchmarkScored(self.run.run_id, result)


def benchmark_dict(r: BenchmarkResult) -> dict[str, Any]:
    """The result as plain data (reports, the store)."""

    from quiztui.core.benchmark import SEED_FIGURES

    return {
        "dataset": r.dataset,
        "grader": r.grader,
        "calibration": r.calibration.describe(),
        "train_n": r.train_n,
        "train_mean": r.train_mean,
        "unscored_train": r.unscored_train,
        "unscored_test": r.unscored_test,
        "test": r.test.as_dict(),
        "baseline_constant_mean": r.baseline.as_dict(),
        "seed_figures": (
            {k: {"aad": a, "bracket_accuracy": b} for k, (a, b) in SEED_FIGURES.items()}
            if r.dataset == "msrpar"
            else {}
        ),
    }
