"""The vet run: quiz → shuffled assertions → batches → judge → verdicts → scores, as events.

Every verdict is written to the store when its batch ends, so a killed run resumes without paying
twice; verdicts are also emitted the moment their reply line is parsed, so the UI fills live.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import field, replace

from quiztui.core.assertions import Assertion, decompose, shuffled
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.estimate import Measured, ModelPrice
from quiztui.core.prior import (
    PROFILE_WEIGHT,
    PriorEstimate,
    estimate_prior,
    fit_prior_and_rates,
)
from quiztui.core.quiz import Quiz
from quiztui.core.records import record
from quiztui.errors import ConfigError, StoreError
from quiztui.pipeline.estimate import default_seed
from quiztui.pipeline.events import RunFinished, VetEvent
from quiztui.pipeline.judging import AssertionState, Judging
from quiztui.pipeline.lifecycle import CANCELLED, Emit, RunLifecycle
from quiztui.pipeline.prompts import PromptTemplate
from quiztui.pipeline.scoring import known_profile
from quiztui.pipeline.summary import summary_from_dict, summary_to_dict
from quiztui.providers.base import Provider
from quiztui.store import Store
from quiztui.store.cache import judge_key as make_judge_key
from quiztui.store.leases import HEARTBEAT_SECONDS, Lease

log = logging.getLogger(__name__)


@record(frozen=True)
class VetSettings:
    batch_size: int = 20
    concurrency: int = 16
    seed: int | None = None  # None: derived from the quiz content, so re-runs shuffle alike
    max_reasks: int = 2
    prior: float = 0.95  # fixed; with prior_auto, the default the estimate leans on
    prior_auto: bool = False  # prior = "auto": estimated from the run's verdicts at its end
    # prior = "auto": the share of wrong keys the judge model starts from (None: its published
    # default); a re-judged edit takes its run's, which one question cannot move
    wrong_share: float | None = None
    fit_rates: bool = False  # prior = "auto+rates": the judge's TPR/TNR fitted from them too
    temperature: float = 0.0
    max_tokens: int | None = None
    use_cache: bool = True
    mode: str = "assertion"  # "assertion": batches of assertions; "question": one per question
    logprobs: bool = False  # ask the judge for token logprobs: P(true) per assertion
    # A live view's events as the run goes: each verdict as it is read (VerdictReceived) and the
    # score of each question a batch touched (QuestionScored). False: neither, the scores only at
    # the end (a headless run: its progress line counts verdicts from the usage events, and it
    # shows only the final scores; 20 events a reply were a tenth of a reply's CPU).
    live: bool = True

    @property
    def profile_batch_size(self) -> int:
        """The batch size a judge profile of this set-up is kept under: one request per question
        in question mode, whatever ``batch_size`` says."""
        return self.batch_size if self.mode == "assertion" else 1


@record
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
    kind: str = "vet"  # what the run is for, kept with it: "vet", "calibrate" or "panel"

    run_id: int = 0
    # prior = "auto": the estimate every question was scored with at the end (None: fixed prior)
    prior_estimate: PriorEstimate | None = field(default=None, init=False)
    _lease: Lease | None = field(default=None, init=False, repr=False)

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

    def _prepare(self) -> tuple[list[Assertion], dict[int, AssertionState], int, bool]:
        """(run order, states of assertions already judged, seed, resumed): a resumed run's from
        the store, else a new run created with a fresh shuffle."""
        by_uid = {a.uid: a for a in decompose(self.quiz)}
        if self.resume_run_id is not None:
            return self._resume(self.resume_run_id, by_uid)
        seed = self.settings.seed if self.settings.seed is not None else default_seed(self.quiz)
        order = shuffled(list(by_uid.values()), seed)
        self.run_id = self._create(order, seed)
        self._lease = self.store.leases.holder(self.run_id)  # written with the run
        if self.kind != "vet":
            self.store.set_kind(self.run_id, self.kind)
        return order, {}, seed, False

    def _resume(
        self, run_id: int, by_uid: dict[str, Assertion]
    ) -> tuple[list[Assertion], dict[int, AssertionState], int, bool]:
        record = self.store.get_run(run_id)
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
        # One process per run: a live holder raises RunBusy (exit 2), a dead one is taken over
        # (the CLI takes the lease first and says so; store/leases.py).
        self._lease, _ = self.store.leases.acquire(record.id)
        order = [by_uid[f"{qid}#{opt}"] for _, qid, opt, _, _ in self.store.run_order(record.id)]
        states: dict[int, AssertionState] = {}
        for seq, stored in self.store.verdicts(record.id).items():
            if stored.verdict is not None:
                states[seq] = AssertionState(
                    stored.verdict, stored.reason, True, p_true=stored.p_true
                )
        self.run_id = record.id
        self.store.set_status(record.id, "running")
        return order, states, record.seed, True

    def _create(self, order: list[Assertion], seed: int) -> int:
        p, s = self.provider, self.settings
        return self.store.create_run(
            quiz=self.quiz,
            provider=p.name,
            model=p.model,
            base_url=p.base_url,
            judge_label=p.label,
            simulated=p.simulated,
            judge_key=self.judge_key(),
            prompt_hash=self.prompt.hash,
            seed=seed,
            batch_size=s.batch_size,
            params={
                "concurrency": s.concurrency,
                "temperature": s.temperature,
                "max_reasks": s.max_reasks,
                "prior": s.prior,
                "tpr": self.accuracy.tpr,
                "tnr": self.accuracy.tnr,
                "calibration": self.accuracy.label,
                "tpr_ci": self.accuracy.tpr_ci,
                "tnr_ci": self.accuracy.tnr_ci,
            }
            # A batch provider (pipeline/batch.py) says which batch API: the price is about half.
            | ({"batch_api": api} if (api := getattr(p, "batch_api", None)) else {}),
            order=order,
        )

    # the run ----------------------------------------------------------------------------------

    async def events(self) -> AsyncGenerator[VetEvent, None]:
        """The run as events: prepare (or resume), restore what is judged already, start, judge
        in batches (the workers of :class:`~quiztui.pipeline.judging.Judging`), end, summarise.

        A cancelled run (the stream closed, or its task cancelled) is recorded "cancelled"; a run
        that dies of an error stays "running" (or "batch-pending") in the store, to be resumed
        ("interrupted" once its lease is gone: store/leases.py). The run's lease is held, and
        beaten every few seconds, until the stream ends.
        """
        started = self.clock()
        life: RunLifecycle[VetEvent, Store] = RunLifecycle(
            self.store, early_status=CANCELLED, early_on=(asyncio.CancelledError, GeneratorExit)
        )
        order, states, seed, resumed = self._prepare()
        heartbeat = asyncio.create_task(self._heartbeat()) if self._lease else None
        try:
            life.run_id = self.run_id
            judging = self._judging(order, states, life.emit)
            # A batch provider (pipeline/batch.py) stores its batches with the run and reports on them
            # as ProviderBatchStatus events in this stream.
            if (attach := getattr(self.provider, "attach_run", None)) is not None:
                attach(self.store, self.run_id, life.emit)
            restored, pending = judging.restore()
            yield judging.started(seed, resumed, len(restored), pending)
            for event in judging.restored_events(restored):
                yield event
            judging.plan(pending)
            async with life.stream(judging.drive) as events:
                async for event in events:
                    yield event
            self._auto_prior(judging)
            for event in judging.end():
                yield event
            summary = judging.summary(self.clock() - started, seed)
            life.finish(judging.status, summary_to_dict(summary))
            yield RunFinished(summary)
        finally:  # no await here: this runs on the generator's close too
            if heartbeat is not None:
                heartbeat.cancel()
            if self._lease is not None:
                self.store.leases.release(self._lease)
                self._lease = None

    def _judging(
        self, order: list[Assertion], states: dict[int, AssertionState], emit: Emit[VetEvent]
    ) -> Judging:
        """The scheduler that judges this run (pipeline/recorded.py takes recorded answers
        instead of asking)."""
        return Judging(self, order, states, emit)

    def _auto_prior(self, judging: Judging) -> None:
        """``prior = "auto"``: the share of right keys estimated from this run's own verdicts
        (empirical Bayes, :mod:`quiztui.core.prior`); the end's scores and the summary use it.
        While the run streams, questions are scored with the default it leans on."""
        if not self.settings.prior_auto:
            return
        questions: list[tuple[list[bool | None], int]] = []
        for q in self.quiz.questions:
            verdicts: list[bool | None] = [None] * q.n
            for seq in judging.seqs_by_question.get(q.id, ()):
                st = judging.states.get(seq)
                if st is not None:
                    verdicts[judging.order[seq].option_index] = st.verdict
            questions.append((verdicts, q.key))
        if self.settings.fit_rates:  # the end's scores and the summary use the fitted rates
            fit = fit_prior_and_rates(
                questions, self.accuracy, self.settings.prior, weight=PROFILE_WEIGHT
            )
            estimate, self.accuracy = fit.prior, fit.accuracy
        else:  # the judge model (core/judges): every question scored through it at the end
            estimate = self._judge_model(judging, questions)
        self.prior_estimate = estimate
        log.info("run %s: prior %s", self.run_id, estimate.label)
        judging.settings = replace(judging.settings, prior=estimate.value)
        judging.prior_label = estimate.label

    def _judge_model(
        self, judging: Judging, questions: list[tuple[list[bool | None], int]]
    ) -> PriorEstimate:
        """``prior = "auto"``: this run's verdicts through :mod:`quiztui.core.judges` (one judge;
        a question-mode judge picks one option). The share of wrong keys stays at its published
        default unless the judge's rates are measured and the quiz's evidence is decisive; each
        question's confidence, suggestion and interval at the end are the model's."""
        from quiztui.core.judges import DifficultyJudges, Observations, Profile

        judged = [(v, k) for v, k in questions if any(x is not None for x in v)]
        counts = self.accuracy.counts if self.accuracy.calibrated else None
        profile = None
        if counts is not None:
            tp, fn, tn, fp = (int(c) for c in counts)
            profile = Profile(tp, fn, tn, fp)
        known = profile is None and known_profile(self.provider) is not None
        if known:  # a simulated judge's rates are set, not estimated: they are known exactly
            profile = known_profile(self.provider)
        ids = [
            q.id
            for q, (v, _) in zip(self.quiz.questions, questions, strict=True)
            if any(x is not None for x in v)
        ]
        if not judged:
            return estimate_prior([], self.accuracy, self.settings.prior)
        obs = Observations.build(
            [[v] for v, _ in judged],
            [k for _, k in judged],
            ["pick" if self.question_mode else "assertion"],
        )
        share_default = self.settings.wrong_share
        model = (
            DifficultyJudges(profiles=[profile])
            if share_default is None
            else DifficultyJudges(wrong_share=share_default, profiles=[profile], fixed_share=True)
        )
        fit = model.fit(obs)
        judging.model_scores = {
            qid: (
                fit.confidence(i),
                *fit.suggested(i, judged[i][1]),
                (float(fit.interval[i, 0]), float(fit.interval[i, 1])),
            )
            for i, qid in enumerate(ids)
        }
        share = fit.wrong_share
        lo, hi = share.interval
        if share.identified:
            where = (
                "from this quiz (the SIMULATED judge's set rates)"
                if known
                else ("from this quiz (measured judge)")
            )
        else:
            why = "not moved by this quiz" if profile is not None else "judge not measured"
            where = f"default {share.default:.0%} wrong keys (published audits; {why})"
        note = f"auto {1 - share.value:.2f} [{1 - hi:.2f}, {1 - lo:.2f}] · {where}"
        return PriorEstimate(
            1.0 - share.value,
            (1.0 - hi, 1.0 - lo),
            len(judged),
            0.0 if share.identified else share.strength,
            self.settings.prior,
            fit.iterations,
            fit.converged,
            note=note,
        )

    async def _heartbeat(self) -> None:
        """Tell other processes this run's holder is alive (store/leases.py)."""
        while self._lease is not None:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            if self._lease is not None and not self.store.leases.beat(self._lease):
                log.warning("run %d: its lease was taken over by another process", self.run_id)
                return


__all__ = ["VetRun", "VetSettings", "default_seed", "summary_from_dict", "summary_to_dict"]
