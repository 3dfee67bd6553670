"""A prior learned from the quiz itself (issue 21 item 1): empirical Bayes over all questions.

The posterior of :mod:`quiztui.core.bayes` needs X = P(key is the correct option). Under the same
single-correct-answer model (exactly one option c is true; P(c = key) = X, the rest spread evenly;
verdicts independent given c with the judge's TPR/TNR), question q's verdicts have the marginal
likelihood

    m_q(X) = X · L_q(key) + (1 − X) / (n_q − 1) · Σ_{j ≠ key} L_q(j)

where L_q(c) = Π_i P(verdict_i | option i true iff i = c). The estimate maximises Σ_q log m_q(X).
That log-likelihood is concave in X, so its score ℓ'(X) = Σ_q (a_q − b_q) / m_q(X) falls
monotonically and the one maximum is found by bisection on it (the fixed point of EM, whose
update is the mean of the responsibilities r_q = X·L_q(key) / m_q(X), without EM's slow crawl
toward a boundary). Its 95 % interval is the profile-likelihood one (where 2·(ℓ(X̂) − ℓ(X)) = 3.84).
numpy is imported lazily.

With few questions the estimate shrinks toward the configured default: a Beta hyperprior worth
``max(0, SHRINK_BELOW − N)`` pseudo-questions at the default, so at N ≥ 30 the data alone speak,
and with a handful of questions the default mostly does. The estimate is kept inside
[``LOWEST``, ``HIGHEST``]: a quiz whose every key looks right still leaves room for one that is
not.

:func:`fit_prior_and_rates` goes one step further for a profile that may not hold on this quiz:
the same model, with the judge's TPR and TNR fitted by EM together with X (the correct option as
the latent variable, as in :mod:`quiztui.core.panel_fit` for one judge), the profile's rates
entering as ``weight`` pseudo-assertions (``PROFILE_WEIGHT`` in a run). ``prior = "auto+rates"``
scores a vet run's end with the fitted rates; ``bench/prior_calibration.py`` measures it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from quiztui.core.bayes import DEFAULT_PRIOR, JudgeAccuracy, _likelihood
from quiztui.core.figures import judge_source
from quiztui.core.records import record

if TYPE_CHECKING:
    import numpy as np

SHRINK_BELOW = 30  # questions: fewer than this and the estimate leans on the default
PROFILE_WEIGHT = 20.0  # auto+rates: the profile's TPR/TNR count as this many assertions each
LOWEST = 0.05
HIGHEST = 0.999
_CHI2_95 = 3.841458820694124  # chi-square(1) 95 % quantile
_TOL = 1e-10
_MAX_ITER = 200
_EDGE = 1e-9


@record(frozen=True)
class PriorEstimate:
    """The share of correct keys estimated from a run's verdicts."""

    value: float  # the prior the posterior uses
    interval: tuple[float, float]  # 95 % profile-likelihood interval of the (unshrunk) estimate
    questions: int  # questions with at least one verdict
    pseudo: float  # weight of the default, in questions (0: the data alone)
    default: float
    iterations: int
    converged: bool
    # the judge model's own wording (core/judges, prior = "auto"), which replaces the label below
    note: str | None = None

    @property
    def label(self) -> str:
        """How the header and reports name it: ``auto 0.87 [0.80, 0.92] · 120 q``."""
        if self.note is not None:
            return self.note
        lo, hi = self.interval
        shrunk = f", shrunk toward {self.default:g}" if self.pseudo > 0 else ""
        return f"auto {self.value:.2f} [{lo:.2f}, {hi:.2f}] · {self.questions} q{shrunk}"


def key_likelihoods(
    verdicts: Sequence[bool | None], key: int, acc: JudgeAccuracy
) -> tuple[float, float]:
    """(L(key), mean over the other options of L(j)) for one question's verdicts."""
    n = len(verdicts)
    if n < 2 or not 0 <= key < n:
        raise ValueError(f"a question needs at least two options and a key in 0..{n - 1}")
    per_option = []
    for c in range(n):
        lik = 1.0
        for i, v in enumerate(verdicts):
            lik *= _likelihood(v, i == c, acc)
        per_option.append(lik)
    others = sum(per_option) - per_option[key]
    return per_option[key], others / (n - 1)


