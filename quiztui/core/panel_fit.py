"""A panel model that knows one option is right (issue 21 item 2).

Several judges give a verdict on every option of every question. Per-assertion Dawid–Skene
(:func:`quiztui.core.agreement.dawid_skene_binary`) treats each assertion as an independent bit;
here the latent variable is *which option of the question is correct* — one of its n options, or
none of them — as in the posterior of :mod:`quiztui.core.bayes`:

* P(c = key) = κ, P(c = j ≠ key) = (1 − κ − ρ) / (n − 1), P(c = none) = ρ;
* judge j says "true" of the correct option with probability TPR_j and "false" of every other
  option with probability TNR_j, independently given c.

EM: the E-step gives each question's posterior over c; the M-step sets TPR_j to the expected
share of true options judge j called true (weights P(c = i)), TNR_j likewise over the false
ones, and κ, ρ to the mean posterior of "the key" and "none". The log-likelihood rises at every
step; the fit has converged when it moves by less than ``tol``. A fit is not offered as a
judge profile (``usable`` is False, ``problems`` says why) when it did not converge, when a judge
came out worse than chance (TPR + TNR < 1: label switching, the fit read that judge's "true" as
"false"), or when a judge carries no information (TPR + TNR = 1: it says the same whatever is
true, so its rates are not identified). Unjudged verdicts (NaN) add no likelihood.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_CLIP = 1e-6
_FLAT = 1e-3  # |TPR + TNR − 1| below this: the judge's rates are not identified


@dataclass(frozen=True)
class StructuredFit:
    """The structured panel fit: per judge TPR/TNR, the quiz's κ and ρ, and how the fit went."""

    tpr: npt.NDArray[np.float64]  # per judge
    tnr: npt.NDArray[np.float64]
    key_right: float  # κ: P(the key is the correct option)
    none_share: float  # ρ: P(no option is correct)
    posterior: npt.NDArray[np.float64]  # questions × (options + 1): P(c = i); last column: none
    # per judge (judges × 2): (successes, n) with the fitted rate's share and the fit's precision
    # (see :meth:`_Data.effective_counts`); the rates' 95 % intervals are their Wilson intervals
    tpr_counts: npt.NDArray[np.int64]
    tnr_counts: npt.NDArray[np.int64]
    log_likelihood: float
    iterations: int
    converged: bool
    problems: tuple[str, ...]

    @property
    def usable(self) -> bool:
        """Fit to be offered as a judge profile: converged, no label switching, identified."""
        return not self.problems

    @property
    def tpr_ci(self) -> npt.NDArray[np.float64]:
        """95 % interval of each judge's TPR (judges × 2; NaN: no verdicts)."""
        return _intervals(self.tpr_counts)

    @property
    def tnr_ci(self) -> npt.NDArray[np.float64]:
        return _intervals(self.tnr_counts)

    def interval(self, judge: int) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
        """Judge ``judge``'s (TPR interval, TNR interval); None where there is none."""

        def one(row: npt.NDArray[np.float64]) -> tuple[float, float] | None:
            return None if np.any(np.isnan(row)) else (float(row[0]), float(row[1]))

        return one(self.tpr_ci[judge]), one(self.tnr_ci[judge])


def verdict_array(
    verdicts: Sequence[Sequence[Sequence[bool | None]]], options: int | None = None
) -> npt.NDArray[np.float64]:
    """questions × options × judges (1 true, 0 false, NaN unjudged or no such option) from
    ``verdicts[q][j][i]`` — question q, judge j, option i."""
    width = options or max(len(judge) for q in verdicts for judge in q)
    out = np.full((len(verdicts), width, max(len(q) for q in verdicts)), np.nan)
    for qi, q in enumerate(verdicts):
        for j, judge in enumerate(q):
            for i, v in enumerate(judge):
                if v is not None:
                    out[qi, i, j] = 1.0 if v else 0.0
    return out


