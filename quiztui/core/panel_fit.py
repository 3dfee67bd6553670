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
    log_likelihood: float
    iterations: int
    converged: bool
    problems: tuple[str, ...]

    @property
    def usable(self) -> bool:
        """Fit to be offered as a judge profile: converged, no label switching, identified."""
        return not self.problems


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
    valid = np.arange(width)[None, :] < counts[:, None]  # q × i
    observed = ~np.isnan(v) & valid[:, :, None]
    said = np.where(observed, v, 0.0)
    said_false = np.where(observed, 1.0 - v, 0.0)
    is_key = np.zeros((nq, width), dtype=bool)
    is_key[np.arange(nq), key] = True

    tpr = np.full(nj, init)
    tnr = np.full(nj, init)
    kappa, rho = init, (0.05 if allow_none else 0.0)
    previous = -np.inf
    loglik = -np.inf
    converged = False
    iterations = 0
    post = np.zeros((nq, width + 1))
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        lt, lf = np.log(tpr), np.log(1.0 - tpr)  # said true / false of the true option
        nt, nf = np.log(1.0 - tnr), np.log(tnr)  # said true / false of a false option
        # Every option false ("none"), then the change when option i is the true one.
        base = np.einsum("qij,j->q", said, nt) + np.einsum("qij,j->q", said_false, nf)
        delta = np.einsum("qij,j->qi", said, lt - nt) + np.einsum("qij,j->qi", said_false, lf - nf)
        other = (1.0 - kappa - rho) / np.maximum(counts - 1, 1)
        with np.errstate(divide="ignore"):
            log_prior = np.where(is_key, np.log(kappa), np.log(np.maximum(other, 0.0))[:, None])
            log_none = np.log(rho) if rho > 0 else -np.inf
        scores = np.where(valid, base[:, None] + delta + log_prior, -np.inf)
        full = np.concatenate([scores, base[:, None] + log_none], axis=1)
        top = np.max(full, axis=1, keepdims=True)
        weights = np.exp(full - top)
        total = weights.sum(axis=1, keepdims=True)
        post = weights / total
        loglik = float(np.sum(np.log(total[:, 0]) + top[:, 0]))
        if abs(loglik - previous) < tol * max(1.0, abs(loglik)):
            converged = True
            break
        previous = loglik
        true_w = post[:, :width, None]  # P(option i is the true one)
        tpr = _ratio(np.sum(true_w * said, axis=(0, 1)), np.sum(true_w * observed, axis=(0, 1)))
        false_w = (1.0 - post[:, :width])[:, :, None] * valid[:, :, None]
        tnr = _ratio(
            np.sum(false_w * said_false, axis=(0, 1)), np.sum(false_w * observed, axis=(0, 1))
        )
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
    return StructuredFit(
        tpr=tpr,
        tnr=tnr,
        key_right=kappa,
        none_share=rho,
        posterior=post,
        log_likelihood=loglik,
        iterations=iterations,
        converged=converged,
        problems=tuple(problems),
    )


def _ratio(num: npt.NDArray[np.float64], den: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    out = np.divide(num, den, out=np.full_like(num, 0.5), where=den > 0)
    return np.clip(out, _CLIP, 1.0 - _CLIP)
