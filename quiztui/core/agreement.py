"""Agreement between judges, and judge accuracy without gold labels.

* ``cohen_kappa``: two raters, chance-corrected agreement on paired labels.
* ``fleiss_kappa`` / ``fleiss_kappa_labels``: many raters (Fleiss 1971).
* ``dawid_skene_binary``: EM estimate of every judge's TPR/TNR and the share of true assertions
  from the judges' verdicts alone (Dawid & Skene 1979, two classes). It needs at least three
  judges to be identifiable and assumes judges err independently given the truth.
* ``auroc``: rank-based area under the ROC curve (Mann–Whitney U), ties counted half.

Undefined statistics are ``nan``, never an exception: a panel that agrees on everything has no
chance-corrected agreement to report.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# Additive smoothing of the Dawid–Skene rate estimates: keeps every rate strictly inside (0, 1)
# so one judge that is never wrong cannot drive a log-likelihood to −inf.
_DS_SMOOTHING = 0.01


def cohen_kappa(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> float:
    """Cohen's κ over paired labels; pairs where either label is None are skipped.

    κ = (p_o − p_e) / (1 − p_e), p_o the observed agreement, p_e the agreement expected from each
    rater's own label frequencies. nan with no usable pairs or when p_e = 1 (both raters gave one
    and the same label throughout).
    """
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length: {len(a)} and {len(b)}")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not pairs:
        return math.nan
    n = len(pairs)
    observed = sum(1 for x, y in pairs if x == y) / n
    freq_a: dict[Hashable, int] = {}
    freq_b: dict[Hashable, int] = {}
    for x, y in pairs:
        freq_a[x] = freq_a.get(x, 0) + 1
        freq_b[y] = freq_b.get(y, 0) + 1
    expected = sum(count * freq_b.get(label, 0) for label, count in freq_a.items()) / (n * n)
    if expected >= 1.0:
        return math.nan
    return (observed - expected) / (1.0 - expected)


def _fleiss_from_counts(counts: npt.NDArray[np.float64]) -> float:
    """Fleiss' κ from items × categories counts; rows may have different totals (each ≥ 2).

    Per-item agreement P_i = Σ_j n_ij (n_ij − 1) / (n_i (n_i − 1)) and its plain mean P̄; chance
    agreement P_e = Σ_j p_j² with p_j the share of *all* ratings in category j. With equal n_i
    this is exactly Fleiss (1971).
    """
    per_item = counts.sum(axis=1)
    agreement = (counts * (counts - 1)).sum(axis=1) / (per_item * (per_item - 1))
    p_bar = float(agreement.mean())
    shares = counts.sum(axis=0) / per_item.sum()
    p_e = float((shares * shares).sum())
    if p_e >= 1.0:
        return math.nan
    return (p_bar - p_e) / (1.0 - p_e)


def fleiss_kappa(table: npt.ArrayLike) -> float:
    """Fleiss' κ from an items × categories table of rating counts.

    Every row must sum to the same number of raters (at least 2); use ``fleiss_kappa_labels`` for
    missing ratings. nan for an empty table or when every rating falls in one category. This is
    statsmodels' ``fleiss_kappa(table, method="fleiss")``; robustness metrics use it too.
    """
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2:
        raise ValueError("table must be items × categories")
    if counts.shape[0] == 0:
        return math.nan
    if (counts < 0).any() or not np.array_equal(counts, np.round(counts)):
        raise ValueError("table must hold non-negative whole counts")
    per_item = counts.sum(axis=1)
    unequal = per_item != per_item[0]
    if unequal.any():
        row = int(np.argmax(unequal))
        raise ValueError(
            f"every item needs the same number of ratings: row 0 has {per_item[0]:g},"
            f" row {row} has {per_item[row]:g}"
        )
    if per_item[0] < 2:
        raise ValueError("Fleiss' κ needs at least two ratings per item")
    return _fleiss_from_counts(counts)


def fleiss_kappa_labels(labels: Sequence[Sequence[Hashable | None]]) -> float:
    """Fleiss' κ from items × raters labels, None for a missing rating.

    Items with fewer than two ratings are left out. Items may keep different numbers of ratings:
    each item's agreement is computed over its own raters and items are weighted equally, while
    category shares pool every rating (the usual extension; with equal counts it is Fleiss' κ).
    """
    rows = [[x for x in row if x is not None] for row in labels]
    rows = [row for row in rows if len(row) >= 2]
    if not rows:
        return math.nan
    categories: dict[Hashable, int] = {}
    for row in rows:
        for x in row:
            categories.setdefault(x, len(categories))
    counts = np.zeros((len(rows), len(categories)))
    for i, row in enumerate(rows):
        for x in row:
            counts[i, categories[x]] += 1
    return _fleiss_from_counts(counts)


@dataclass(frozen=True, slots=True, eq=False)
class DawidSkeneResult:
    tpr: npt.NDArray[np.float64]  # per judge: P(says true | assertion true)
    tnr: npt.NDArray[np.float64]  # per judge: P(says false | assertion false)
    prevalence: float  # share of true assertions
    posterior: npt.NDArray[np.float64]  # per item: P(assertion true | all verdicts)
    iterations: int
    converged: bool
    log_likelihood: float  # of the observed verdicts under the final parameters


def dawid_skene_binary(
    labels: npt.ArrayLike,
    max_iter: int = 500,
    tol: float = 1e-9,
    *,
    initial: npt.ArrayLike | None = None,
) -> DawidSkeneResult:
    """Each judge's TPR/TNR and the prevalence of true items, by EM with no gold labels.

    ``labels`` is items × judges: 1.0 (said true), 0.0 (said false), nan (no verdict). EM starts
    from the majority vote (ties 0.5), or from ``initial`` (P(true) per item) when given, and stops when the log-likelihood changes by at most
    ``tol`` relative to its size. Rates are smoothed away from 0 and 1. Two labellings of the
    classes fit equally well; the one where judges beat chance on average (mean TPR + TNR ≥ 1)
    is returned. Items no judge labelled get the prevalence as their posterior.
    """
    y = np.asarray(labels, dtype=float)
    if y.ndim != 2:
        raise ValueError("labels must be items × judges")
    observed = ~np.isnan(y)
    if not np.isin(y[observed], (0.0, 1.0)).all():
        raise ValueError("labels must be 1.0 (true), 0.0 (false) or nan (missing)")
    n_items, n_judges = y.shape
    if n_judges == 0:
        raise ValueError("labels need at least one judge")
    if max_iter < 1:
        raise ValueError("max_iter must be at least 1")
    rated = observed.any(axis=1)
    said_true = np.where(observed, y, 0.0)[rated]
    said_false = (observed & (y == 0.0))[rated].astype(float)
    seen = observed[rated].astype(float)
    if said_true.shape[0] == 0:
        raise ValueError("no item has a verdict")

    if initial is None:
        votes = said_true.sum(axis=1) / seen.sum(axis=1)
        post = np.where(votes > 0.5, 1.0, np.where(votes < 0.5, 0.0, 0.5))
    else:
        start = np.asarray(initial, dtype=float)
        if start.shape != (n_items,) or not ((start >= 0) & (start <= 1)).all():
            raise ValueError("initial must hold one probability per item")
        post = start[rated]
    a = _DS_SMOOTHING
    log_lik = -math.inf
    converged = False
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        # M-step: rates and prevalence from the current soft labels.
        tpr = (post @ said_true + a) / (post @ seen + 2 * a)
        tnr = ((1 - post) @ said_false + a) / ((1 - post) @ seen + 2 * a)
        prevalence = (post.sum() + a) / (len(post) + 2 * a)
        # E-step: P(true | verdicts) per item, in logs.
        log_true = math.log(prevalence) + said_true @ np.log(tpr) + said_false @ np.log1p(-tpr)
        log_false = math.log1p(-prevalence) + said_true @ np.log1p(-tnr) + said_false @ np.log(tnr)
        log_total = np.logaddexp(log_true, log_false)
        post = np.exp(log_true - log_total)
        new_log_lik = float(log_total.sum())
        if abs(new_log_lik - log_lik) <= tol * max(1.0, abs(new_log_lik)):
            log_lik = new_log_lik
            converged = True
            break
        log_lik = new_log_lik

    prevalence = float(prevalence)
    if float(np.mean(tpr + tnr)) < 1.0:
        # Label switching: the fit called the true class false. Swap the classes back.
        tpr, tnr = 1.0 - tnr, 1.0 - tpr
        prevalence = 1.0 - prevalence
        post = 1.0 - post
    posterior = np.full(n_items, prevalence)
    posterior[rated] = post
    return DawidSkeneResult(
        tpr=tpr,
        tnr=tnr,
        prevalence=prevalence,
        posterior=posterior,
        iterations=iterations,
        converged=converged,
        log_likelihood=log_lik,
    )


def auroc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """P(a random positive scores above a random negative), ties counted half.

    Computed from mid-ranks (the Mann–Whitney U statistic). ``labels`` are truthy for positives.
    nan when either class is empty.
    """
    s = np.asarray(scores, dtype=float).ravel()
    positive = np.asarray(labels, dtype=bool).ravel()
    if s.shape != positive.shape:
        raise ValueError(f"{s.size} scores but {positive.size} labels")
    if np.isnan(s).any():
        raise ValueError("scores contain nan")
    n_pos = int(positive.sum())
    n_neg = s.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    _, inverse, tie_counts = np.unique(s, return_inverse=True, return_counts=True)
    # Mid-rank of each distinct score (ranks start at 1): first rank + (ties − 1) / 2.
    mid_rank = np.cumsum(tie_counts) - (tie_counts - 1) / 2.0
    rank_sum = float(mid_rank[inverse][positive].sum())
    u = rank_sum - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def average_precision(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Average precision of ranking positives first: the mean, over positives, of the precision
    at each positive's rank; tied scores share the precision of their whole tie group (the
    step-wise area under the precision–recall curve, as scikit-learn computes it). nan when
    there is no positive."""
    s = np.asarray(scores, dtype=float).ravel()
    positive = np.asarray(labels, dtype=bool).ravel()
    if s.shape != positive.shape:
        raise ValueError(f"{s.size} scores but {positive.size} labels")
    n_pos = int(positive.sum())
    if n_pos == 0:
        return math.nan
    order = np.argsort(-s, kind="stable")
    s_sorted, y = s[order], positive[order]
    # the last index of each group of tied scores: thresholds between distinct scores
    last = np.r_[np.flatnonzero(np.diff(s_sorted) != 0), len(s_sorted) - 1]
    tp = np.cumsum(y)[last]
    precision = tp / (last + 1)
    recall = tp / n_pos
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


__all__ = [
    "DawidSkeneResult",
    "auroc",
    "average_precision",
    "cohen_kappa",
    "dawid_skene_binary",
    "fleiss_kappa",
    "fleiss_kappa_labels",
]
