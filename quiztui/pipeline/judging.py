"""One vet run in progress: the scheduler behind :meth:`quiztui.pipeline.vet.VetRun.events`.

:class:`Judging` holds the run's state (one :class:`AssertionState` per assertion in run order,
the queue of assertions still to ask, the counters) and the named parts that move it:

- ``restore``: verdicts already had, from a resumed run and the verdict cache;
- ``drive``: ``concurrency`` workers; each takes the next batch (``_next_batch``: a whole question
  in question mode) when the budget gate lets it go (``_within_budget``), and judges it;
- ``_judge_batch``: one request, its verdicts parsed and emitted while the reply streams
  (:class:`_BatchReply`), stored with the raw reply when it ends; the ids it missed are asked
  again up to ``max_reasks`` times, then become unjudged with the reason (``_requeue_or_give_up``);
- ``end``: what was never sent (budget reached, or the run stopped) becomes unjudged, every
  question is scored, and ``summary`` builds the run's summary.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from quiztui.core.assertions import Assertion
from quiztui.core.estimate import approx_tokens, usd
from quiztui.core.logprobs import LogprobIndex, graded_key_score
from quiztui.core.quiz import Question
from quiztui.core.records import record
from quiztui.core.verdicts import (
    ParsedVerdict,
    StreamingVerdictParser,
    parse_verdict_document,
    verdict_schema,
)
from quiztui.pipeline.estimate import Planner
from quiztui.pipeline.events import (
    AssertionUnjudged,
    BatchFailed,
    BatchRetried,
    QuestionScored,
    QuestionSummary,
    RunStarted,
    RunSummary,
    UsageUpdated,
    VerdictReceived,
    VetEvent,
)
from quiztui.pipeline.lifecycle import FAILED, FINISHED, STOPPED, Emit
from quiztui.pipeline.scoring import ModelScore, score_question
from quiztui.providers.base import (
    ChatRequest,
    LogprobsRejected,
    RequestFailed,
    RetryNotice,
    StreamInterrupted,
    StructuredRejected,
)

if TYPE_CHECKING:
    from quiztui.core.question_mode import QuestionVerdictParser
    from quiztui.pipeline.vet import VetRun

CUT_AT_MAX_TOKENS = "cut at max_tokens"  # the unjudged reason of a reply cut at the token limit


@record
class AssertionState:
    verdict: bool | None = None
    reason: str = ""
    cached: bool = False
    unjudged: str | None = None
    attempts: int = 0
    p_true: float | None = None  # from the verdict token's logprobs, when the judge sent them


@record
class _Counters:
    tokens_in: int = 0
    tokens_out: int = 0
    cached: int = 0
    reasked: int = 0
    batches: int = 0
    failed: int = 0  # batches whose request failed for good (no reply at all)
    estimated: int = 0  # replies whose token counts are estimates (the server sent no usage)
    counted: int = 0  # replies without usage counted by the server's tokenizer instead


class _BatchReply:
    """One batch request and its reply as it streams: each verdict is emitted the moment its line
    is parsed, with P(true) from the verdict token's logprobs when they came."""

    def __init__(self, judging: Judging, batch_no: int, seqs: list[int]) -> None:
        self.batch_no = batch_no
        self.seqs = seqs
        self.prompt, id_map = judging.planner.render(seqs)  # the estimate renders through it too
        self.question_mode = judging.run.question_mode
        self.parser: StreamingVerdictParser | QuestionVerdictParser
        if self.question_mode:
            from quiztui.core.question_mode import QuestionVerdictParser, answer_schema

            self.parser = QuestionVerdictParser(list(id_map), self.prompt)
            self.schema = answer_schema(len(id_map))
        else:
            self.parser = StreamingVerdictParser(id_map.keys())
            self.schema = verdict_schema(id_map.keys())
        self.seq_of = {ident: seq for ident, seq in zip(id_map, seqs, strict=True)}
        self.got: dict[str, ParsedVerdict] = {}
        self.p_true_of: dict[str, float | None] = {}
        # The provider hands over each chunk's tokens before its text, so the token of a verdict
        # word is indexed by the time the parser completes the word's line.
        self.index = LogprobIndex()
        self.status = "ok"  # "ok", "cut" (the stream broke) or "failed"
        self.error: str | None = None
        # Why the reply as a whole cannot be judged ("cut at max_tokens", "echoed the prompt",
        # "named no option"): the reason its ids are unjudged, when it is one.
        self.problem: str | None = None
        self.text: list[str] = []  # the reply so far, for a verdict document over many lines
        self.raw = ""
        self.tokens_in = self.tokens_out = 0
        self._order = judging.order
        self._emit = judging.emit
        self._live = judging.settings.live  # a verdict event each, for a live view

    def feed(self, text: str) -> None:
        self.text.append(text)
        self._take(self.parser.feed(text))

    def close(self) -> None:
        """The end of the reply. In question mode the answer is taken only now, and only from
        a whole reply: one cut at the token limit or broken off gives no verdict."""
        found = self.parser.close()
        if self.question_mode:
            self.problem = self.problem or cast("QuestionVerdictParser", self.parser).problem
            if self.problem is not None or self.status != "ok":
                return
        self._take(found)
        if not self.question_mode and len(self.got) < len(self.seq_of):
            # Structured output: one JSON document, perhaps over many lines or on one.
            whole = parse_verdict_document("".join(self.text), self.seq_of.keys())
            self._take([v for v in whole if v.id not in self.got])

    def _take(self, found: list[ParsedVerdict]) -> None:
        for v in found:
            self.got[v.id] = v  # the last verdict per id wins
            p = None if v.offset is None else self.index.p_true_at(v.offset, v.verdict)
            self.p_true_of[v.id] = p
            if self._live:
                seq = self.seq_of[v.id]
                a = self._order[seq]
                self._emit(
                    VerdictReceived(
                        seq, a.question_id, a.option_index, v.verdict, v.reason, p_true=p
                    )
                )

    def missing_reason(self) -> str:
        """Why an assertion of this batch got no verdict."""
        if self.status == "failed":
            return self.error or "request failed"
        if self.status == "cut":
            return "stream cut before its verdict"
        if self.problem is not None:
            return self.problem
        if not self.got:
            note = self.error or self.parser.refused  # refused: the reply's JSON was past the caps
            return "reply had no verdicts" + (f" ({note})" if note else " (refusal?)")
        return "id missing from the reply"


