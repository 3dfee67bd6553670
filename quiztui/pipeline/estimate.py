"""The estimate of a vet run, from the prompts it will send, and the per-batch cost its budget uses.

:func:`estimate_run` answers ``quiztui vet QUIZ --estimate`` without creating a run: it plans the
same shuffled order (or reads a resumed run's), leaves out what the verdict cache or the resumed
run already has, and renders the first-pass batches with the run's own prompt builder.
:class:`Planner` is what :class:`~quiztui.pipeline.vet.VetRun` uses at run start and before
dispatching each batch under a budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from quiztui.core.assertions import Assertion, decompose, shuffled
from quiztui.core.calibration import JudgeProfile
from quiztui.core.estimate import (
    Estimate,
    Measured,
    ModelPrice,
    PlannedRequest,
    estimate,
    first_pass_batches,
    plan_request,
    render_judge_batch,
)
from quiztui.core.quiz import Quiz
from quiztui.errors import StoreError

if TYPE_CHECKING:
    from quiztui.pipeline.vet import VetRun


def default_seed(quiz: Quiz) -> int:
    """The shuffle seed of a run that names none: from the quiz content, so re-runs shuffle alike."""
    return int(quiz.content_hash()[:8], 16)


def measured_from_profile(profile: JudgeProfile) -> Measured:
    """Completion tokens and latency as the profile's calibration run measured them."""
    assertions = profile.confusion.total
    return Measured(
        tokens_out_per_assertion=profile.tokens_out / assertions if assertions else None,
        tokens_out_per_request=profile.tokens_out / profile.requests if profile.requests else None,
        latency=profile.latency,
        source=f"profile #{profile.id}" if profile.id is not None else "profile",
    )


class Planner:
    """Renders a batch exactly as the run will and counts its tokens."""

    def __init__(self, run: VetRun, order: Sequence[Assertion]) -> None:
        self.run = run
        self.order = order
        self.questions = {q.id: q.text for q in run.quiz.questions}

    def render(self, seqs: Sequence[int]) -> tuple[str, dict[str, Assertion]]:
        batch = [self.order[s] for s in seqs]
        text = self.questions[batch[0].question_id] if self.run.question_mode else None
        return render_judge_batch(self.run.prompt.user, batch, text)

    def plan(self, seqs: Sequence[int]) -> PlannedRequest:
        user, _ = self.render(seqs)
        return plan_request(
            self.run.prompt.system, user, len(seqs), self.run.question_mode, self.run.measured
        )

    def batch_cost(self, seqs: Sequence[int], price: ModelPrice) -> float:
        planned = self.plan(seqs)
        return price.cost(planned.prompt_tokens, planned.completion_tokens)

    def estimate(self, pending: Sequence[int], already_judged: int, batch_api: bool) -> Estimate:
        run = self.run
        size = run.settings.batch_size
        batches = first_pass_batches(self.order, pending, size, run.question_mode)
        latency, source = _latency(run, size)
        price = run.price.batched() if run.price is not None and batch_api else run.price
        result = estimate(
            (self.plan(b) for b in batches),
            assertions=len(self.order),
            already_judged=already_judged,
            model=run.provider.model,
            price=price,
            concurrency=run.settings.concurrency,
            question_mode=run.question_mode,
            measured=run.measured,
            latency=latency,
            latency_source=source,
        )
        if batch_api:  # the provider's fleet sets the pace, not our concurrency
            return _no_wall(result, "batch API: wall time set by the provider")
        return result


def _no_wall(result: Estimate, why: str) -> Estimate:
    return replace(result, wall_seconds=None, basis=f"{result.basis}; {why}")


def _latency(run: VetRun, batch_size: int) -> tuple[float | None, str]:
    """Seconds per request when no profile measured them: the resumed run's own batches, or the
    simulated judge's configured delays."""
    if run.measured is not None and run.measured.latency is not None:
        return None, ""  # the profile's
    if run.resume_run_id is not None:
        seconds = run.store.mean_batch_seconds(run.resume_run_id)
        if seconds is not None:
            return seconds, f"run {run.resume_run_id}'s batches"
    provider = run.provider
    if provider.simulated:
        latency = float(getattr(provider, "latency", 0.0))
        line_delay = float(getattr(provider, "line_delay", 0.0))
        lines = 1 if run.question_mode else batch_size
        return latency + line_delay * lines, "the simulated judge's latency settings"
    return None, ""


def plan_order(run: VetRun) -> tuple[list[Assertion], set[int]]:
    """The run order and the positions already judged, read-only (no run is created).

    For a resumed run: its stored order and verdicts; else the order a new run would shuffle.
    """
    by_uid = {a.uid: a for a in decompose(run.quiz)}
    if run.resume_run_id is None:
        seed = run.settings.seed if run.settings.seed is not None else default_seed(run.quiz)
        return shuffled(list(by_uid.values()), seed), set()
    record = run.store.get_run(run.resume_run_id)
    if record.quiz_hash != run.quiz.content_hash():
        raise StoreError(
            f"run {record.id} was made on a different version of this quiz; start a new run"
        )
    order = [by_uid[f"{qid}#{opt}"] for _, qid, opt, _, _ in run.store.run_order(record.id)]
    judged = {s for s, v in run.store.verdicts(record.id).items() if v.verdict is not None}
    return order, judged


def estimate_run(run: VetRun, *, batch_api: bool = False) -> Estimate:
    """The estimate of ``run`` before it starts; reads the store, writes nothing."""
    if run.resume_run_id is not None:
        record = run.store.get_run(run.resume_run_id)
        run.settings = replace(run.settings, batch_size=record.batch_size)
        batch_api = batch_api or bool(record.params.get("batch_api"))
    order, judged = plan_order(run)
    pending = [s for s in range(len(order)) if s not in judged]
    cached = 0
    if run.settings.use_cache and not run.provider.simulated and pending:
        hits = run.store.cache.get_many(run.judge_key(), [order[s].text for s in pending])
        kept = [s for s in pending if order[s].text not in hits]
        cached = len(pending) - len(kept)
        pending = kept
    return Planner(run, order).estimate(pending, len(judged) + cached, batch_api)


__all__ = ["Planner", "default_seed", "estimate_run", "measured_from_profile", "plan_order"]