def structured_fit(
    labels: npt.ArrayLike,
    keys: Sequence[int],
    option_counts: Sequence[int],
    *,
    allow_none: bool = True,
    max_iter: int = 500,
    tol: float = 1e-8,
    init: float = 0.8,
) -> StructuredFit:
    """Fit each judge's TPR/TNR with the correct option as the latent variable.

    ``labels``: questions × options × judges (1, 0, NaN), options padded with NaN past a
    question's ``option_counts[q]``; ``keys[q]``: its keyed option. ``init`` starts every judge
    at TPR = TNR = init (better than chance, which fixes which class is "true").
    """
    v = np.asarray(labels, dtype=np.float64)
    if v.ndim != 3:
        raise ValueError("labels must be questions × options × judges")
    nq, width, nj = v.shape
    counts = np.asarray(option_counts, dtype=np.int64)
    key = np.asarray(keys, dtype=np.int64)
    if len(counts) != nq or len(key) != nq:
        raise ValueError("one key and one option count per question")
    if np.any(counts < 2) or np.any(counts > width) or np.any((key < 0) | (key >= counts)):
        raise ValueError("every question needs 2..options options and a key among them")
    data = _Data(v, key, counts)
    tpr = np.full(nj, init)
    tnr = np.full(nj, init)
    kappa, rho = init, (0.05 if allow_none else 0.0)
    previous = -np.inf
    loglik = -np.inf
    converged = False
    iterations = 0
    post = np.zeros((nq, width + 1))
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        post, loglik = data.e_step(tpr, tnr, kappa, rho)
        if abs(loglik - previous) < tol * max(1.0, abs(loglik)):
            converged = True
            break
        previous = loglik
        said_true, positives, said_false_n, negatives = data.expected_counts(post)
        tpr, tnr = _ratio(said_true, positives), _ratio(said_false_n, negatives)
        kappa = float(np.clip(np.mean(post[np.arange(nq), key]), _CLIP, 1.0 - _CLIP))
        rho = float(np.clip(np.mean(post[:, width]), _CLIP, 1.0 - kappa)) if allow_none else 0.0
    problems = []
    if not converged:
        problems.append(f"did not converge in {iterations} iterations")
    for j in range(nj):
        youden = tpr[j] + tnr[j] - 1.0
        if abs(youden) < _FLAT:
            problems.append(
                f"judge {j + 1} carries no information (TPR + TNR = 1): its rates are not"
                " identified"
            )
        elif youden < 0:
            problems.append(
                f"label switching: judge {j + 1} fitted worse than chance"
                f" (TPR {tpr[j]:.2f} + TNR {tnr[j]:.2f} < 1)"
            )
    tpr_counts, tnr_counts = data.effective_counts(tpr, tnr, kappa, rho, post)
    return StructuredFit(
        tpr=tpr,
        tnr=tnr,
        tpr_counts=tpr_counts,
        tnr_counts=tnr_counts,
        key_right=kappa,
        none_share=rho,
        posterior=post,
        log_likelihood=loglik,
        iterations=iterations,
        converged=converged,
        problems=tuple(problems),
    )