class Judging:
    """The state of one vet run while it judges, and the parts that move it (module doc)."""

    def __init__(
        self,
        run: VetRun,
        order: list[Assertion],
        states: dict[int, AssertionState],
        emit: Emit[VetEvent],
    ) -> None:
        self.run = run
        self.order = order
        self.states = states
        for seq in range(len(order)):
            states.setdefault(seq, AssertionState())
        self.emit = emit
        self.settings = run.settings
        self.judge = run.judge_key()
        self.use_cache = self.settings.use_cache and not run.provider.simulated
        self.counters = _Counters()
        self.questions = {q.id: q for q in run.quiz.questions}
        self.seqs_by_question: dict[str, list[int]] = {}
        for seq, a in enumerate(order):
            self.seqs_by_question.setdefault(a.question_id, []).append(seq)
        self.planner = Planner(run, order)
        self.batch_api = bool(run.store.get_run(run.run_id).params.get("batch_api"))
        price = run.price
        self.price = price.batched() if price is not None and self.batch_api else price
        self.judged = self.unjudged = 0
        self.todo: deque[int] = deque()
        self.in_flight = 0
        self.cond = asyncio.Condition()
        self.fatal: list[BaseException] = []  # errors that stop the run (auth, logprobs refused)
        self.stopped: str | None = None  # why dispatching stopped early (the budget), when it did
        self.reserved: dict[int, float] = {}  # batch_no → estimated cost, while in flight
        self.base_usage = (run.provider.usage.requests, run.provider.usage.retries)
        self.status = FINISHED  # how the run ends, once the workers are done (see end())
        self.error: str | None = None
        self.not_run = 0
        self.prior_label: str | None = None  # prior = "auto": the estimate the end scored with
        # prior = "auto": per question, the judge model's (confidence, suggested option, its
        # probability, interval) at the end (core/judges via VetRun._judge_model)
        self.model_scores: dict[str, ModelScore] = {}
        self.final_scores: dict[str, QuestionScored] = {}
        self.last_failure: str | None = None  # the error of the last batch that failed

    # before the first request -----------------------------------------------------------------

    def restore(self) -> tuple[list[int], list[int]]:
        """(restored, pending): positions with a verdict already (a resumed run's, then the
        cache's), and the rest, in run order."""
        states, order = self.states, self.order
        restored = [seq for seq, st in states.items() if st.verdict is not None]
        pending = [seq for seq in range(len(order)) if states[seq].verdict is None]
        if self.use_cache and pending:
            hits = self.run.store.cache.get_many(self.judge, [order[s].text for s in pending])
            from_cache = []
            for seq in pending:
                hit = hits.get(order[seq].text)
                if hit is not None:
                    states[seq] = AssertionState(hit[0], hit[1], True, p_true=hit[2])
                    from_cache.append((seq, hit[0], hit[1], hit[2]))
            if from_cache:
                self.run.store.record_cached(self.run.run_id, from_cache)
            self.counters.cached = len(from_cache)
            restored += [s for s, _, _, _ in from_cache]
            pending = [seq for seq in pending if states[seq].verdict is None]
        self.judged = len(restored)
        return restored, pending

    def started(self, seed: int, resumed: bool, restored: int, pending: list[int]) -> RunStarted:
        run, size = self.run, self.settings.batch_size
        return RunStarted(
            run_id=run.run_id,
            quiz_title=run.quiz.title,
            quiz_path=run.quiz.source_path,
            questions=len(run.quiz.questions),
            assertions=len(self.order),
            batches=len({self.order[s].question_id for s in pending})
            if run.question_mode
            else -(-len(pending) // size),
            already_judged=restored,
            judge_label=run.provider.label,
            simulated=run.provider.simulated,
            seed=seed,
            batch_size=size,
            concurrency=self.settings.concurrency,
            calibration=run.accuracy.label,
            resumed=resumed,
            tpr=run.accuracy.tpr,
            tnr=run.accuracy.tnr,
            mode=self.settings.mode,
            estimate=self.planner.estimate(pending, restored, self.batch_api),
            budget=run.budget,
            tpr_ci=run.accuracy.tpr_ci,
            tnr_ci=run.accuracy.tnr_ci,
        )

    def restored_events(self, restored: list[int]) -> Iterator[VetEvent]:
        """The verdicts already had (in run order), then their questions' scores."""
        for seq in sorted(restored):
            a, st = self.order[seq], self.states[seq]
            yield VerdictReceived(
                seq, a.question_id, a.option_index, bool(st.verdict), st.reason, True, st.p_true
            )
        for qid in dict.fromkeys(self.order[s].question_id for s in restored):
            yield self.score(qid)

    def plan(self, pending: list[int]) -> None:
        """Queue what is left to judge. In question mode the queue holds one assertion per
        question, standing for all of it."""
        if self.run.question_mode:
            first: dict[str, int] = {}
            for seq in pending:
                first.setdefault(self.order[seq].question_id, seq)
            pending = list(first.values())
        self.todo = deque(pending)

    # the workers ------------------------------------------------------------------------------

    async def drive(self, emit: Emit[VetEvent]) -> None:
        """Run the workers until the queue is empty (or the run stops); the lifecycle's work."""
        del emit  # the same queue as self.emit
        count = max(1, self.settings.concurrency)
        ahead = getattr(self.run.provider, "connect_ahead", None)  # an HTTP judge's connections
        if ahead is not None and self.todo:
            size = 1 if self.run.question_mode else max(1, self.settings.batch_size)
            await ahead(min(count, -(-len(self.todo) // size)))  # the first round's requests
        workers = [asyncio.create_task(self._worker()) for _ in range(count)]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _worker(self) -> None:
        while (taken := await self._next_batch()) is not None:
            batch_no, seqs = taken
            try:
                await self._judge_batch(batch_no, seqs)
            finally:
                async with self.cond:
                    self.reserved.pop(batch_no, None)
                    self.in_flight -= 1
                    self.cond.notify_all()

    async def _next_batch(self) -> tuple[int, list[int]] | None:
        """Wait for work: (batch number, positions) to judge next, or None when this worker is
        done (nothing left, the run stopped, or the budget is reached)."""
        async with self.cond:
            while not self.todo and self.in_flight:
                await self.cond.wait()
            if not self.todo or self.fatal or self.stopped:
                self.cond.notify_all()
                return None
            seqs = self._take_batch()
            cost = self._within_budget(seqs)
            if cost is None:
                self.cond.notify_all()
                return None
            self.in_flight += 1
            self.counters.batches += 1
            batch_no = self.counters.batches
            self.reserved[batch_no] = cost
            return batch_no, seqs

    def _take_batch(self) -> list[int]:
        """The next batch: ``batch_size`` queued assertions, or in question mode one whole
        question. A question is always asked whole (the judge must see every option); options
        that already had a verdict are judged again with it."""
        todo = self.todo
        if not self.run.question_mode:
            return [todo.popleft() for _ in range(min(self.settings.batch_size, len(todo)))]
        qid = self.order[todo.popleft()].question_id
        return sorted(self.seqs_by_question[qid], key=lambda s: self.order[s].option_index)

    def _within_budget(self, seqs: list[int]) -> float | None:
        """The budget gate: the batch's estimated cost (0 without a budget) when what was spent,
        what is in flight and this batch stay within the budget, so the run ends within one batch
        of it; else None, and the run stops dispatching."""
        budget, price = self.run.budget, self.price
        if budget is None or price is None:
            return 0.0
        cost = self.planner.batch_cost(seqs, price)
        if (self.spent() or 0.0) + sum(self.reserved.values()) + cost > budget:
            self.stopped = f"not run: budget {usd(budget)} reached"
            return None
        return cost

    # one batch --------------------------------------------------------------------------------

    async def _judge_batch(self, batch_no: int, seqs: list[int]) -> None:
        for seq in seqs:
            self.states[seq].attempts += 1
        batch = _BatchReply(self, batch_no, seqs)
        batch_id = self.run.store.start_batch(self.run.run_id, batch_no, batch.prompt)
        await self._ask(batch)
        batch.close()
        self._store_batch(batch_id, batch, self._take_verdicts(batch))
        missing = [seq for seq in seqs if self.states[seq].verdict is None]
        if batch.status in ("failed", "cut"):
            self.emit(BatchFailed(batch_no, batch.error or batch.status, len(missing)))
        if batch.status == "failed":
            self.counters.failed += 1
            self.last_failure = batch.error
        if missing:
            if self.fatal:
                for seq in missing:
                    self.states[seq].attempts = self.settings.max_reasks + 1
            self._requeue_or_give_up(missing, batch.missing_reason())
        if self.settings.live:
            for qid in dict.fromkeys(self.order[s].question_id for s in seqs):
                self.emit(self.score(qid))
        self.emit(self.usage_event())

    async def _ask(self, batch: _BatchReply) -> None:
        """Send the batch; the reply streams into ``batch``. A key, model or logprobs request the
        provider refuses for good stops the run."""
        run = self.run

        def on_retry(notice: RetryNotice) -> None:
            self.emit(BatchRetried(batch.batch_no, notice.attempt, notice.error, notice.delay))

        request = ChatRequest(
            messages=(("system", run.prompt.system), ("user", batch.prompt)),
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
            logprobs=self.settings.logprobs,
            response_schema=batch.schema,
        )
        try:
            result = await run.provider.complete(
                request,
                on_text=batch.feed,
                on_retry=on_retry,
                on_logprobs=batch.index.extend if self.settings.logprobs else None,
            )
            batch.raw, batch.tokens_in, batch.tokens_out = (
                result.text,
                result.tokens_in,
                result.tokens_out,
            )
            self.counters.estimated += result.tokens_estimated
            self.counters.counted += result.tokens_counted
            if result.finish_reason == "length":
                batch.problem = CUT_AT_MAX_TOKENS
            elif result.finish_reason not in (None, "stop"):
                batch.error = f"finish_reason={result.finish_reason}"
        except StreamInterrupted as exc:
            batch.status, batch.error, batch.raw = "cut", str(exc), exc.partial
            # The server sent no usage for a stream it broke off; what it read and wrote counts.
            batch.tokens_in = sum(approx_tokens(text) for _, text in request.messages)
            batch.tokens_out = approx_tokens(exc.partial)
            self.counters.estimated += 1
        except RequestFailed as exc:
            batch.status, batch.error = "failed", str(exc)
            if not exc.retryable and exc.status in (401, 403, 404):
                self.fatal.append(exc)
            if isinstance(exc, (LogprobsRejected, StructuredRejected)):  # every batch alike
                self.fatal.append(exc)

    def _take_verdicts(self, batch: _BatchReply) -> list[tuple[int, bool, str, float | None]]:
        """Put the batch's verdicts into the states; the rows to store."""
        ident_of = {s: i for i, s in batch.seq_of.items()}
        for seq in batch.seqs:
            st = self.states[seq]
            ident = ident_of[seq]
            if ident in batch.got:
                self.judged += st.verdict is None
                st.verdict, st.reason = batch.got[ident].verdict, batch.got[ident].reason
                st.p_true = batch.p_true_of.get(ident)
        return [
            (batch.seq_of[i], v.verdict, v.reason, batch.p_true_of.get(i))
            for i, v in batch.got.items()
        ]

    def _store_batch(
        self, batch_id: int, batch: _BatchReply, rows: list[tuple[int, bool, str, float | None]]
    ) -> None:
        """The batch's raw reply, usage and verdicts (and cache entries) in one write."""
        self.counters.tokens_in += batch.tokens_in
        self.counters.tokens_out += batch.tokens_out
        self.reserved.pop(batch.batch_no, None)  # now counted in spent()
        self.run.store.finish_batch(
            batch_id,
            status=batch.status,
            raw_reply=batch.raw,
            error=batch.error,
            tokens_in=batch.tokens_in,
            tokens_out=batch.tokens_out,
            verdicts=rows,
            run_id=self.run.run_id,
            cache_judge=self.judge if self.use_cache else None,
            cache_items=[(self.order[s].text, v, r, p) for s, v, r, p in rows],
        )

    def _requeue_or_give_up(self, seqs: list[int], why: str) -> None:
        """Re-queue assertions still under the re-ask limit; mark the rest unjudged."""
        dead = []
        requeued = set()
        for seq in seqs:
            st = self.states[seq]
            if st.attempts <= self.settings.max_reasks:
                qid = self.order[seq].question_id
                if not self.run.question_mode or qid not in requeued:
                    self.todo.append(seq)
                    requeued.add(qid)
                self.counters.reasked += 1
            else:
                st.unjudged = f"{why} (after {st.attempts} attempts)"
                dead.append(seq)
        for event in self._give_up(dead):
            self.emit(event)

    def _give_up(self, seqs: list[int], why: str | None = None) -> list[AssertionUnjudged]:
        """Store assertions as unjudged (with ``why``, else the reason in their state)."""
        if why is not None:
            for s in seqs:
                self.states[s].unjudged = why
        self.unjudged += len(seqs)
        if not seqs:
            return []
        reasons = [(s, self.states[s].unjudged or "") for s in seqs]
        self.run.store.record_unjudged(self.run.run_id, reasons)
        return [
            AssertionUnjudged(s, self.order[s].question_id, self.order[s].option_index, reason)
            for s, reason in reasons
        ]

    # scores and usage -------------------------------------------------------------------------

    def score(self, question_id: str) -> QuestionScored:
        q = self.questions[question_id]
        verdicts: list[bool | None] = [None] * q.n
        p_true: list[float | None] = [None] * q.n
        unjudged = pending = 0
        for seq in self.seqs_by_question[question_id]:
            st, option = self.states[seq], self.order[seq].option_index
            verdicts[option] = st.verdict
            if st.verdict is not None:
                p_true[option] = st.p_true
            elif st.unjudged is not None:
                unjudged += 1
            else:
                pending += 1
        prior = self.settings.prior
        return score_question(
            q,
            verdicts,
            self.run.accuracy,
            prior=prior,
            unjudged=unjudged,
            pending=pending,
            model=self.model_scores.get(question_id),
            graded=graded_key_score(p_true, q.key, prior),
        )

    def spent(self) -> float | None:
        """USD spent so far at the price (None: no price known)."""
        if self.price is None:
            return None
        return self.price.cost(self.counters.tokens_in, self.counters.tokens_out)

    @property
    def tokens_note(self) -> str:
        """How the token figures were had where a server sent no usage: "estimated" when any
        reply's were, "counted by the server's tokenizer" when its tokenize endpoint counted
        them all; "" when every reply carried usage."""
        if self.counters.estimated:
            return "estimated"
        return "counted by the server's tokenizer" if self.counters.counted else ""

    def usage_event(self) -> UsageUpdated:
        usage = self.run.provider.usage
        return UsageUpdated(
            requests=usage.requests - self.base_usage[0],
            retries=usage.retries - self.base_usage[1],
            tokens_in=self.counters.tokens_in,
            tokens_out=self.counters.tokens_out,
            judged=self.judged,
            unjudged=self.unjudged,
            total=len(self.order),
            cached=self.counters.cached,
            cost=self.spent(),
            # Connections in use and the (adaptive) limit, as the provider counts them now.
            in_flight=usage.in_flight,
            limit=usage.limit,
            tokens_note=self.tokens_note,
        )

    # the end ----------------------------------------------------------------------------------

    def end(self) -> Iterator[VetEvent]:
        """After the workers: what was never sent becomes unjudged ("stopped" at the budget,
        "failed" when the run could not go on), then every question's score and the usage."""
        states = self.states
        leftover = [
            s
            for s in range(len(self.order))
            if states[s].verdict is None and states[s].unjudged is None
        ]
        self.error = str(self.fatal[0]) if self.fatal else None
        if self.stopped and not self.fatal and leftover:  # the budget: the rest is resumable
            why, self.not_run, self.status = self.stopped, len(leftover), STOPPED
            self.error = (
                f"{why.removeprefix('not run: ')}: {self.not_run} assertions not run"
                f" (resume with --resume {self.run.run_id})"
            )
            yield from self._give_up(leftover, why)
        if self.fatal:
            yield from self._give_up(leftover, f"run stopped: {self.fatal[0]}")
            self.status = FAILED
        elif self.counters.batches and self.counters.failed == self.counters.batches:
            # Not one request got a reply (a dead server, a wrong port): the run failed.
            self.status = FAILED
            self.error = (
                f"every request failed ({self.counters.failed} of {self.counters.batches}"
                f" batches): {self.last_failure}"
            )
        self.final_scores = {q.id: self.score(q.id) for q in self.run.quiz.questions}
        yield from self.final_scores.values()
        yield self.usage_event()

    def summary(self, elapsed: float, seed: int) -> RunSummary:
        """The run's summary; tokens and cost over every session of the run (a resumed run's
        earlier sessions are in the store's usage row; requests and retries stay this session's,
        as the progress line showed them)."""
        run, usage = self.run, self.usage_event()
        total = run.store.usage(run.run_id)
        tokens_in, tokens_out = total["tokens_in"], total["tokens_out"]
        counts: dict[str, int] = {}
        for sc in self.final_scores.values():
            counts[sc.badge.value] = counts.get(sc.badge.value, 0) + 1
        return RunSummary(
            run_id=run.run_id,
            status=self.status,
            quiz_title=run.quiz.title,
            quiz_path=run.quiz.source_path,
            judge_label=run.provider.label,
            simulated=run.provider.simulated,
            calibration=run.accuracy.label,
            seed=seed,
            batch_size=self.settings.batch_size,
            tpr=run.accuracy.tpr,
            tnr=run.accuracy.tnr,
            prior=self.settings.prior,
            questions=tuple(self._question_summary(q) for q in run.quiz.questions),
            badge_counts=counts,
            requests=usage.requests,
            retries=usage.retries,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            judged=usage.judged,
            unjudged=usage.unjudged,
            cached=self.counters.cached,
            reasked=self.counters.reasked,
            elapsed=elapsed,
            error=self.error,
            mode=self.settings.mode,
            tpr_ci=run.accuracy.tpr_ci,
            tnr_ci=run.accuracy.tnr_ci,
            cost=None if self.price is None else self.price.cost(tokens_in, tokens_out),
            not_run=self.not_run,
            tokens_estimated=self.counters.estimated > 0,
            prior_label=self.prior_label,
        )

    def _question_summary(self, q: Question) -> QuestionSummary:
        sc = self.final_scores[q.id]
        by_option = sorted(self.seqs_by_question[q.id], key=lambda s: self.order[s].option_index)
        sts = [self.states[s] for s in by_option]
        return QuestionSummary(
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
            p_true=tuple(st.p_true if st.verdict is not None else None for st in sts),
            graded=sc.graded,
            interval=sc.interval,
        )


__all__ = ["AssertionState", "Judging"]