def estimate_prior(
    questions: Sequence[tuple[Sequence[bool | None], int]],
    acc: JudgeAccuracy,
    default: float = DEFAULT_PRIOR,
    *,
    shrink_below: int = SHRINK_BELOW,
) -> PriorEstimate:
    """X̂ from ``questions`` — (per-option verdicts, key) — and the judge's TPR/TNR.

    A question with no verdict at all says nothing about X and is left out.
    """
    import numpy as np

    if not 0.0 < default < 1.0:
        raise ValueError(f"default prior {default} outside (0, 1)")
    pairs = [
        key_likelihoods(verdicts, key, acc)
        for verdicts, key in questions
        if any(v is not None for v in verdicts)
    ]
    n = len(pairs)
    pseudo = float(max(0, shrink_below - n))
    if not n:
        return PriorEstimate(default, (0.0, 1.0), 0, pseudo, default, 0, True)
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])

    def score(x: float, weight: float) -> float:  # d/dX of the (penalised) log-likelihood
        data = float(np.sum((a - b) / np.maximum(x * a + (1.0 - x) * b, 1e-300)))
        return data + weight * (default / x - (1.0 - default) / (1.0 - x))

    value, iterations = _root(lambda x: score(x, pseudo))
    mle, _ = _root(lambda x: score(x, 0.0))
    interval = _profile_interval(a, b, mle)
    value = min(max(value, LOWEST), HIGHEST)
    return PriorEstimate(value, interval, n, pseudo, default, iterations, True)