class _Data:
    """The verdicts in the shapes the E-step and the intervals work on."""

    def __init__(
        self,
        v: npt.NDArray[np.float64],
        key: npt.NDArray[np.int64],
        counts: npt.NDArray[np.int64],
    ) -> None:
        nq, width, _ = v.shape
        self.width = width
        self.counts = counts
        self.valid = np.arange(width)[None, :] < counts[:, None]  # q × i
        self.observed = ~np.isnan(v) & self.valid[:, :, None]
        self.said = np.where(self.observed, v, 0.0)
        self.said_false = np.where(self.observed, 1.0 - v, 0.0)
        self.is_key = np.zeros((nq, width), dtype=bool)
        self.is_key[np.arange(nq), key] = True

    def e_step(
        self,
        tpr: npt.NDArray[np.float64],
        tnr: npt.NDArray[np.float64],
        kappa: float,
        rho: float,
    ) -> tuple[npt.NDArray[np.float64], float]:
        """Each question's posterior over its correct option (last column: none), and the
        marginal log-likelihood of all the verdicts."""
        lt, lf = np.log(tpr), np.log(1.0 - tpr)  # said true / false of the true option
        nt, nf = np.log(1.0 - tnr), np.log(tnr)  # said true / false of a false option
        said, said_false = self.said, self.said_false
        # Every option false ("none"), then the change when option i is the true one.
        base = np.einsum("qij,j->q", said, nt) + np.einsum("qij,j->q", said_false, nf)
        delta = np.einsum("qij,j->qi", said, lt - nt) + np.einsum("qij,j->qi", said_false, lf - nf)
        other = (1.0 - kappa - rho) / np.maximum(self.counts - 1, 1)
        with np.errstate(divide="ignore"):
            log_prior = np.where(
                self.is_key, np.log(kappa), np.log(np.maximum(other, 0.0))[:, None]
            )
            log_none = np.log(rho) if rho > 0 else -np.inf
        scores = np.where(self.valid, base[:, None] + delta + log_prior, -np.inf)
        full = np.concatenate([scores, base[:, None] + log_none], axis=1)
        top = np.max(full, axis=1, keepdims=True)
        weights = np.exp(full - top)
        total = weights.sum(axis=1, keepdims=True)
        return weights / total, float(np.sum(np.log(total[:, 0]) + top[:, 0]))

    def expected_counts(self, post: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], ...]:
        """Per judge, under the posterior ``post``: the expected number of true options it
        called true, of true options it judged, of false options it called false, and of false
        options it judged (the M-step's sums)."""
        true_w = post[:, : self.width, None]  # P(option i is the true one)
        false_w = (1.0 - post[:, : self.width])[:, :, None] * self.valid[:, :, None]
        return (
            np.sum(true_w * self.said, axis=(0, 1)),
            np.sum(true_w * self.observed, axis=(0, 1)),
            np.sum(false_w * self.said_false, axis=(0, 1)),
            np.sum(false_w * self.observed, axis=(0, 1)),
        )

    def effective_counts(
        self,
        tpr: npt.NDArray[np.float64],
        tnr: npt.NDArray[np.float64],
        kappa: float,
        rho: float,
        post: npt.NDArray[np.float64],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Per judge, (successes, n) for its TPR and for its TNR: whole counts whose share is the
        fitted rate and whose binomial precision is the fit's, so the fit's interval is their
        Wilson interval and a judge profile can keep them as its counts.

        The precision comes from the observed information: the marginal log-likelihood (the
        correct option summed out, so not knowing it costs precision) is differentiated twice, by
        central differences, in the logits of the 2 × judges rates with κ and ρ held at their
        fit; a rate with logit variance v has the precision of n = 1 / (p (1 − p) v) verdicts.
        Where the likelihood is not curved (a rate at its clip, a judge with no information) the
        expected counts under ``post`` stand instead. ``bench/panel_recovery.py`` measures the
        intervals' coverage on simulated panels.
        """
        from quiztui.core.calibration import effective_counts

        nj = len(tpr)
        rates = np.concatenate([tpr, tnr])
        x0 = _logit(rates)
        free = np.flatnonzero(np.isfinite(x0) & (np.abs(x0) <= _LOGIT_EDGE))

        def loglik(x: npt.NDArray[np.float64]) -> float:
            return self.e_step(_expit(x[:nj]), _expit(x[nj:]), kappa, rho)[1]

        n, h = len(free), 1e-3
        step = np.zeros((n, 2 * nj))
        step[np.arange(n), free] = h
        hessian = np.empty((n, n))
        for a in range(n):
            for b in range(a, n):
                hessian[a, b] = hessian[b, a] = (
                    loglik(x0 + step[a] + step[b])
                    - loglik(x0 + step[a] - step[b])
                    - loglik(x0 - step[a] + step[b])
                    + loglik(x0 - step[a] - step[b])
                ) / (4 * h * h)
        try:
            variance = np.diag(np.linalg.inv(-hessian)) if n else np.zeros(0)
        except np.linalg.LinAlgError:
            variance = np.full(n, np.nan)
        said_true, positives, said_false, negatives = self.expected_counts(post)
        size = np.concatenate([positives, negatives])  # expected verdicts behind each rate
        ok = np.isfinite(variance) & (variance > 0)
        size[free[ok]] = 1.0 / (rates[free[ok]] * (1 - rates[free[ok]]) * variance[ok])
        counts = np.zeros((2 * nj, 2), dtype=np.int64)
        for i in range(2 * nj):
            if size[i] >= 0.5:
                counts[i] = effective_counts(float(rates[i]), float(size[i]))
        return counts[:nj], counts[nj:]


def _intervals(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The Wilson interval of each (successes, n) row; NaN where n = 0."""
    from quiztui.core.calibration import wilson_interval

    out = np.full((len(counts), 2), np.nan)
    for i, (k, n) in enumerate(counts):
        if n > 0:
            out[i] = wilson_interval(int(k), int(n))
    return out


_LOGIT_EDGE = 9.0  # |logit| past this (a rate within ~1e-4 of 0 or 1): expected counts instead


def _logit(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(np.log(p) - np.log1p(-p), dtype=np.float64)


def _expit(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(1.0 / (1.0 + np.exp(-x)), dtype=np.float64)


def _ratio(num: npt.NDArray[np.float64], den: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    out = np.divide(num, den, out=np.full_like(num, 0.5), where=den > 0)
    return np.clip(out, _CLIP, 1.0 - _CLIP)
