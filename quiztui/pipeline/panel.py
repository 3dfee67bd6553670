"""A panel of judges on one quiz: Dawid–Skene estimates of each judge, agreement, disagreements.

Every member judges the whole quiz as an ordinary vet run (stored, resumable, its own shuffle).
Then, with no gold labels, Dawid–Skene EM estimates each judge's TPR/TNR and every assertion's
probability of being true; each question gets the single-correct-answer posterior from all the
judges' verdicts together (each judge weighted by its estimated TPR/TNR). Cohen's κ for each pair
and Fleiss' κ over the panel say how far the judges agree beyond chance.

Dawid–Skene assumes judges err independently given the truth. Repeated samples of one model at
temperature > 0 share that model's blind spots, so their estimated accuracies run optimistic.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from quiztui.core.agreement import (
    DawidSkeneResult,
    cohen_kappa,
    dawid_skene_binary,
    fleiss_kappa_labels,
)
from quiztui.core.assertions import decompose
from quiztui.core.bayes import JudgeAccuracy, panel_posterior
from quiztui.core.quiz import Question, Quiz
from quiztui.pipeline.events import RunFinished, RunSummary, VetEvent
from quiztui.pipeline.lifecycle import Emit, RunLifecycle, RunTable
from quiztui.pipeline.prompts import PromptTemplate
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import Provider
from quiztui.store import Store


@dataclass(frozen=True, slots=True)
class PanelMemberEvent:
    """An event of one member's vet run (``judge`` indexes the panel)."""

    judge: int
    event: VetEvent


@dataclass(frozen=True, slots=True)
class JudgeEstimate:
    label: str
    run_id: int
    tpr: float
    tnr: float
    judged: int
    said_true: int


@dataclass(frozen=True, slots=True)
class PanelQuestion:
    question_id: str
    text: str
    options: tuple[str, ...]
    key: int
    confidence: float  # panel posterior that the key is the correct option
    suggested_option: int | None
    suggested_p: float | None
    verdicts: tuple[tuple[bool | None, ...], ...]  # [judge][option]
    p_true: tuple[float, ...]  # Dawid–Skene P(option true)
    disagreement: bool  # some option got different verdicts from different judges


@dataclass(frozen=True, slots=True)
class PanelSummary:
    quiz_title: str
    judges: tuple[JudgeEstimate, ...]
    prevalence: float  # estimated share of true assertions
    em_iterations: int
    em_converged: bool
    cohen: tuple[tuple[int, int, float], ...]  # (judge a, judge b, κ)
    fleiss: float
    questions: tuple[PanelQuestion, ...]

    @property
    def disagreements(self) -> list[PanelQuestion]:
        return [q for q in self.questions if q.disagreement]


@dataclass(frozen=True, slots=True)
class PanelFinished:
    summary: PanelSummary


PanelEvent = PanelMemberEvent | PanelFinished


@dataclass
class PanelRun:
    quiz: Quiz
    providers: Sequence[Provider]
    store: Store
    prompt: PromptTemplate
    settings: VetSettings = VetSettings()
    prior: float = 0.95

    async def events(self) -> AsyncIterator[PanelEvent]:
        if len(self.providers) < 2:
            raise ValueError("a panel needs at least two judges")
        summaries: dict[int, RunSummary] = {}
        # Each member is a stored vet run with its own lifecycle; the panel itself stores nothing.
        life: RunLifecycle[PanelMemberEvent, RunTable] = RunLifecycle()
        async with life.stream(partial(self._members, summaries)) as events:
            async for item in events:
                yield item
        yield PanelFinished(
            aggregate(self.quiz, [summaries[i] for i in range(len(self.providers))], self.prior)
        )

    async def _members(
        self, summaries: dict[int, RunSummary], emit: Emit[PanelMemberEvent]
    ) -> None:
        await asyncio.gather(
            *(self._member(i, p, summaries, emit) for i, p in enumerate(self.providers))
        )

    async def _member(
        self,
        index: int,
        provider: Provider,
        summaries: dict[int, RunSummary],
        emit: Emit[PanelMemberEvent],
    ) -> None:
        # Members keep their own shuffle, so no judge sees the quiz in another's order.
        seed = self.settings.seed
        settings = replace(self.settings, seed=None if seed is None else seed + index)
        run = VetRun(self.quiz, provider, self.store, self.prompt, settings, kind="panel")
        async for event in run.events():
            if isinstance(event, RunFinished):
                summaries[index] = event.summary
            emit(PanelMemberEvent(index, event))


