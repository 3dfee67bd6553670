"""Exact p-values for the lint statistics, in plain Python: no scipy import at the end of a run.

``scipy.stats`` costs about a second to import, which every vet run used to pay after its last
verdict for one binomial test. These match ``scipy.stats.binomtest(...).pvalue`` and
``scipy.stats.chisquare(...).pvalue`` to about 1e-12 relative (``tests/test_pvalues.py``):

- :func:`binomial_pvalue`: the exact binomial test; two-sided is scipy's "sum the probabilities
  of every outcome no more likely than the observed one", with its relative tolerance 1e-7;
- :func:`chi2_sf`: P(χ²_df ≥ x) as the regularized upper incomplete gamma Q(df/2, x/2), by its
  power series below a + 1 and Lentz's continued fraction above (Numerical Recipes §6.2).
"""

from __future__ import annotations

import math
from typing import Literal

_RELATIVE_TOLERANCE = 1 + 1e-7  # scipy's binomtest: outcomes this close to d count as "as likely"
_EPS = 1e-15  # relative size of the last term (series) or step (fraction) that stops them
_TINY = 1e-300
_MAX_TERMS = 100_000


def _binomial_pmf(n: int, p: float) -> list[float]:
    """P(X = i) for i = 0..n, X ~ Binomial(n, p), each from its logarithm (no overflow)."""
    if p == 0.0 or p == 1.0:
        return [float(i == (n if p == 1.0 else 0)) for i in range(n + 1)]
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    return [
        math.exp(log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q)
        for i in range(n + 1)
    ]


def binomial_pvalue(
    k: int, n: int, p: float, alternative: Literal["two-sided", "greater", "less"] = "two-sided"
) -> float:
    """The exact binomial test of ``k`` successes in ``n`` trials against success rate ``p``."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    pmf = _binomial_pmf(n, p)
    if alternative == "greater":
        return min(1.0, math.fsum(pmf[k:]))
    if alternative == "less":
        return min(1.0, math.fsum(pmf[: k + 1]))
    if k == p * n:
        return 1.0
    # The observed tail, plus the outcomes on the far side of the mean at most as likely.
    limit = pmf[k] * _RELATIVE_TOLERANCE
    if k < p * n:
        far = [q for q in pmf[math.ceil(p * n) :] if q <= limit]
        near = pmf[: k + 1]
    else:
        far = [q for q in pmf[: math.floor(p * n) + 1] if q <= limit]
        near = pmf[k:]
    return min(1.0, math.fsum(near + far))


def gammaincc(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a), for a > 0."""
    if a <= 0:
        raise ValueError(f"a must be positive, got {a}")
    if x <= 0:
        return 1.0
    log_prefactor = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        # P(a, x) = e^(-x) x^a / Γ(a) · Σ x^n / (a (a+1) … (a+n)); Q = 1 − P is not small here.
        term = total = 1.0 / a
        denominator = a
        for _ in range(_MAX_TERMS):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    # Q(a, x) = e^(-x) x^a / Γ(a) · 1 / (x + 1 − a − 1·(1 − a) / (x + 3 − a − …)), by Lentz.
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return math.exp(log_prefactor) * h


def chi2_sf(x: float, df: int) -> float:
    """P(χ² ≥ x) for ``df`` degrees of freedom (scipy's ``chi2.sf``)."""
    if df < 1:
        raise ValueError(f"df must be at least 1, got {df}")
    return gammaincc(df / 2, x / 2)
