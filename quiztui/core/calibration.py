"""Assessing the assessor: confusion counts on a gold set, rates with 95 % intervals, profiles.

A judge profile is what one calibration run measured for one judge set-up, keyed by
(provider, model, prompt hash, batch size, mode). TPR = P(says true | assertion true),
TNR = P(says false | assertion false), measured separately (the seed assumed them equal).

Intervals: Wilson score (default) or the equal-tailed Beta posterior under a uniform prior, whose
parameters (successes + 1, failures + 1) are also what carries the uncertainty into each
question's confidence interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import field
from typing import Literal

from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.figures import PANEL_FIT, profile_source
from quiztui.core.records import record

IntervalMethod = Literal["wilson", "beta"]
JudgeMode = Literal["assertion", "question"]


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n = 0."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside 0..{n}")
    from statistics import NormalDist  # statistics, fractions, decimal: loaded when asked

    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def effective_counts(rate: float, size: float) -> tuple[int, int]:
    """Whole (successes, n) for a rate known with the precision of ``size`` binomial trials (a
    panel fit's effective sample size): n within 10 % of ``size`` (at least 1), the one whose
    rounded count comes closest to ``rate``, so its share shows as the rate and its Wilson interval
    as the fit's precision."""
    rate = min(max(rate, 0.0), 1.0)
    centre = max(1, round(size))
    reach = centre // 10
    n = min(
        range(max(1, centre - reach), centre + reach + 1),
        key=lambda m: (abs(round(rate * m) / m - rate), abs(m - centre)),
    )
    return round(rate * n), n


def beta_interval(
    successes: int, n: int, level: float = 0.95, prior: tuple[float, float] = (1.0, 1.0)
) -> tuple[float, float]:
    """Equal-tailed interval of the Beta(successes + a, failures + b) posterior."""
    if not 0 <= successes <= max(n, 0):
        raise ValueError(f"successes {successes} outside 0..{n}")
    from scipy.stats import beta  # lazy: scipy.stats costs ~1.3 s to import

    a, b = successes + prior[0], max(n, 0) - successes + prior[1]
    tail = (1 - level) / 2
    return (float(beta.ppf(tail, a, b)), float(beta.ppf(1 - tail, a, b)))


def rate_interval(
    successes: int, n: int, method: IntervalMethod = "wilson", level: float = 0.95
) -> tuple[float, float]:
    if method == "beta":
        return beta_interval(successes, n, level)
    return wilson_interval(successes, n, level)


@record(frozen=True)
class Confusion:
    """Verdicts on gold assertions. Unjudged assertions are counted apart, never as errors."""

    tp: int = 0  # true assertion, judge said true
    fn: int = 0  # true assertion, judge said false
    tn: int = 0  # false assertion, judge said false
    fp: int = 0  # false assertion, judge said true
    unjudged: int = 0

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[bool, bool | None]]) -> Confusion:
        """From (truth, verdict) pairs; verdict None = unjudged."""
        tp = fn = tn = fp = unjudged = 0
        for truth, verdict in pairs:
            if verdict is None:
                unjudged += 1
            elif truth:
                tp, fn = (tp + 1, fn) if verdict else (tp, fn + 1)
            else:
                tn, fp = (tn + 1, fp) if not verdict else (tn, fp + 1)
        return cls(tp, fn, tn, fp, unjudged)

    @property
    def positives(self) -> int:
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        return self.tn + self.fp

    @property
    def judged(self) -> int:
        return self.positives + self.negatives

    @property
    def total(self) -> int:
        return self.judged + self.unjudged

    @property
    def tpr(self) -> float:
        return self.tp / self.positives if self.positives else math.nan

    @property
    def tnr(self) -> float:
        return self.tn / self.negatives if self.negatives else math.nan

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.judged if self.judged else math.nan

    @property
    def unjudged_rate(self) -> float:
        return self.unjudged / self.total if self.total else 0.0

    def tpr_interval(self, method: IntervalMethod = "wilson") -> tuple[float, float]:
        return rate_interval(self.tp, self.positives, method)

    def tnr_interval(self, method: IntervalMethod = "wilson") -> tuple[float, float]:
        return rate_interval(self.tn, self.negatives, method)


@record(frozen=True)
class JudgeProfile:
    """One calibration run's measurement of one judge set-up."""

    provider: str
    model: str
    prompt_hash: str
    batch_size: int
    mode: JudgeMode
    confusion: Confusion
    gold: str  # what the gold set was, e.g. "opentdb.json (n=1000, seed 7)"
    questions: int = 0  # gold questions (assertion mode: options per question summed)
    simulated: bool = False
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None  # USD, None when the model has no price in config
    latency: float | None = None  # mean seconds per request
    wall_time: float = 0.0  # seconds for the whole calibration run
    interval_method: IntervalMethod = "wilson"
    run_id: int | None = None
    id: int | None = None  # store row id once saved
    created_at: float = 0.0
    label_extra: str = field(default="", compare=False)

    @property
    def from_panel(self) -> bool:
        """Saved from a panel fit (``panel --save-profiles``), not measured on gold labels."""
        return self.gold.startswith(PANEL_FIT)

    @property
    def tpr(self) -> float:
        return self.confusion.tpr

    @property
    def tnr(self) -> float:
        return self.confusion.tnr

    @property
    def tpr_ci(self) -> tuple[float, float]:
        return self.confusion.tpr_interval(self.interval_method)

    @property
    def tnr_ci(self) -> tuple[float, float]:
        return self.confusion.tnr_interval(self.interval_method)

    @property
    def tokens_per_question(self) -> float:
        return (self.tokens_in + self.tokens_out) / self.questions if self.questions else math.nan

    def short(self) -> str:
        """``TPR 0.85 [0.83, 0.87] · TNR 0.92 [0.91, 0.93]``."""
        (a, b), (c, d) = self.tpr_ci, self.tnr_ci
        return f"TPR {self.tpr:.2f} [{a:.2f}, {b:.2f}] · TNR {self.tnr:.2f} [{c:.2f}, {d:.2f}]"

    def accuracy(self) -> JudgeAccuracy:
        """The judge accuracy a vet run uses, carrying the counts for confidence intervals.

        The rates are the Beta posterior means (successes + 1) / (n + 2): a judge that made no
        error on a finite gold set is not taken to be infallible, and the point confidence stays
        inside the interval drawn from the same posteriors.
        """
        c = self.confusion
        return JudgeAccuracy(
            tpr=(c.tp + 1) / (c.positives + 2),
            tnr=(c.tn + 1) / (c.negatives + 2),
            calibrated=True,
            # the source only: core/figures.judge_rates_text shows the rates beside it
            label=profile_source(self.id, self.created_at, panel=self.from_panel),
            counts=(c.tp, c.fn, c.tn, c.fp),
            tpr_ci=self.tpr_ci,
            tnr_ci=self.tnr_ci,
        )


__all__ = [
    "Confusion",
    "IntervalMethod",
    "JudgeMode",
    "JudgeProfile",
    "beta_interval",
    "effective_counts",
    "rate_interval",
    "wilson_interval",
]
