"""Before a run: how many requests and tokens it takes, what it costs and how long it runs.

The estimate is made from the prompts the run will actually send: the pipeline plans the first
pass of batches (:func:`first_pass_batches`) and renders each with :func:`render_judge_batch`, the
same function the run uses, and this module counts their tokens.

Token counting is an approximation, not a tokenizer: ``ceil(len(text) / 4)`` per message
(:func:`approx_tokens`; the loopback fake server and the simulated judge count the same way).
Real tokenizers give about four characters per token for English text; counts for other scripts
can be far off.

Completion tokens come from one of two bases, named in :attr:`Estimate.basis`:

- ``profile``: a judge profile (a calibration of this very judge set-up) measured the completion
  tokens per assertion (per request in question mode); the estimate scales that;
- ``reply format``: the shape the judge prompt asks for, one ``A<n>: FALSE - <reason>`` line per
  assertion (``ANSWER: <letter> - <reason>`` per question) with a reason of
  :data:`ASSUMED_REASON_CHARS` characters. That length is an assumption, not a measurement:
  calibrate the judge to replace it with measured figures.

Pure: no I/O; the pipeline gathers the inputs (pipeline/estimate.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from quiztui.core.assertions import Assertion, batch_ids, render_batch
from quiztui.core.records import record

CHARS_PER_TOKEN = 4
# Assumed length of a verdict's reason ("does not match the facts" is 24). The judge prompt asks
# for at most 12 words; short reasons are the common case. Replaced by measured figures when a
# judge profile exists.
ASSUMED_REASON_CHARS = 24
TOKEN_COUNTER = "approx: ceil(characters / 4) per message"


def usd(value: float) -> str:
    """Dollars with cents, and with enough decimals that small amounts do not read as $0.00."""
    if value >= 1 or value <= 0:
        return f"${value:,.2f}"
    decimals = max(2, 2 - math.floor(math.log10(value)))
    text = f"{value:.{decimals}f}".rstrip("0")
    return "$" + (text if len(text.split(".")[1]) >= 2 else f"{value:.2f}")


def approx_tokens(text: str) -> int:
    """Tokens of a text: one per four characters, rounded up (no tokenizer is a dependency)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@record(frozen=True)
class ModelPrice:
    """USD per million tokens for one model (from ``[cost]``); ``batch_discount`` multiplies both
    when the run goes through a provider batch API."""

    input_per_mtok: float
    output_per_mtok: float
    source: str = "default"  # the [cost] entry it came from: a model name or "default"
    batch_discount: float = 0.5

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1e6

    def batched(self) -> ModelPrice:
        """The price through a batch API (about half the online price)."""
        return replace(
            self,
            input_per_mtok=self.input_per_mtok * self.batch_discount,
            output_per_mtok=self.output_per_mtok * self.batch_discount,
            source=f"{self.source}, batch ×{self.batch_discount:g}",
            batch_discount=1.0,
        )

    def describe(self) -> str:
        return (
            f"${self.input_per_mtok:g} in / ${self.output_per_mtok:g} out per Mtok ({self.source})"
        )


@record(frozen=True)
class Measured:
    """What a judge profile measured for this judge set-up (None: not measured)."""

    tokens_out_per_assertion: float | None = None
    tokens_out_per_request: float | None = None
    latency: float | None = None  # mean seconds per request
    source: str = ""  # e.g. "profile #3"


@record(frozen=True)
class PlannedRequest:
    assertions: int
    prompt_tokens: int
    completion_tokens: int


@record(frozen=True)
class Estimate:
    """What a run (or the rest of a resumed one) will take. ``cost`` None: no price known."""

    assertions: int  # in the quiz
    already_judged: int  # from a resumed run or the verdict cache: not sent
    requests: int  # first pass; re-asks of missing verdicts come on top
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    model: str
    price: str  # how the cost was priced, or why it is unknown
    wall_seconds: float | None
    concurrency: int
    basis: str  # where the completion tokens and the wall time came from
    mode: str = "assertion"
    token_counter: str = TOKEN_COUNTER

    @property
    def to_judge(self) -> int:
        return self.assertions - self.already_judged

    def cost_text(self) -> str:
        return usd(self.cost) if self.cost is not None else f"unknown ({self.price})"

    def wall_text(self) -> str:
        if self.wall_seconds is None:
            return "unknown (no measured latency: calibrate this judge)"
        return f"~{_duration(self.wall_seconds)} at concurrency {self.concurrency}"

    def short(self) -> str:
        """One line for the TUI header and the headless progress output."""
        cost = usd(self.cost) if self.cost is not None else "cost unknown"
        wall = f"~{_duration(self.wall_seconds)}" if self.wall_seconds is not None else "time ?"
        return (
            f"estimate: {self.requests:,} requests · {self.prompt_tokens:,}/"
            f"{self.completion_tokens:,} tokens · {cost} · {wall}"
        )

    def rows(self) -> list[tuple[str, str]]:
        """The ``--estimate`` table, label → value."""
        return [
            ("assertions", f"{self.assertions:,}"),
            ("already judged", f"{self.already_judged:,} (resumed run or a real judge's cache)"),
            ("to judge", f"{self.to_judge:,}"),
            ("requests", f"{self.requests:,} (first pass; re-asks come on top)"),
            ("prompt tokens", f"{self.prompt_tokens:,}"),
            ("completion tokens", f"{self.completion_tokens:,}"),
            ("cost", self.cost_text()),
            ("price", self.price if self.cost is not None else "-"),
            ("wall time", self.wall_text()),
            ("basis", self.basis),
            ("token count", self.token_counter),
        ]

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {f: getattr(self, f) for f in self.__dataclass_fields__}
        data["to_judge"] = self.to_judge
        return data


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def first_pass_batches(
    order: Sequence[Assertion], pending: Sequence[int], size: int, question_mode: bool
) -> list[list[int]]:
    """The batches a run sends first, as run-order positions, in the order it sends them.

    Assertion mode: ``size`` pending assertions at a time, in run order. Question mode: one request
    per question with a pending assertion, carrying every option of it (the judge must see them
    all), in option order. Mirrors ``take_batch`` in pipeline/vet.py.
    """
    if not question_mode:
        return [list(pending[i : i + size]) for i in range(0, len(pending), size)]
    by_question: dict[str, list[int]] = {}
    for seq, a in enumerate(order):
        by_question.setdefault(a.question_id, []).append(seq)
    out = []
    seen: set[str] = set()
    for seq in pending:
        qid = order[seq].question_id
        if qid not in seen:
            seen.add(qid)
            out.append(sorted(by_question[qid], key=lambda s: order[s].option_index))
    return out