def _root(score: Callable[[float], float]) -> tuple[float, int]:
    """Where a falling score crosses zero in (0, 1) (a boundary when it does not), by bisection."""
    lo, hi = _EDGE, 1.0 - _EDGE
    if score(hi) >= 0:
        return hi, 1
    if score(lo) <= 0:
        return lo, 1
    for iteration in range(1, _MAX_ITER + 1):
        mid = (lo + hi) / 2
        if score(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < _TOL:
            return (lo + hi) / 2, iteration
    return (lo + hi) / 2, _MAX_ITER


def _profile_interval(a: np.ndarray, b: np.ndarray, mle: float) -> tuple[float, float]:
    """Where the log-likelihood falls 3.84/2 below its maximum at ``mle`` (concave: one
    crossing on each side, found by bisection)."""
    import numpy as np

    def loglik(x: float) -> float:
        return float(np.sum(np.log(np.maximum(x * a + (1.0 - x) * b, 1e-300))))

    cut = loglik(mle) - _CHI2_95 / 2

    def crossing(inside: float, outside: float) -> float:
        if loglik(outside) >= cut:
            return 0.0 if outside < inside else 1.0
        for _ in range(60):
            mid = (inside + outside) / 2
            if loglik(mid) >= cut:
                inside = mid
            else:
                outside = mid
        return (inside + outside) / 2

    return crossing(mle, _EDGE), crossing(mle, 1.0 - _EDGE)


@record(frozen=True)
class QuizFit:
    """X and the judge's rates fitted together from one quiz's verdicts."""

    prior: PriorEstimate  # X̂ (interval: profile likelihood at the fitted rates)
    accuracy: JudgeAccuracy  # the fitted TPR/TNR, labelled as a quiz fit of the profile's
    iterations: int
    converged: bool


def fit_prior_and_rates(
    questions: Sequence[tuple[Sequence[bool | None], int]],
    acc: JudgeAccuracy,
    default: float = DEFAULT_PRIOR,
    *,
    weight: float = 0.0,
    shrink_below: int = SHRINK_BELOW,
    max_iter: int = 1000,
    tol: float = 1e-10,
) -> QuizFit:
    """X̂, TPR and TNR by EM over ``questions`` — (per-option verdicts, key).

    ``weight``: how many assertions the profile's rates count for, per rate class (its TPR as
    ``weight`` true assertions, its TNR as ``weight`` × (n − 1) false ones per question shape);
    0 lets the quiz alone speak. X shrinks toward ``default`` below ``shrink_below`` questions,
    as in :func:`estimate_prior`. Questions without a verdict are left out.
    """
    import numpy as np

    if not 0.0 < default < 1.0:
        raise ValueError(f"default prior {default} outside (0, 1)")
    if weight < 0:
        raise ValueError(f"weight {weight} is negative")
    kept = [(v, k) for v, k in questions if any(x is not None for x in v)]
    n = len(kept)
    pseudo = float(max(0, shrink_below - n))
    if not n:
        empty = PriorEstimate(default, (0.0, 1.0), 0, pseudo, default, 0, True)
        return QuizFit(empty, acc, 0, True)
    width = max(len(v) for v, _ in kept)
    said = np.full((n, width), np.nan)
    for q, (verdicts, key) in enumerate(kept):
        if not 0 <= key < len(verdicts) or len(verdicts) < 2:
            raise ValueError(f"question {q}: needs two options and a key among them")
        for i, v in enumerate(verdicts):
            if v is not None:
                said[q, i] = 1.0 if v else 0.0
    counts = np.array([len(v) for v, _ in kept])
    valid = np.arange(width)[None, :] < counts[:, None]
    seen = ~np.isnan(said)
    yes = np.where(seen, said, 0.0)
    no = np.where(seen, 1.0 - said, 0.0)
    is_key = np.zeros((n, width), dtype=bool)
    is_key[np.arange(n), [k for _, k in kept]] = True
    false_per_q = float(np.mean(counts - 1))
    tpr, tnr, x = acc.tpr, acc.tnr, default
    converged, iterations = False, 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        lt, lf = np.log(tpr), np.log1p(-tpr)
        nt, nf = np.log1p(-tnr), np.log(tnr)
        base = (yes * nt + no * nf).sum(axis=1)
        delta = yes * (lt - nt) + no * (lf - nf)
        other = np.log((1.0 - x) / (counts - 1))[:, None]
        scores = np.where(
            valid, base[:, None] + delta + np.where(is_key, np.log(x), other), -np.inf
        )
        scores -= scores.max(axis=1, keepdims=True)
        w = np.exp(scores)
        w /= w.sum(axis=1, keepdims=True)
        false_w = (1.0 - w) * valid
        new_tpr = ((w * yes).sum() + weight * acc.tpr) / ((w * seen).sum() + weight)
        new_tnr = ((false_w * no).sum() + weight * false_per_q * acc.tnr) / (
            (false_w * seen).sum() + weight * false_per_q
        )
        new_x = (float(w[is_key].sum()) + pseudo * default) / (n + pseudo)
        new_tpr = float(np.clip(new_tpr, 1e-6, 1 - 1e-6))
        new_tnr = float(np.clip(new_tnr, 1e-6, 1 - 1e-6))
        new_x = min(max(new_x, LOWEST), HIGHEST)
        step = abs(new_tpr - tpr) + abs(new_tnr - tnr) + abs(new_x - x)
        tpr, tnr, x = new_tpr, new_tnr, new_x
        if step < tol:
            converged = True
            break
    fitted = replace(
        acc,
        tpr=tpr,
        tnr=tnr,
        calibrated=False,
        label=f"fitted from this quiz, from {judge_source(acc.label)} (weight {weight:g})",
        counts=None,
        tpr_ci=None,
        tnr_ci=None,
    )
    pairs = [key_likelihoods(v, k, fitted) for v, k in kept]
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    mle, _ = _root(lambda v: float(np.sum((a - b) / np.maximum(v * a + (1.0 - v) * b, 1e-300))))
    estimate = PriorEstimate(
        x, _profile_interval(a, b, mle), n, pseudo, default, iterations, converged
    )
    return QuizFit(estimate, fitted, iterations, converged)
