"""Confidence from judge verdicts (seed 000, made exact).

Seed formulas (kept as test vectors):

* ``p_accurate_given_judged(s, X) = s·X / (s·X + (1 − s)(1 − X))``
* ``p_k(i, n, X) = C(n, i) · X^i · (1 − X)^(n − i)``

The confidence quiztui reports is a proper posterior under a single-correct-answer model:
exactly one option c is true. Prior: P(c = key) = X (the quiz-level prior accuracy), the rest
spread evenly over the other options. The judge says "true" for a true assertion with
probability TPR and "false" for a false one with probability TNR; verdicts are independent given
c. Unjudged assertions contribute no likelihood (prior only). The posterior over c gives both the
confidence that the key is right and the option the judge believes is correct.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_TPR = 0.9
DEFAULT_TNR = 0.9
DEFAULT_PRIOR = 0.95


def p_accurate_given_judged(s: float, x: float) -> float:
    """P(assertion accurate | judged accurate) with symmetric judge accuracy s and prior X."""
    num = s * x
    return num / (num + (1.0 - s) * (1.0 - x))


def p_k(i: int, n: int, x: float) -> float:
    """Binomial P(k = i) for n assertions each labelled correctly with probability X."""
    return math.comb(n, i) * x**i * (1.0 - x) ** (n - i)


@dataclass(frozen=True, slots=True)
class JudgeAccuracy:
    tpr: float = DEFAULT_TPR
    tnr: float = DEFAULT_TNR
    calibrated: bool = False
    label: str = "uncalibrated"
    # (tp, fn, tn, fp) from a calibration run: the Beta posteriors of TPR/TNR behind intervals
    counts: tuple[int, int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class QuestionPosterior:
    confidence: float  # P(keyed option is the correct one | verdicts)
    posterior: tuple[float, ...]  # P(option i is the correct one | verdicts)
    suggested: int | None  # most likely option when it is not the key
    suggested_p: float | None


def _likelihood(verdict: bool | None, is_true: bool, acc: JudgeAccuracy) -> float:
    if verdict is None:
        return 1.0
    if is_true:
        return acc.tpr if verdict else 1.0 - acc.tpr
    return acc.tnr if not verdict else 1.0 - acc.tnr


def question_posterior(
    verdicts: Sequence[bool | None],
    key: int,
    acc: JudgeAccuracy,
    prior: float = DEFAULT_PRIOR,
) -> QuestionPosterior:
    """Posterior over which option is correct, given per-option verdicts (None = unjudged)."""
    n = len(verdicts)
    if n < 2:
        raise ValueError("a question needs at least two options")
    other = (1.0 - prior) / (n - 1)
    # Work in logs so long option lists and extreme accuracies cannot underflow.
    logs = []
    for c in range(n):
        p0 = prior if c == key else other
        lp = math.log(p0) if p0 > 0 else -math.inf
        for i, v in enumerate(verdicts):
            lik = _likelihood(v, i == c, acc)
            lp += math.log(lik) if lik > 0 else -math.inf
        logs.append(lp)
    top = max(logs)
    if top == -math.inf:
        post = [1.0 / n] * n
    else:
        weights = [math.exp(lp - top) for lp in logs]
        total = sum(weights)
        post = [w / total for w in weights]
    best = max(range(n), key=lambda i: (post[i], i == key))
    suggested = best if best != key else None
    return QuestionPosterior(
        confidence=post[key],
        posterior=tuple(post),
        suggested=suggested,
        suggested_p=post[best] if suggested is not None else None,
    )


def expected_calibration_error(
    confidences: Sequence[float], outcomes: Sequence[bool], bins: int = 10
) -> float:
    """ECE with equal-width bins: Σ_b (|b|/N) · |mean confidence_b − accuracy_b|."""
    if len(confidences) != len(outcomes):
        raise ValueError("confidences and outcomes differ in length")
    n = len(confidences)
    if n == 0:
        return 0.0
    sums = [[0.0, 0.0, 0] for _ in range(bins)]
    for c, o in zip(confidences, outcomes, strict=True):
        b = min(int(c * bins), bins - 1)
        sums[b][0] += c
        sums[b][1] += 1.0 if o else 0.0
        sums[b][2] += 1
    return sum(abs(s[0] - s[1]) for s in sums if s[2]) / n
