"""A panel of judges on one quiz: each judge's estimated rates, agreement, disagreements.

Every member judges the whole quiz as an ordinary vet run (stored, resumable, its own shuffle).
Then, with no gold labels, EM estimates each judge's TPR/TNR. By default the fit knows the
quiz's structure (:mod:`quiztui.core.panel_fit`: the latent variable is which option of each
question is correct, or none); ``model="dawid-skene"`` is the per-assertion Dawid–Skene fit, one
independent bit per assertion, for quizzes without a single key. A structured fit that did not
converge, shows label switching or cannot identify a judge is reported with its problems and is
not used: the posteriors then take the uncalibrated rates. Each question gets the
single-correct-answer posterior from all the judges' verdicts together (each judge weighted by
its estimated TPR/TNR). Cohen's κ for each pair and Fleiss' κ over the panel say how far the
judges agree beyond chance.

Both fits assume judges err independently given the truth. Repeated samples of one model at
temperature > 0 share that model's blind spots, so their estimated accuracies run optimistic.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from quiztui.core.agreement import (
    cohen_kappa,
    dawid_skene_binary,
    fleiss_kappa_labels,
)
from quiztui.core.assertions import decompose
from quiztui.core.bayes import JudgeAccuracy, panel_posterior
from quiztui.core.calibration import Confusion, JudgeProfile
from quiztui.core.figures import PANEL_FIT
from quiztui.core.judges import Profile
from quiztui.core.panel_fit import StructuredFit, structured_fit
from quiztui.core.prior import HIGHEST, LOWEST
from quiztui.core.quiz import Question, Quiz
from quiztui.pipeline.events import RunFinished, RunSummary, VetEvent
from quiztui.pipeline.lifecycle import Emit, RunLifecycle, RunTable
from quiztui.pipeline.prompts import PromptTemplate
from quiztui.pipeline.scoring import known_profile
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import Provider
from quiztui.store import Store

# A judge profile saved from a panel fit needs at least this many effective verdicts behind each
# rate (its effective n, core/panel_fit): below it the interval is too wide to lean on.
MIN_PANEL_COUNT = 30


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
    # The structured fit's effective (successes, n) per rate and their 95 % Wilson intervals
    # (core/panel_fit: the fit's precision from the observed information); None for Dawid–Skene
    tpr_counts: tuple[int, int] | None = None
    tnr_counts: tuple[int, int] | None = None
    tpr_ci: tuple[float, float] | None = None
    tnr_ci: tuple[float, float] | None = None


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
    p_true: tuple[float, ...]  # the panel fit's P(option true)
    disagreement: bool  # some option got different verdicts from different judges
    interval: tuple[float, float] | None = None  # 95 % interval of the confidence (difficulty)


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
    # The fit behind the judges' rates: "structured" (the correct option of each question is the
    # latent variable, core/panel_fit.py) or "Dawid–Skene" (one independent bit per assertion).
    model: str = "Dawid–Skene"
    log_likelihood: float | None = None
    key_right: float | None = None  # structured: estimated P(the key is the correct option)
    problems: tuple[str, ...] = ()  # why the fit is not usable as a profile (empty: it is)
    prior: float | None = None  # P(key right) the posteriors used
    # the difficulty model: where the share of wrong keys comes from, in words, and the
    # expected number of wrong keys in the quiz (the sum of P(key wrong))
    wrong_share_source: str | None = None
    expected_wrong: float | None = None

    @property
    def usable(self) -> bool:
        return self.em_converged and not self.problems

    @property
    def disagreements(self) -> list[PanelQuestion]:
        return [q for q in self.questions if q.disagreement]


@dataclass(frozen=True, slots=True)
class PanelFinished:
    summary: PanelSummary
    # ``save_profiles``: the judge profiles saved from the fit, and a line per judge not saved
    profiles: tuple[JudgeProfile, ...] = ()
    not_saved: tuple[str, ...] = ()


PanelEvent = PanelMemberEvent | PanelFinished


@dataclass
class PanelRun:
    quiz: Quiz
    providers: Sequence[Provider]
    store: Store
    prompt: PromptTemplate
    settings: VetSettings = VetSettings()
    prior: float = 0.95
    # "difficulty" (core/judges: judges that fail together on hard questions), "structured"
    # (independent judges, one correct option) or "dawid-skene" (one bit per assertion)
    model: str = "difficulty"
    prior_auto: bool = False  # prior = "auto": a usable structured fit's P(key right) is the prior
    save_profiles: bool = False  # keep a usable structured fit's rates as judge profiles

    async def events(self) -> AsyncIterator[PanelEvent]:
        if len(self.providers) < 2:
            raise ValueError("a panel needs at least two judges")
        summaries: dict[int, RunSummary] = {}
        # Each member is a stored vet run with its own lifecycle; the panel itself stores nothing.
        life: RunLifecycle[PanelMemberEvent, RunTable] = RunLifecycle()
        async with life.stream(partial(self._members, summaries)) as events:
            async for item in events:
                yield item
        runs = [summaries[i] for i in range(len(self.providers))]
        summary = aggregate(
            self.quiz,
            runs,
            self.prior,
            model=self.model,
            prior_auto=self.prior_auto,
            profiles=[known_profile(p) for p in self.providers],
        )
        if not self.save_profiles:
            yield PanelFinished(summary)
            return
        profiles, not_saved = self._save_profiles(summary, runs)
        yield PanelFinished(summary, profiles, not_saved)

    def _save_profiles(
        self, summary: PanelSummary, runs: Sequence[RunSummary]
    ) -> tuple[tuple[JudgeProfile, ...], tuple[str, ...]]:
        """Each judge's fitted rates as a judge profile of its set-up (provider, model, prompt,
        batch size, mode), so a later ``vet`` with that judge alone uses them. Only a usable
        structured fit is kept; a judge whose set-up another member shares (repeated samples of
        one model), or whose rates rest on fewer than ``MIN_PANEL_COUNT`` effective verdicts, is
        not. The profile keeps the fit's effective counts, so it shows the fit's intervals."""
        if summary.model != "structured":
            return (), (
                "not saved: judge profiles come from the structured fit only (--fit structured)",
            )
        if not summary.usable:
            why = "; ".join(summary.problems) or "did not converge"
            return (), (f"not saved: the fit is not usable ({why})",)
        keys = [
            (
                p.name,
                p.model,
                self.prompt.hash,
                self.settings.profile_batch_size,
                self.settings.mode,
            )
            for p in self.providers
        ]
        saved: list[JudgeProfile] = []
        skipped: list[str] = []
        now = time.time()
        for j, (provider, estimate, run) in enumerate(
            zip(self.providers, summary.judges, runs, strict=True), start=1
        ):
            twins = [i + 1 for i, key in enumerate(keys) if key == keys[j - 1] and i + 1 != j]
            if twins:
                skipped.append(
                    f"judge {j}: not saved: the same set-up as judge"
                    f" {', '.join(map(str, twins))} (repeated samples of one model share its"
                    " blind spots)"
                )
                continue
            if estimate.tpr_counts is None or estimate.tnr_counts is None:
                skipped.append(f"judge {j}: not saved: its rates have no counts")
                continue
            (tp, positives), (tn, negatives) = estimate.tpr_counts, estimate.tnr_counts
            if min(positives, negatives) < MIN_PANEL_COUNT:
                skipped.append(
                    f"judge {j}: not saved: its rates rest on too few verdicts (about"
                    f" {min(positives, negatives)} effective; {MIN_PANEL_COUNT} needed)"
                )
                continue
            profile = JudgeProfile(
                provider=provider.name,
                model=provider.model,
                prompt_hash=self.prompt.hash,
                batch_size=self.settings.profile_batch_size,
                mode="question" if self.settings.mode == "question" else "assertion",
                confusion=Confusion(tp, positives - tp, tn, negatives - tn),
                gold=(
                    f"{PANEL_FIT} (structured) of {len(self.providers)} judges on"
                    f" {self.quiz.title}: {len(self.quiz.questions)} questions"
                ),
                questions=len(self.quiz.questions),
                simulated=provider.simulated,
                requests=run.requests,
                tokens_in=run.tokens_in,
                tokens_out=run.tokens_out,
                run_id=run.run_id,
                created_at=now,
            )
            saved.append(replace(profile, id=self.store.profiles.save(profile)))
        return tuple(saved), tuple(skipped)

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


def aggregate(
    quiz: Quiz,
    runs: Sequence[RunSummary],
    prior: float = 0.95,
    *,
    model: str = "difficulty",
    prior_auto: bool = False,
    profiles: Sequence[Profile | None] | None = None,
) -> PanelSummary:
    """The judges' rates, κ and panel posteriors from the members' finished runs.

    ``model="difficulty"`` (the default) scores through :mod:`quiztui.core.judges`: question
    difficulty, misses that gather on one distractor, judges that share mistakes, and a share of
    wrong keys the judges' agreement cannot move. ``"structured"`` and ``"dawid-skene"`` are
    the independent-judge fits; a structured fit that is not usable (not converged, label
    switching, a judge with no information) is reported with its problems and the posteriors
    fall back to the uncalibrated rates. ``profiles``: per member, its known rates (a
    SIMULATED judge's set rates, ``pipeline.scoring.known_profile``) for the difficulty model."""
    if model not in ("difficulty", "structured", "dawid-skene"):
        raise ValueError(f"unknown panel model {model!r}")
    uids = [a.uid for a in decompose(quiz)]
    index = {u: i for i, u in enumerate(uids)}
    labels = np.full((len(uids), len(runs)), np.nan)
    for j, run in enumerate(runs):
        for qs in run.questions:
            for opt, v in enumerate(qs.verdicts):
                if v is not None:
                    labels[index[f"{qs.question_id}#{opt}"], j] = 1.0 if v else 0.0
    if model == "difficulty":
        return _difficulty(quiz, runs, labels, index, profiles)
    ds = dawid_skene_binary(labels)
    fit = _structured(quiz, labels, index) if model == "structured" else None
    tprs = ds.tpr if fit is None else fit.tpr
    tnrs = ds.tnr if fit is None else fit.tnr
    estimates = tuple(
        JudgeEstimate(
            label=run.judge_label,
            run_id=run.run_id,
            tpr=float(tprs[j]),
            tnr=float(tnrs[j]),
            judged=int(np.sum(~np.isnan(labels[:, j]))),
            said_true=int(np.nansum(labels[:, j])),
            tpr_counts=None if fit is None else _pair(fit.tpr_counts[j]),
            tnr_counts=None if fit is None else _pair(fit.tnr_counts[j]),
            tpr_ci=None if fit is None else fit.interval(j)[0],
            tnr_ci=None if fit is None else fit.interval(j)[1],
        )
        for j, run in enumerate(runs)
    )
    as_lists, cohen, fleiss = _agreement(runs, labels)
    name = "Dawid–Skene" if fit is None else "structured"
    accuracies = [JudgeAccuracy(e.tpr, e.tnr, calibrated=False, label=name) for e in estimates]
    if fit is not None and not fit.usable:
        accuracies = [JudgeAccuracy() for _ in estimates]  # never a failed fit's rates
    elif fit is not None and prior_auto:  # the fit's own estimate of P(key right)
        prior = min(max(fit.key_right, LOWEST), HIGHEST)
    p_true = ds.posterior if fit is None else _structured_p_true(quiz, fit, len(uids), index)
    questions = tuple(
        _panel_question(
            q, [index[f"{q.id}#{i}"] for i in range(q.n)], as_lists, accuracies, p_true, prior
        )
        for q in quiz.questions
    )
    if fit is None:
        return PanelSummary(
            quiz_title=quiz.title,
            judges=estimates,
            prevalence=float(ds.prevalence),
            em_iterations=int(ds.iterations),
            em_converged=bool(ds.converged),
            cohen=cohen,
            fleiss=fleiss,
            questions=questions,
            prior=prior,
        )
    return PanelSummary(
        quiz_title=quiz.title,
        judges=estimates,
        prevalence=float(np.mean(p_true)),
        em_iterations=fit.iterations,
        em_converged=fit.converged,
        cohen=cohen,
        fleiss=fleiss,
        questions=questions,
        model=name,
        log_likelihood=fit.log_likelihood,
        key_right=fit.key_right,
        problems=fit.problems,
        prior=prior,
    )


def _agreement(
    runs: Sequence[RunSummary], labels: np.ndarray
) -> tuple[list[list[bool | None]], tuple[tuple[int, int, float], ...], float]:
    as_lists: list[list[bool | None]] = [
        [None if math.isnan(x) else bool(x) for x in labels[:, j]] for j in range(len(runs))
    ]
    cohen = tuple(
        (a, b, float(cohen_kappa(as_lists[a], as_lists[b])))
        for a, b in itertools.combinations(range(len(runs)), 2)
    )
    fleiss = float(fleiss_kappa_labels([list(row) for row in zip(*as_lists, strict=True)]))
    return as_lists, cohen, fleiss


def _difficulty(
    quiz: Quiz,
    runs: Sequence[RunSummary],
    labels: np.ndarray,
    index: dict[str, int],
    profiles: Sequence[Profile | None] | None = None,
) -> PanelSummary:
    """The panel scored through the judge-behaviour model (core/judges.py). A member run in
    question mode names one option per question: it is a pick judge."""
    from quiztui.core.judges import DifficultyJudges, Mode, Observations

    cube = _cube(quiz, labels, index)
    modes: tuple[Mode, ...] = tuple(
        "pick" if run.mode == "question" else "assertion" for run in runs
    )
    obs = Observations.of(
        cube, [q.key for q in quiz.questions], [q.n for q in quiz.questions], modes
    )
    fit = DifficultyJudges(profiles=profiles).fit(obs)
    estimates = tuple(
        JudgeEstimate(
            label=run.judge_label,
            run_id=run.run_id,
            tpr=rates.accuracy,
            tnr=rates.tnr,
            judged=int(np.sum(~np.isnan(labels[:, j]))),
            said_true=int(np.nansum(labels[:, j])),
        )
        for j, (run, rates) in enumerate(zip(runs, fit.judges, strict=True))
    )
    as_lists, cohen, fleiss = _agreement(runs, labels)
    questions = []
    for qi, q in enumerate(quiz.questions):
        rows = [index[f"{q.id}#{i}"] for i in range(q.n)]
        per_judge = [[judge[r] for r in rows] for judge in as_lists]
        suggested, suggested_p = fit.suggested(qi, q.key)
        lo, hi = fit.interval[qi]
        questions.append(
            PanelQuestion(
                question_id=q.id,
                text=q.text,
                options=q.options,
                key=q.key,
                confidence=fit.confidence(qi),
                suggested_option=suggested,
                suggested_p=suggested_p,
                verdicts=tuple(tuple(v) for v in per_judge),
                p_true=tuple(float(x) for x in fit.posterior[qi, : q.n]),
                disagreement=any(
                    len({v[i] for v in per_judge if v[i] is not None}) > 1 for i in range(q.n)
                ),
                interval=(float(lo), float(hi)),
            )
        )
    share = fit.wrong_share
    return PanelSummary(
        quiz_title=quiz.title,
        judges=estimates,
        # the share of true assertions: one right option per question, over all the options
        prevalence=float(len(quiz.questions) / sum(q.n for q in quiz.questions)),
        em_iterations=fit.iterations,
        em_converged=fit.converged,
        cohen=cohen,
        fleiss=fleiss,
        questions=tuple(questions),
        model="difficulty",
        log_likelihood=fit.log_likelihood,
        key_right=1.0 - share.value,
        problems=() if fit.converged else (f"did not converge in {fit.iterations} iterations",),
        prior=1.0 - share.value,
        wrong_share_source=share.source,
        expected_wrong=float(fit.p_key_wrong.sum()),
    )


def _cube(quiz: Quiz, labels: np.ndarray, index: dict[str, int]) -> np.ndarray:
    """questions × options × judges from the per-assertion labels."""
    width = max(q.n for q in quiz.questions)
    cube = np.full((len(quiz.questions), width, labels.shape[1]), np.nan)
    for qi, q in enumerate(quiz.questions):
        for i in range(q.n):
            cube[qi, i, :] = labels[index[f"{q.id}#{i}"]]
    return cube


def _pair(row: np.ndarray) -> tuple[int, int]:
    return int(row[0]), int(row[1])


def _structured(quiz: Quiz, labels: np.ndarray, index: dict[str, int]) -> StructuredFit:
    """The structured fit over questions × options × judges, from the per-assertion labels."""
    cube = _cube(quiz, labels, index)
    return structured_fit(cube, [q.key for q in quiz.questions], [q.n for q in quiz.questions])


def _structured_p_true(
    quiz: Quiz, fit: StructuredFit, assertions: int, index: dict[str, int]
) -> np.ndarray:
    """P(option true) per assertion: the fit's posterior that it is the question's right one."""
    out = np.zeros(assertions)
    for qi, q in enumerate(quiz.questions):
        for i in range(q.n):
            out[index[f"{q.id}#{i}"]] = fit.posterior[qi, i]
    return out


def _panel_question(
    q: Question,
    rows: list[int],
    as_lists: list[list[bool | None]],
    accuracies: list[JudgeAccuracy],
    p_true: np.ndarray,
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
        p_true=tuple(float(p_true[r]) for r in rows),
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