def aggregate(quiz: Quiz, runs: Sequence[RunSummary], prior: float = 0.95) -> PanelSummary:
    """Dawid–Skene, κ and panel posteriors from the members' finished runs."""
    uids = [a.uid for a in decompose(quiz)]
    index = {u: i for i, u in enumerate(uids)}
    labels = np.full((len(uids), len(runs)), np.nan)
    for j, run in enumerate(runs):
        for qs in run.questions:
            for opt, v in enumerate(qs.verdicts):
                if v is not None:
                    labels[index[f"{qs.question_id}#{opt}"], j] = 1.0 if v else 0.0
    ds = dawid_skene_binary(labels)
    estimates = tuple(
        JudgeEstimate(
            label=run.judge_label,
            run_id=run.run_id,
            tpr=float(ds.tpr[j]),
            tnr=float(ds.tnr[j]),
            judged=int(np.sum(~np.isnan(labels[:, j]))),
            said_true=int(np.nansum(labels[:, j])),
        )
        for j, run in enumerate(runs)
    )
    as_lists: list[list[bool | None]] = [
        [None if math.isnan(x) else bool(x) for x in labels[:, j]] for j in range(len(runs))
    ]
    cohen = tuple(
        (a, b, float(cohen_kappa(as_lists[a], as_lists[b])))
        for a, b in itertools.combinations(range(len(runs)), 2)
    )
    fleiss = float(fleiss_kappa_labels([list(row) for row in zip(*as_lists, strict=True)]))
    accuracies = [
        JudgeAccuracy(e.tpr, e.tnr, calibrated=False, label="Dawid–Skene") for e in estimates
    ]
    questions = tuple(
        _panel_question(
            q, [index[f"{q.id}#{i}"] for i in range(q.n)], as_lists, accuracies, ds, prior
        )
        for q in quiz.questions
    )
    return PanelSummary(
        quiz_title=quiz.title,
        judges=estimates,
        prevalence=float(ds.prevalence),
        em_iterations=int(ds.iterations),
        em_converged=bool(ds.converged),
        cohen=cohen,
        fleiss=fleiss,
        questions=questions,
    )


def _panel_question(
    q: Question,
    rows: list[int],
    as_lists: list[list[bool | None]],
    accuracies: list[JudgeAccuracy],
    ds: DawidSkeneResult,
    prior: float,
) -> PanelQuestion:
    """One question's panel posterior from every judge's verdicts on its options (``rows``)."""
    per_judge = [[judge[r] for r in rows] for judge in as_lists]
    post = panel_posterior(per_judge, q.key, accuracies, prior)
    disagreement = any(len({v[i] for v in per_judge if v[i] is not None}) > 1 for i in range(q.n))
    return PanelQuestion(
        question_id=q.id,
        text=q.text,
        options=q.options,
        key=q.key,
        confidence=post.confidence,
        suggested_option=post.suggested,
        suggested_p=post.suggested_p,
        verdicts=tuple(tuple(v) for v in per_judge),
        p_true=tuple(float(ds.posterior[r]) for r in rows),
        disagreement=disagreement,
    )


__all__ = [
    "JudgeEstimate",
    "PanelFinished",
    "PanelMemberEvent",
    "PanelQuestion",
    "PanelRun",
    "PanelSummary",
    "aggregate",
]
