"""The vet run: quiz → shuffled assertions → batches → judge → verdicts → scores, as events.

Every verdict is written to the store when its batch ends, so a killed run resumes without paying
twice; verdicts are also emitted the moment their reply line is parsed, so the UI fills live.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace

from quiztui.core.assertions import Assertion, decompose, shuffled
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.estimate import Measured, ModelPrice, usd
from quiztui.core.logprobs import LogprobIndex, graded_key_score
from quiztui.core.question_mode import QuestionVerdictParser
from quiztui.core.quiz import Quiz
from quiztui.core.verdicts import ParsedVerdict, StreamingVerdictParser
from quiztui.errors import ConfigError, StoreError
from quiztui.pipeline.estimate import Planner
from quiztui.pipeline.events import (
    AssertionUnjudged,
    BatchFailed,
    BatchRetried,
    QuestionScored,
    QuestionSummary,
    RunFinished,
    RunStarted,
    RunSummary,
    UsageUpdated,
    VerdictReceived,
    VetEvent,
)
from quiztui.pipeline.prompts import PromptTemplate
from quiztui.pipeline.scoring import score_question
from quiztui.pipeline.summary import summary_from_dict, summary_to_dict
from quiztui.providers.base import (
    ChatRequest,
    LogprobsRejected,
    Provider,
    RequestFailed,
    RetryNotice,
    StreamInterrupted,
)
from quiztui.store import Store
from quiztui.store.cache import judge_key as make_judge_key


@dataclass(frozen=True, slots=True)
class VetSettings:
    batch_size: int = 20
    concurrency: int = 16
    seed: int | None = None  # None: derived from the quiz content, so re-runs shuffle alike
    max_reasks: int = 2
    prior: float = 0.95
    temperature: float = 0.0
    max_tokens: int | None = None
    use_cache: bool = True
    mode: str = "assertion"  # "assertion": batches of assertions; "question": one per question
    logprobs: bool = False  # ask the judge for token logprobs: P(true) per assertion


@dataclass(slots=True)
class _State:
    verdict: bool | None = None
    reason: str = ""
    cached: bool = False
    unjudged: str | None = None
    attempts: int = 0
    p_true: float | None = None  # from the verdict token's logprobs, when the judge sent them


@dataclass
class _Counters:
    tokens_in: int = 0
    tokens_out: int = 0
    cached: int = 0
    reasked: int = 0
    batches: int = 0


def default_seed(quiz: Quiz) -> int:
    return int(quiz.content_hash()[:8], 16)


@dataclass
class VetRun:
    quiz: Quiz
    provider: Provider
    store: Store
    prompt: PromptTemplate
    settings: VetSettings = field(default_factory=VetSettings)
    accuracy: JudgeAccuracy = field(default_factory=JudgeAccuracy)
    resume_run_id: int | None = None
    clock: Callable[[], float] = time.monotonic
    price: ModelPrice | None = None  # the judge model's [cost] price; None: cost unknown
    measured: Measured | None = None  # the judge profile's tokens and latency, for the estimate
    budget: float | None = None  # USD this run may spend (pipeline/estimate.py); None: no limit

    run_id: int = 0

    def __post_init__(self) -> None:
        if self.settings.mode not in ("assertion", "question"):
            raise ValueError(f"unknown judge mode {self.settings.mode!r}")
        if self.budget is not None and self.price is None:
            raise ConfigError(
                f'a budget needs a price: add [cost.models."{self.provider.model}"]'
                " input_per_mtok and output_per_mtok (or the [cost] defaults) to the config"
            )
        if self.question_mode:  # one request per question: the batch size does not apply
            self.settings = replace(self.settings, batch_size=1)

    def judge_key(self) -> str:
        p = self.provider
        return make_judge_key(
            provider=p.name,
            model=p.model,
            base_url=p.base_url,
            prompt=self.prompt.system + "\x00" + self.prompt.user,
            params={
                "temperature": self.settings.temperature,
                "max_tokens": self.settings.max_tokens,
                "batch_size": self.settings.batch_size,
            }
            | ({"mode": "question"} if self.question_mode else {}),
        )

    @property
    def question_mode(self) -> bool:
        return self.settings.mode == "question"

    # setup ------------------------------------------------------------------------------------

    def _prepare(self) -> tuple[list[Assertion], dict[int, _State], int, bool]:
        by_uid = {a.uid: a for a in decompose(self.quiz)}
        states: dict[int, _State] = {}
        if self.resume_run_id is not None:
            record = self.store.get_run(self.resume_run_id)
            # A resumed run keeps its own batch size (part of the judge's identity).
            self.settings = replace(self.settings, batch_size=record.batch_size)
            if record.quiz_hash != self.quiz.content_hash():
                raise StoreError(
                    f"run {record.id} was made on a different version of this quiz; start a new run"
                )
            if record.judge_key != self.judge_key():
                raise StoreError(
                    f"run {record.id} was judged by '{record.judge_label}'; configure the same judge"
                    " (model, base URL, prompt, batch size) to resume it"
                )
            order = [
                by_uid[f"{qid}#{opt}"] for _, qid, opt, _, _ in self.store.run_order(record.id)
            ]
            for seq, stored in self.store.verdicts(record.id).items():
                if stored.verdict is not None:
                    states[seq] = _State(stored.verdict, stored.reason, True, p_true=stored.p_true)
            self.run_id = record.id
            self.store.set_status(record.id, "running")
            return order, states, record.seed, True
        seed = self.settings.seed if self.settings.seed is not None else default_seed(self.quiz)
        order = shuffled(list(by_uid.values()), seed)
        p = self.provider
        self.run_id = self.store.create_run(
            quiz=self.quiz,
            provider=p.name,
            model=p.model,
            base_url=p.base_url,
            judge_label=p.label,
            simulated=p.simulated,
            judge_key=self.judge_key(),
            prompt_hash=self.prompt.hash,
            seed=seed,
            batch_size=self.settings.batch_size,
            params={
                "concurrency": self.settings.concurrency,
                "temperature": self.settings.temperature,
                "max_reasks": self.settings.max_reasks,
                "prior": self.settings.prior,
                "tpr": self.accuracy.tpr,
                "tnr": self.accuracy.tnr,
                "calibration": self.accuracy.label,
            }
            # A batch provider (pipeline/batch.py) says which batch API: the price is about half.
            | ({"batch_api": api} if (api := getattr(p, "batch_api", None)) else {}),
            order=order,
        )
        return order, states, seed, False

    # the run ----------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[VetEvent]:
        started = self.clock()
        order, states, seed, resumed = self._prepare()
        for seq in range(len(order)):
            states.setdefault(seq, _State())
        judge = self.judge_key()
        use_cache = self.settings.use_cache and not self.provider.simulated
        counters = _Counters()
        queue: asyncio.Queue[VetEvent | None] = asyncio.Queue()
        emit = queue.put_nowait
        # A batch provider (pipeline/batch.py) stores its batches with the run and reports on them
        # as ProviderBatchStatus events in this stream.
        if (attach := getattr(self.provider, "attach_run", None)) is not None:
            attach(self.store, self.run_id, emit)

        restored = [seq for seq, st in states.items() if st.verdict is not None]
        pending = [seq for seq in range(len(order)) if states[seq].verdict is None]
        if use_cache and pending:
            hits = self.store.cache.get_many(judge, [order[s].text for s in pending])
            from_cache = []
            for seq in pending:
                hit = hits.get(order[seq].text)
                if hit is not None:
                    states[seq] = _State(hit[0], hit[1], True, p_true=hit[2])
                    from_cache.append((seq, hit[0], hit[1], hit[2]))
            if from_cache:
                self.store.record_cached(self.run_id, from_cache)
            counters.cached = len(from_cache)
            restored += [s for s, _, _, _ in from_cache]
            pending = [seq for seq in pending if states[seq].verdict is None]

        size = self.settings.batch_size
        planner = Planner(self, order)
        batch_api = bool(self.store.get_run(self.run_id).params.get("batch_api"))
        price = self.price.batched() if self.price is not None and batch_api else self.price
        budget = self.budget
        yield RunStarted(
            run_id=self.run_id,
            quiz_title=self.quiz.title,
            quiz_path=self.quiz.source_path,
            questions=len(self.quiz.questions),
            assertions=len(order),
            batches=len({order[s].question_id for s in pending})
            if self.question_mode
            else -(-len(pending) // size),
            already_judged=len(restored),
            judge_label=self.provider.label,
            simulated=self.provider.simulated,
            seed=seed,
            batch_size=size,
            concurrency=self.settings.concurrency,
            calibration=self.accuracy.label,
            resumed=resumed,
            tpr=self.accuracy.tpr,
            tnr=self.accuracy.tnr,
            mode=self.settings.mode,
            estimate=planner.estimate(pending, len(restored), batch_api),
            budget=budget,
        )
        for seq in sorted(restored):
            a, st = order[seq], states[seq]
            yield VerdictReceived(
                seq, a.question_id, a.option_index, bool(st.verdict), st.reason, True, st.p_true
            )

        questions = {q.id: q for q in self.quiz.questions}
        tally = {"judged": len(restored), "unjudged": 0}
        seqs_by_question: dict[str, list[int]] = {}
        for seq, a in enumerate(order):
            seqs_by_question.setdefault(a.question_id, []).append(seq)

        def score(question_id: str) -> QuestionScored:
            q = questions[question_id]
            verdicts: list[bool | None] = [None] * q.n
            p_true: list[float | None] = [None] * q.n
            unjudged = pending_n = 0
            for seq in seqs_by_question[question_id]:
                st = states[seq]
                verdicts[order[seq].option_index] = st.verdict
                if st.verdict is None:
                    if st.unjudged is not None:
                        unjudged += 1
                    else:
                        pending_n += 1
                else:
                    p_true[order[seq].option_index] = st.p_true
            scored = score_question(
                q,
                verdicts,
                self.accuracy,
                prior=self.settings.prior,
                unjudged=unjudged,
                pending=pending_n,
            )
            graded = graded_key_score(p_true, q.key, self.settings.prior)
            return scored if graded is None else replace(scored, graded=graded)

        for qid in dict.fromkeys(order[s].question_id for s in restored):
            yield score(qid)

        # In question mode the queue holds one assertion per question, standing for all of it.
        todo: deque[int] = deque(
            self._one_per_question(order, pending) if self.question_mode else pending
        )

        def take_batch() -> list[int]:
            """The next batch: ``size`` queued assertions, or in question mode one whole question.

            A question is always asked whole (the judge must see every option); options that
            already had a verdict are judged again with it.
            """
            if not self.question_mode:
                return [todo.popleft() for _ in range(min(size, len(todo)))]
            qid = order[todo.popleft()].question_id
            return sorted(seqs_by_question[qid], key=lambda s: order[s].option_index)

        in_flight = 0
        cond = asyncio.Condition()
        base_usage = (self.provider.usage.requests, self.provider.usage.retries)
        fatal: list[BaseException] = []
        stopped: list[str] = []  # why dispatching stopped early (the budget), when it did
        reserved: dict[int, float] = {}  # batch_no → estimated cost, while the batch is in flight

        def spent() -> float | None:
            return None if price is None else price.cost(counters.tokens_in, counters.tokens_out)

        def usage_event() -> UsageUpdated:
            judged, unjudged = tally["judged"], tally["unjudged"]
            return UsageUpdated(
                requests=self.provider.usage.requests - base_usage[0],
                retries=self.provider.usage.retries - base_usage[1],
                tokens_in=counters.tokens_in,
                tokens_out=counters.tokens_out,
                judged=judged,
                unjudged=unjudged,
                total=len(order),
                cached=counters.cached,
                cost=spent(),
                # Connections in use and the (adaptive) limit, as the provider counts them now.
                in_flight=self.provider.usage.in_flight,
                limit=self.provider.usage.limit,
            )

        def give_up_or_requeue(seqs: list[int], why: str) -> list[int]:
            """Re-queue assertions still under the re-ask limit; mark the rest unjudged."""
            dead = []
            requeued = set()
            for seq in seqs:
                st = states[seq]
                if st.attempts <= self.settings.max_reasks:
                    qid = order[seq].question_id
                    if not self.question_mode or qid not in requeued:
                        todo.append(seq)
                        requeued.add(qid)
                    counters.reasked += 1
                else:
                    st.unjudged = f"{why} (after {st.attempts} attempts)"
                    dead.append(seq)
            tally["unjudged"] += len(dead)
            if dead:
                self.store.record_unjudged(
                    self.run_id, [(s, states[s].unjudged or why) for s in dead]
                )
                for s in dead:
                    a = order[s]
                    emit(
                        AssertionUnjudged(
                            s, a.question_id, a.option_index, states[s].unjudged or why
                        )
                    )
            return dead

        async def judge_batch(batch_no: int, seqs: list[int]) -> None:
            for seq in seqs:
                states[seq].attempts += 1
            parser: StreamingVerdictParser | QuestionVerdictParser
            prompt, id_map = planner.render(seqs)  # the estimate renders through it too
            if self.question_mode:
                parser = QuestionVerdictParser(list(id_map))
            else:
                parser = StreamingVerdictParser(id_map.keys())
            seq_of = {ident: seq for ident, seq in zip(id_map, seqs, strict=True)}
            batch_id = self.store.start_batch(self.run_id, batch_no, prompt)
            got: dict[str, ParsedVerdict] = {}
            p_true_of: dict[str, float | None] = {}
            # The provider hands over each chunk's tokens before its text, so the token of a
            # verdict word is indexed by the time the parser completes the word's line.
            index = LogprobIndex()

            def take(found: list[ParsedVerdict]) -> None:
                for v in found:
                    got[v.id] = v  # the last verdict per id wins
                    p = None if v.offset is None else index.p_true_at(v.offset, v.verdict)
                    p_true_of[v.id] = p
                    seq = seq_of[v.id]
                    a = order[seq]
                    emit(
                        VerdictReceived(
                            seq, a.question_id, a.option_index, v.verdict, v.reason, p_true=p
                        )
                    )

            def on_retry(notice: RetryNotice) -> None:
                emit(BatchRetried(batch_no, notice.attempt, notice.error, notice.delay))

            request = ChatRequest(
                messages=(("system", self.prompt.system), ("user", prompt)),
                temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens,
                logprobs=self.settings.logprobs,
            )
            status, error, raw = "ok", None, ""
            tokens_in = tokens_out = 0
            try:
                result = await self.provider.complete(
                    request,
                    on_text=lambda t: take(parser.feed(t)),
                    on_retry=on_retry,
                    on_logprobs=index.extend if self.settings.logprobs else None,
                )
                raw, tokens_in, tokens_out = result.text, result.tokens_in, result.tokens_out
                if result.finish_reason not in (None, "stop", "length"):
                    error = f"finish_reason={result.finish_reason}"
            except StreamInterrupted as exc:
                status, error, raw = "cut", str(exc), exc.partial
            except RequestFailed as exc:
                status, error = "failed", str(exc)
                if not exc.retryable and exc.status in (401, 403, 404):
                    fatal.append(exc)
                if isinstance(exc, LogprobsRejected):  # every other batch would fail alike
                    fatal.append(exc)
            take(parser.close())
            ident_of = {s: i for i, s in seq_of.items()}
            for seq in seqs:
                st = states[seq]
                ident = ident_of[seq]
                if ident in got:
                    tally["judged"] += st.verdict is None
                    st.verdict, st.reason = got[ident].verdict, got[ident].reason
                    st.p_true = p_true_of.get(ident)
            verdict_rows = [
                (seq_of[i], v.verdict, v.reason, p_true_of.get(i)) for i, v in got.items()
            ]
            counters.tokens_in += tokens_in
            counters.tokens_out += tokens_out
            reserved.pop(batch_no, None)  # now counted in spent()
            self.store.finish_batch(
                batch_id,
                status=status,
                raw_reply=raw,
                error=error,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                verdicts=verdict_rows,
                run_id=self.run_id,
                cache_judge=judge if use_cache else None,
                cache_items=[(order[s].text, v, r, p) for s, v, r, p in verdict_rows],
            )
            missing = [seq for seq in seqs if states[seq].verdict is None]
            if status in ("failed", "cut"):
                emit(BatchFailed(batch_no, error or status, len(missing)))
            if missing:
                if status == "failed":
                    why = error or "request failed"
                elif status == "cut":
                    why = "stream cut before its verdict"
                elif not got:
                    why = "reply had no verdicts" + (f" ({error})" if error else " (refusal?)")
                else:
                    why = "id missing from the reply"
                if fatal:
                    for seq in missing:
                        states[seq].attempts = self.settings.max_reasks + 1
                give_up_or_requeue(missing, why)
            for qid in dict.fromkeys(order[s].question_id for s in seqs):
                emit(score(qid))
            emit(usage_event())

        async def worker() -> None:
            nonlocal in_flight
            while True:
                async with cond:
                    while not todo and in_flight:
                        await cond.wait()
                    if not todo or fatal or stopped:
                        cond.notify_all()
                        return
                    seqs = take_batch()
                    cost = 0.0
                    if budget is not None and price is not None:
                        # Dispatch only while what was spent, what is in flight and this batch
                        # stay within the budget: the run ends within one batch of it.
                        cost = planner.batch_cost(seqs, price)
                        if (spent() or 0.0) + sum(reserved.values()) + cost > budget:
                            stopped.append(f"not run: budget {usd(budget)} reached")
                            cond.notify_all()
                            return
                    in_flight += 1
                    counters.batches += 1
                    batch_no = counters.batches
                    reserved[batch_no] = cost
                try:
                    await judge_batch(batch_no, seqs)
                finally:
                    async with cond:
                        reserved.pop(batch_no, None)
                        in_flight -= 1
                        cond.notify_all()

        async def drive() -> None:
            try:
                workers = [
                    asyncio.create_task(worker()) for _ in range(max(1, self.settings.concurrency))
                ]
                try:
                    await asyncio.gather(*workers)
                finally:
                    for w in workers:
                        w.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
            finally:
                queue.put_nowait(None)

        status = "finished"
        driver = asyncio.create_task(drive())
        try:
            while True:
                event = await queue.get()
                if event is None:
                    break
                yield event
            await driver
        except (asyncio.CancelledError, GeneratorExit):
            status = "cancelled"
            raise
        finally:
            if not driver.done():
                driver.cancel()
                try:
                    await driver
                except (asyncio.CancelledError, Exception):
                    pass
            if status == "cancelled":
                self.store.finish_run(self.run_id, "cancelled", None)
        not_run, error = 0, str(fatal[0]) if fatal else None
        leftover = [
            s for s in range(len(order)) if states[s].verdict is None and states[s].unjudged is None
        ]
        if stopped and not fatal and leftover:  # the budget: the rest is not run, resumable
            why, not_run, status = stopped[0], len(leftover), "stopped"
            error = (
                f"{why.removeprefix('not run: ')}: {not_run} assertions not run"
                f" (resume with --resume {self.run_id})"
            )
            tally["unjudged"] += not_run
            for s in leftover:
                states[s].unjudged = why
            self.store.record_unjudged(self.run_id, [(s, why) for s in leftover])
            for s in leftover:
                a = order[s]
                yield AssertionUnjudged(s, a.question_id, a.option_index, why)
        if fatal:
            why = f"run stopped: {fatal[0]}"
            tally["unjudged"] += len(leftover)
            for s in leftover:
                states[s].unjudged = why
            self.store.record_unjudged(self.run_id, [(s, why) for s in leftover])
            for s in leftover:
                a = order[s]
                yield AssertionUnjudged(s, a.question_id, a.option_index, why)
            status = "failed"
        scores = {q.id: score(q.id) for q in self.quiz.questions}
        for qs in scores.values():
            yield qs
        yield usage_event()
        summary = self._summary(
            order,
            states,
            scores,
            counters,
            status,
            started,
            seed,
            error,
            usage_event(),
        )
        # Tokens and cost of the whole run: a resumed run's earlier sessions are in the store's
        # usage row (requests and retries stay this session's, as the progress line showed them).
        total = self.store.usage(self.run_id)
        tokens_in, tokens_out = total["tokens_in"], total["tokens_out"]
        summary = replace(
            summary,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=None if price is None else price.cost(tokens_in, tokens_out),
            not_run=not_run,
        )
        self.store.finish_run(self.run_id, status, summary_to_dict(summary))
        yield RunFinished(summary)

    @staticmethod
    def _one_per_question(order: list[Assertion], seqs: list[int]) -> list[int]:
        seen: set[str] = set()
        out = []
        for seq in seqs:
            qid = order[seq].question_id
            if qid not in seen:
                seen.add(qid)
                out.append(seq)
        return out

    def _summary(self, order, states, scores, counters, status, started, seed, error, usage):  # type: ignore[no-untyped-def]
        seqs: dict[tuple[str, int], int] = {
            (a.question_id, a.option_index): s for s, a in enumerate(order)
        }
        questions = []
        counts: dict[str, int] = {}
        for q in self.quiz.questions:
            sc: QuestionScored = scores[q.id]
            sts = [states[seqs[(q.id, i)]] for i in range(q.n)]
            p_true = tuple(st.p_true if st.verdict is not None else None for st in sts)
            counts[sc.badge.value] = counts.get(sc.badge.value, 0) + 1
            questions.append(
                QuestionSummary(
                    question_id=q.id,
                    text=q.text,
                    options=q.options,
                    key=q.key,
                    k=sc.k,
                    badge=sc.badge,
                    confidence=sc.confidence,
                    suggested_option=sc.suggested_option,
                    suggested_p=sc.suggested_p,
                    verdicts=tuple(st.verdict for st in sts),
                    reasons=tuple(
                        st.reason if st.verdict is not None else (st.unjudged or "") for st in sts
                    ),
                    p_true=p_true,
                    graded=sc.graded,
                    interval=sc.interval,
                )
            )
        return RunSummary(
            run_id=self.run_id,
            status=status,
            quiz_title=self.quiz.title,
            quiz_path=self.quiz.source_path,
            judge_label=self.provider.label,
            simulated=self.provider.simulated,
            calibration=self.accuracy.label,
            seed=seed,
            batch_size=self.settings.batch_size,
            tpr=self.accuracy.tpr,
            tnr=self.accuracy.tnr,
            prior=self.settings.prior,
            questions=tuple(questions),
            badge_counts=counts,
            requests=usage.requests,
            retries=usage.retries,
            tokens_in=usage.tokens_in,
            tokens_out=usage.tokens_out,
            judged=usage.judged,
            unjudged=usage.unjudged,
            cached=counters.cached,
            reasked=counters.reasked,
            elapsed=self.clock() - started,
            error=error,
            mode=self.settings.mode,
            tpr_ci=self.accuracy.tpr_ci,
            tnr_ci=self.accuracy.tnr_ci,
        )


__all__ = ["VetRun", "VetSettings", "default_seed", "summary_from_dict", "summary_to_dict"]