def render_judge_batch(
    template: str, batch: Sequence[Assertion], question_text: str | None = None
) -> tuple[str, dict[str, Assertion]]:
    """The user prompt of one judge request and its id → assertion map.

    With ``question_text`` the per-question template is filled (question mode), else the batch of
    assertion lines. The run and the estimate both render through here.
    """
    if question_text is not None:
        from quiztui.core.question_mode import render_question_batch  # question mode only

        return render_question_batch(template, question_text, batch)
    return render_batch(template, batch)


def format_reply(n: int, question_mode: bool) -> str:
    """A reply of the shape the judge prompt asks for, with reasons of the assumed length."""
    reason = "x" * ASSUMED_REASON_CHARS
    if question_mode:
        return f"ANSWER: A - {reason}\n"
    return "".join(f"{ident}: FALSE - {reason}\n" for ident in batch_ids(n))


def plan_request(
    system: str, user: str, n: int, question_mode: bool, measured: Measured | None
) -> PlannedRequest:
    """Tokens of one request of ``n`` assertions: prompt counted, completion estimated."""
    prompt = approx_tokens(system) + approx_tokens(user)
    per_request = measured.tokens_out_per_request if measured else None
    per_assertion = measured.tokens_out_per_assertion if measured else None
    if question_mode and per_request is not None:
        completion = per_request
    elif not question_mode and per_assertion is not None:
        completion = per_assertion * n
    else:
        completion = approx_tokens(format_reply(n, question_mode))
    return PlannedRequest(n, prompt, math.ceil(completion))


def completion_basis(question_mode: bool, measured: Measured | None) -> str:
    """Where the completion tokens come from: the profile's measurement, else the reply format."""
    if measured is not None:
        unit = "request" if question_mode else "assertion"
        per = (
            measured.tokens_out_per_request if question_mode else measured.tokens_out_per_assertion
        )
        if per is not None:
            return (
                f"profile: completion tokens per {unit} measured by {measured.source} ({per:.1f})"
            )
    unit = "question" if question_mode else "assertion"
    return (
        f"reply format: one verdict line per {unit}, reason assumed"
        f" {ASSUMED_REASON_CHARS} characters"
    )


def estimate(
    requests: Iterable[PlannedRequest],
    *,
    assertions: int,
    already_judged: int,
    model: str,
    price: ModelPrice | None,
    concurrency: int,
    question_mode: bool,
    measured: Measured | None = None,
    latency: float | None = None,
    latency_source: str = "",
) -> Estimate:
    """Sum the planned requests, price them and time them.

    Wall time: requests go out ``concurrency`` at a time, each taking the measured mean latency
    (``latency`` overrides the profile's; ``latency_source`` says where it came from).
    """
    planned = list(requests)
    prompt = sum(r.prompt_tokens for r in planned)
    completion = sum(r.completion_tokens for r in planned)
    basis = [completion_basis(question_mode, measured)]
    seconds = latency if latency is not None else (measured.latency if measured else None)
    if seconds is not None:
        source = latency_source or (measured.source if measured else "")
        basis.append(f"wall time from {source} ({seconds:.2f}s per request)")
        waves = math.ceil(len(planned) / max(1, concurrency))
        wall: float | None = waves * seconds
    else:
        wall = None
    return Estimate(
        assertions=assertions,
        already_judged=already_judged,
        requests=len(planned),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=price.cost(prompt, completion) if price is not None else None,
        model=model,
        price=price.describe() if price is not None else f"no price for {model} in [cost]",
        wall_seconds=wall,
        concurrency=concurrency,
        basis="; ".join(basis),
        mode="question" if question_mode else "assertion",
    )


__all__ = [
    "ASSUMED_REASON_CHARS",
    "Estimate",
    "Measured",
    "ModelPrice",
    "PlannedRequest",
    "approx_tokens",
    "estimate",
    "first_pass_batches",
    "format_reply",
    "plan_request",
    "render_judge_batch",
    "usd",
]
