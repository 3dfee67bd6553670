"""Confidence from judge verdicts (seed 000, made exact).

Seed formulas (kept as test vectors):

* ``p_accurate_given_judged(s, X) = s·X / (s·X + (1 − s)(1 − X))``
* ``p_k(i, n, X) = C(n, i) · X^i · (1 − X)^(n − i)``

The confidence quiztui reports is a proper posterior under a single-correct-answer model:
exactly one option c is true. Prior: P(c = key) = X (the quiz-level prior accuracy), the rest
spread evenly over the other options. The judge says "true" for a true assertion with
probability TPR and "false" for a false one with probability TNR; verdicts are independent given
c. Unjudged assertions contribute no likelihood (prior only). The posterior over c gives both the
confidence that the key is right and the option the judge believes is correct. A panel of judges
multiplies their likelihoods (independent given c).

Calibration counts (tp, fn, tn, fp) give Beta posteriors for TPR/TNR; Monte Carlo over them turns
that uncertainty into an interval on the confidence (``confidence_interval``). numpy is imported
lazily there so the CLI starts without it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from quiztui.core.records import record

if TYPE_CHECKING:
    import numpy as np

DEFAULT_TPR = 0.9
DEFAULT_TNR = 0.9
DEFAULT_PRIOR = 0.95
_EPS = 1e-12  # keeps Monte Carlo rates off exactly 0 and 1


def p_accurate_given_judged(s: float, x: float) -> float:
    """P(assertion accurate | judged accurate) with symmetric judge accuracy s and prior X."""
    num = s * x
    return num / (num + (1.0 - s) * (1.0 - x))


def p_k(i: int, n: int, x: float) -> float:
    """Binomial P(k = i) for n assertions each labelled correctly with probability X."""
    return math.comb(n, i) * x**i * (1.0 - x) ** (n - i)


@record(frozen=True)
class JudgeAccuracy:
    tpr: float = DEFAULT_TPR
    tnr: float = DEFAULT_TNR
    calibrated: bool = False
    label: str = "uncalibrated"
    # (tp, fn, tn, fp) from a calibration run: the Beta posteriors of TPR/TNR behind intervals
    counts: tuple[int, int, int, int] | None = None
    # 95 % intervals of TPR and TNR as the profile reports them (None: uncalibrated)
    tpr_ci: tuple[float, float] | None = None
    tnr_ci: tuple[float, float] | None = None


@record(frozen=True)
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


def panel_posterior(
    verdicts_by_judge: Sequence[Sequence[bool | None]],
    key: int,
    accuracies: Sequence[JudgeAccuracy],
    prior: float = DEFAULT_PRIOR,
) -> QuestionPosterior:
    """Posterior over which option is correct, given one verdict list per judge.

    ``verdicts_by_judge[j][i]`` is judge j's verdict on option i (None = unjudged: no likelihood);
    ``accuracies[j]`` is judge j's TPR/TNR. Judges are independent given the correct option.
    """
    if not verdicts_by_judge:
        raise ValueError("a panel needs at least one judge")
    if len(accuracies) != len(verdicts_by_judge):
        raise ValueError(
            f"{len(verdicts_by_judge)} verdict lists but {len(accuracies)} judge accuracies"
        )
    n = len(verdicts_by_judge[0])
    if n < 2:
        raise ValueError("a question needs at least two options")
    if any(len(v) != n for v in verdicts_by_judge):
        raise ValueError("every judge needs one verdict (or None) per option")
    if not 0 <= key < n:
        raise ValueError(f"key {key} outside 0..{n - 1}")
    other = (1.0 - prior) / (n - 1)
    # Work in logs so long option lists, big panels and extreme accuracies cannot underflow.
    logs = []
    for c in range(n):
        p0 = prior if c == key else other
        lp = math.log(p0) if p0 > 0 else -math.inf
        for verdicts, acc in zip(verdicts_by_judge, accuracies, strict=True):
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


def question_posterior(
    verdicts: Sequence[bool | None],
    key: int,
    acc: JudgeAccuracy,
    prior: float = DEFAULT_PRIOR,
) -> QuestionPosterior:
    """Posterior over which option is correct, given per-option verdicts (None = unjudged)."""
    return panel_posterior([verdicts], key, [acc], prior)


@functools.lru_cache(maxsize=32)
def _likelihood_ratio_draws(
    counts: tuple[int, int, int, int], draws: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo draws of the likelihood ratios of a "true" and a "false" verdict.

    TPR ~ Beta(tp + 1, fn + 1), TNR ~ Beta(tn + 1, fp + 1). For one option, the ratio
    P(verdict | option correct) / P(verdict | option wrong) is TPR / (1 − TNR) for "true" and
    (1 − TPR) / TNR for "false". The arrays are cached, so they are made read-only.
    """
    import numpy as np  # lazy: keeps `quiztui` start-up free of numpy

    tp, fn, tn, fp = counts
    rng = np.random.default_rng(seed)
    tpr = rng.beta(tp + 1, fn + 1, size=draws)
    tnr = rng.beta(tn + 1, fp + 1, size=draws)
    # Beta draws can round to exactly 0 or 1 for very large counts; keep the ratios finite.
    np.clip(tpr, _EPS, 1.0 - _EPS, out=tpr)
    np.clip(tnr, _EPS, 1.0 - _EPS, out=tnr)
    ratio_true = tpr / (1.0 - tnr)
    ratio_false = (1.0 - tpr) / tnr
    ratio_true.flags.writeable = False
    ratio_false.flags.writeable = False
    return ratio_true, ratio_false


