"""Typed events of a vet run. Past tense: each states a fact that has happened."""

from __future__ import annotations

from dataclasses import field

from quiztui.core.estimate import Estimate
from quiztui.core.kscore import Badge
from quiztui.core.records import record


@record(frozen=True)
class RunStarted:
    run_id: int
    quiz_title: str
    quiz_path: str | None
    questions: int
    assertions: int
    batches: int  # planned first-pass batches for assertions not already judged
    already_judged: int  # verdicts taken from a resumed run or the cache
    judge_label: str  # e.g. "openai-compat gpt-4o-mini @ http://…" or "SIMULATED (TPR 0.9 …)"
    simulated: bool
    seed: int
    batch_size: int
    concurrency: int
    calibration: str  # "uncalibrated" or the profile's label
    resumed: bool = False
    tpr: float = 0.9  # the judge accuracy this run scores with (profile or defaults)
    tnr: float = 0.9
    mode: str = "assertion"
    estimate: Estimate | None = None  # requests, tokens, cost and time of what is left to judge
    budget: float | None = None  # USD this run may spend (None: no limit)
    tpr_ci: tuple[float, float] | None = None  # from the judge profile; None when uncalibrated
    tnr_ci: tuple[float, float] | None = None


@record(frozen=True)
class VerdictReceived:
    seq: int  # position of the assertion in the shuffled run order (stable across resume)
    question_id: str
    option_index: int
    verdict: bool
    reason: str
    cached: bool = False
    p_true: float | None = None


@record(frozen=True)
class AssertionUnjudged:
    seq: int
    question_id: str
    option_index: int
    reason: str


@record(frozen=True)
class BatchRetried:
    batch_no: int
    attempt: int
    error: str  # error class and detail, e.g. "HTTP 429" or "stream cut"
    delay: float


@record(frozen=True)
class BatchFailed:
    batch_no: int
    error: str
    assertions: int  # how many assertions go back to the queue (or end unjudged)


@record(frozen=True)
class QuestionScored:
    question_id: str
    k: int
    n: int
    judged: int
    badge: Badge
    confidence: float
    suggested_option: int | None
    suggested_p: float | None
    interval: tuple[float, float] | None = None
    graded: float | None = None  # P(key correct) from per-option P(true), when logprobs came


@record(frozen=True)
class UsageUpdated:
    requests: int
    retries: int
    tokens_in: int
    tokens_out: int
    judged: int
    unjudged: int
    total: int
    cached: int
    in_flight: int = 0  # requests on the wire now (the provider's connections in use)
    limit: int = 0  # the provider's concurrency limit now (adaptive); 0 when unknown
    cost: float | None = None  # USD so far at the configured price; None when no price is known
    # "estimated" / "counted by the server's tokenizer" where a server sent no usage; "" otherwise
    tokens_note: str = ""


@record(frozen=True)
class QuestionSummary:
    question_id: str
    text: str
    options: tuple[str, ...]
    key: int
    k: int
    badge: Badge
    confidence: float
    suggested_option: int | None
    suggested_p: float | None
    verdicts: tuple[bool | None, ...]
    reasons: tuple[str, ...]
    p_true: tuple[float | None, ...] = ()  # per option, from token logprobs; None: not known
    graded: float | None = None  # P(key correct) from p_true (core.logprobs.graded_key_score)
    interval: tuple[float, float] | None = None  # 95 % interval of confidence (calibrated judge)


@record(frozen=True)
class RunSummary:
    run_id: int
    status: str  # "finished", "cancelled", "failed"
    quiz_title: str
    quiz_path: str | None
    judge_label: str
    simulated: bool
    calibration: str
    seed: int
    batch_size: int
    tpr: float
    tnr: float
    prior: float
    questions: tuple[QuestionSummary, ...]
    badge_counts: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    retries: int = 0
    tokens_in: int = 0  # over every session of the run (a resumed run counts its earlier parts)
    tokens_out: int = 0
    judged: int = 0
    unjudged: int = 0
    cached: int = 0
    reasked: int = 0
    elapsed: float = 0.0
    error: str | None = None
    mode: str = "assertion"
    tpr_ci: tuple[float, float] | None = None  # from the judge profile; None when uncalibrated
    tnr_ci: tuple[float, float] | None = None
    # USD at the configured price (batch price where batched), over every session of the run
    cost: float | None = None
    not_run: int = 0  # of the unjudged: never sent because the run stopped (budget reached)
    tokens_estimated: bool = False  # some token counts are estimates (a server sent no usage)
    # prior = "auto": the estimate's label (core/prior.PriorEstimate.label); None: a fixed prior
    prior_label: str | None = None


@record(frozen=True)
class ProviderBatchStatus:
    """A provider batch (OpenAI Batch / Anthropic Message Batches) was submitted, polled or
    collected. Counts are requests (one per judge batch), not assertions."""

    batch_id: str  # the provider's id
    status: str  # the provider's word ("validating", "in_progress", "ended", …) or "collected"
    completed: int
    failed: int
    total: int
    api: str = "openai"  # "openai" | "anthropic"
    resumed: bool = False  # a batch submitted by an earlier process, found in the store


@record(frozen=True)
class RunFinished:
    summary: RunSummary


VetEvent = (
    RunStarted
    | VerdictReceived
    | AssertionUnjudged
    | BatchRetried
    | BatchFailed
    | QuestionScored
    | UsageUpdated
    | ProviderBatchStatus
    | RunFinished
)