@functools.lru_cache(maxsize=4096)
def _interval_from_summary(
    counts: tuple[int, int, int, int],
    draws: int,
    seed: int,
    prior: float,
    level: float,
    n: int,
    key_verdict: bool | None,
    others_true: int,
    others_false: int,
) -> tuple[float, float]:
    import numpy as np

    ratio_true, ratio_false = _likelihood_ratio_draws(counts, draws, seed)
    # Under the single-correct-answer model the posterior of option c is proportional to
    # prior_c · ratio(verdict_c): every option's "wrong" likelihood cancels. So P(key) depends
    # only on the key's verdict and how many other options were said true / false / unjudged.
    if key_verdict is None:
        key_term = np.full(draws, prior)
    else:
        key_term = prior * (ratio_true if key_verdict else ratio_false)
    others_unjudged = n - 1 - others_true - others_false
    other_sum = others_true * ratio_true + others_false * ratio_false + others_unjudged
    confidence = key_term / (key_term + (1.0 - prior) / (n - 1) * other_sum)
    confidence.sort()
    tail = (1.0 - level) / 2.0
    return (_sorted_quantile(confidence, tail), _sorted_quantile(confidence, 1.0 - tail))


def _sorted_quantile(ordered: np.ndarray, q: float) -> float:
    """numpy's default (linear) quantile of sorted values; np.quantile costs ~30 µs here."""
    last = len(ordered) - 1
    pos = q * last
    i = int(pos)
    j = min(i + 1, last)
    return float(ordered[i] + (ordered[j] - ordered[i]) * (pos - i))


def confidence_interval(
    verdicts: Sequence[bool | None],
    key: int,
    acc: JudgeAccuracy,
    prior: float = DEFAULT_PRIOR,
    level: float = 0.95,
    draws: int = 512,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Equal-tailed interval on P(key is correct) from the uncertainty in the judge's TPR/TNR.

    None when the judge has no calibration counts. Monte Carlo over the Beta posteriors of
    TPR/TNR (uniform prior) with a fixed seed, so the same inputs give the same interval.
    """
    counts = acc.counts
    if counts is None:
        return None
    n = len(verdicts)
    if n < 2:
        raise ValueError("a question needs at least two options")
    if not 0 <= key < n:
        raise ValueError(f"key {key} outside 0..{n - 1}")
    tp, fn, tn, fp = (int(c) for c in counts)
    if min(tp, fn, tn, fp) < 0:
        raise ValueError(f"counts must be non-negative (tp, fn, tn, fp): {counts}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level {level} outside (0, 1)")
    if draws < 1:
        raise ValueError("draws must be at least 1")
    others_true = others_false = 0
    for i, v in enumerate(verdicts):
        if i != key and v is not None:
            if v:
                others_true += 1
            else:
                others_false += 1
    return _interval_from_summary(
        (tp, fn, tn, fp),
        draws,
        seed,
        float(prior),
        float(level),
        n,
        verdicts[key],
        others_true,
        others_false,
    )


def p_true_given_judged_true(tpr: float, tnr: float, x: float) -> float:
    """P(assertion true | judged true) = TPR·X / (TPR·X + (1 − TNR)(1 − X)).

    The seed's formula for a judge whose two accuracies differ; with TPR = TNR = s it is
    ``p_accurate_given_judged(s, x)``. NaN when the judge never says true (0/0).
    """
    num = tpr * x
    den = num + (1.0 - tnr) * (1.0 - x)
    return num / den if den > 0 else math.nan


CALIBRATION_BINS = 10  # equal-width bins of the reliability diagram and the ECE


@record(frozen=True)
class ReliabilityBin:
    lo: float
    hi: float
    count: int
    mean_confidence: float
    accuracy: float


def reliability_bins(
    confidences: Sequence[float], outcomes: Sequence[bool], bins: int = CALIBRATION_BINS
) -> list[ReliabilityBin]:
    """The non-empty equal-width bins of a reliability diagram (a confidence of 1 goes last)."""
    if len(confidences) != len(outcomes):
        raise ValueError("confidences and outcomes differ in length")
    sums = [[0.0, 0, 0] for _ in range(bins)]  # confidence sum, accurate, count
    for c, o in zip(confidences, outcomes, strict=True):
        b = min(int(c * bins), bins - 1)
        sums[b][0] += c
        sums[b][1] += 1 if o else 0
        sums[b][2] += 1
    return [
        ReliabilityBin(i / bins, (i + 1) / bins, int(n), conf / n, acc / n)
        for i, (conf, acc, n) in enumerate(sums)
        if n
    ]


def expected_calibration_error(
    confidences: Sequence[float], outcomes: Sequence[bool], bins: int = CALIBRATION_BINS
) -> float:
    """ECE with equal-width bins: Σ_b (|b|/N) · |mean confidence_b − accuracy_b|."""
    n = len(confidences)
    parts = reliability_bins(confidences, outcomes, bins)
    return sum(b.count * abs(b.mean_confidence - b.accuracy) for b in parts) / n if n else 0.0
