"""How judges behave: one model every face scores through (issue 26).

Real LLM judges do not err independently. On a hard question they fail together, and when they
fail they gather on one attractive distractor. A model that multiplies independent verdicts reads
ten judges converging on a distractor as near-certain proof of a wrong key; on a real exam with
human error labels that pattern is a wrong key about four times in ten. This module models it:

* every question has a latent **correct option** c (the key with probability 1 − π, any other
  option with π / (n − 1)), a latent **difficulty level** ℓ on a fixed grid of L logits δ_ℓ with
  weights ω_ℓ learned from the quiz, and a latent **attractor** t (one of the wrong options,
  uniform);
* a judge j that **picks** one option (question mode, or a recorded answer) picks c with
  probability a_jℓ = σ(θ_j − δ_ℓ); when it misses it picks the attractor with probability
  β + (1 − β)/(n − 1) and each other wrong option with (1 − β)/(n − 1);
* a judge that gives a **verdict on each option** (assertion mode) says "true" of c with
  probability TPR_jℓ = σ(α_j − δ_ℓ) and of a wrong option with FPR_jℓ = σ(γ_j + δ_ℓ) (harder
  questions: fewer true positives, more false ones), independently given (c, ℓ).

With one level (L = 1) and no attractor (β = 0) this is today's independent model
(:mod:`quiztui.core.bayes`): the special case, :func:`independent_judges`
(``tests/test_judges.py`` checks its posteriors are ``bayes.panel_posterior``'s).

**What the data cannot tell.** A question that every judge answers with the same non-key option is
either a wrong key or a hard question with a strong attractor; nothing in the verdicts separates
the two, and for one judge whose rates are not measured, any disagreement is either a key error or
a judge error. The share of wrong keys π therefore has a weakly informative prior: a Beta with
mean ``DEFAULT_WRONG_SHARE`` (published audits of a large exam bank found about 2 % of its keys
wrong) worth ``PRIOR_STRENGTH`` questions. Where the verdicts identify π (measured judge rates, a
panel that answers most questions alike) the quiz moves it; where they do not, the prior stays and
the header says so. Judge abilities have weak normal priors; a measured profile (its counts) is a
strong prior on the judge's marginal accuracy.

The fit is EM (MAP): the E-step sums over (c, ℓ, t) in closed form, the M-step sets π, ω, β in
closed form and each judge's logits by a few Newton steps. ``bench/real_judges.py`` measures the
calibration of P(key wrong) on a real exam against human labels; ``tests/test_judges.py`` checks
that simulated worlds of both kinds (independent errors, errors that gather on hard questions)
come out calibrated and that the fit recovers their parameters.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Mode = Literal["assertion", "pick"]

DEFAULT_WRONG_SHARE = 0.02  # published audits of a large exam bank: about 2 % of keys wrong
PRIOR_STRENGTH = 40.0  # the default is worth this many questions
PROFILE_CAP = 200.0
CHECK = 0.05  # P(key wrong) from which a key is worth checking and the favoured option is named
MIN_SET_ASIDE = 30  # questions: fewer cannot set the default share aside (but for known rates)
_DECISIVE = 3.84  # chi-square(1) at p = 0.05
_SET_ASIDE = 1.0  # questions: the default's weight once the quiz's evidence has set it aside  # verdicts: the most a measured profile counts for on another quiz
LEVELS = tuple(float(x) for x in np.linspace(-3.0, 6.0, 10))  # difficulty logits δ_ℓ
_THETA_PRIOR = (2.0, 0.7)  # judge ability logit: mean, sd (a weak prior: accuracy ~0.88)
_ALPHA_PRIOR = (2.0, 1.5)
_GAMMA_PRIOR = (-2.0, 1.5)
_OMEGA_PSEUDO = 0.5  # Dirichlet pseudo-count per level
_CLIP = 1e-9

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Observations:
    """Verdicts in one shape for every model.

    ``verdicts``: questions × options × judges, 1 (true), 0 (false), NaN (unjudged, or no such
    option past ``counts[q]``); ``keys[q]`` the keyed option; ``modes[j]``: "pick" for a judge
    that names one option per question (its row is one true and the rest false: a pick), else
    "assertion". A pick judge's row that is not exactly one true option is unjudged.
    """

    verdicts: FloatArray
    keys: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    modes: tuple[Mode, ...]

    @classmethod
    def build(
        cls,
        verdicts: Sequence[Sequence[Sequence[bool | None]]],
        keys: Sequence[int],
        modes: Sequence[Mode] | None = None,
    ) -> Observations:
        """From ``verdicts[q][j][i]`` (question, judge, option)."""
        nq = len(verdicts)
        nj = max((len(q) for q in verdicts), default=0)
        width = max((len(judge) for q in verdicts for judge in q), default=2)
        out = np.full((nq, width, nj), np.nan)
        counts = np.zeros(nq, dtype=np.int64)
        for qi, q in enumerate(verdicts):
            counts[qi] = max((len(judge) for judge in q), default=0)
            for j, judge in enumerate(q):
                for i, v in enumerate(judge):
                    if v is not None:
                        out[qi, i, j] = 1.0 if v else 0.0
        return cls.of(out, keys, counts, modes)

    @classmethod
    def of(
        cls,
        verdicts: npt.ArrayLike,
        keys: Sequence[int] | npt.NDArray[np.int64],
        counts: Sequence[int] | npt.NDArray[np.int64],
        modes: Sequence[Mode] | None = None,
    ) -> Observations:
        v = np.asarray(verdicts, dtype=np.float64)
        if v.ndim != 3:
            raise ValueError("verdicts must be questions × options × judges")
        nq, width, nj = v.shape
        key = np.asarray(keys, dtype=np.int64)
        n = np.asarray(counts, dtype=np.int64)
        if len(key) != nq or len(n) != nq:
            raise ValueError("one key and one option count per question")
        if nq and (np.any(n < 2) or np.any(n > width) or np.any((key < 0) | (key >= n))):
            raise ValueError("every question needs 2..options options and a key among them")
        mode = tuple(modes) if modes is not None else ("assertion",) * nj
        if len(mode) != nj:
            raise ValueError(f"{nj} judges but {len(mode)} modes")
        return cls(v, key, n, mode)

    @property
    def questions(self) -> int:
        return int(self.verdicts.shape[0])

    @property
    def judges(self) -> int:
        return int(self.verdicts.shape[2])

    def picks(self) -> npt.NDArray[np.int64]:
        """questions × judges: the option each pick judge named (−1: none, or not a pick judge)."""
        v = self.verdicts
        yes = np.nan_to_num(v, nan=0.0)
        valid = np.arange(v.shape[1])[None, :] < self.counts[:, None]
        ones = (yes * valid[:, :, None]).sum(axis=1)
        out = np.where(ones == 1, np.argmax(yes * valid[:, :, None], axis=1), -1)
        pick_judge = np.array([m == "pick" for m in self.modes], dtype=bool)
        return np.where(pick_judge[None, :], out, -1).astype(np.int64)


@dataclass(frozen=True)
class JudgeRates:
    """One judge's fitted behaviour, averaged over the quiz's difficulty."""

    mode: Mode
    accuracy: float  # pick: P(picks the correct option); assertion: TPR
    tnr: float  # assertion: P(false | wrong option); pick: 1 − (1 − a)/(n − 1), the verdict form
    measured: bool  # its rates came from a measured profile (else fitted/default)
    answered: int


@dataclass(frozen=True)
class WrongShare:
    """π, the quiz's share of wrong keys: the fit, its 95 % interval, and where it comes from."""

    value: float
    interval: tuple[float, float]
    default: float
    strength: float
    identified: bool  # the verdicts moved it (else it is the default's)
    measured: bool = False  # some judge's rates were measured (or known)

    @property
    def source(self) -> str:
        if self.identified:
            return f"estimated from the verdicts, prior {self.default:.0%} (published audits)"
        if self.measured:
            return (
                f"default {self.default:.0%} (published audits of exam banks): this quiz does not"
                f" clearly move it (fewer than {MIN_SET_ASIDE} questions, or too little evidence)"
            )
        return (
            f"default {self.default:.0%} (published audits of exam banks): the judges' rates are"
            " not measured, so their disagreement cannot tell a wrong key from a wrong judge"
        )


@dataclass(frozen=True)
class JudgeFit:
    """What every face shows: per question P(each option is correct), P(key wrong) and its
    interval; the quiz's share of wrong keys; each judge's rates."""

    posterior: FloatArray  # questions × options
    p_key_wrong: FloatArray  # questions
    interval: FloatArray  # questions × 2: 95 % interval of P(key right) over the parameters
    wrong_share: WrongShare
    judges: tuple[JudgeRates, ...]
    attraction: float  # β: how much a missing judge's picks gather on one distractor
    level_weights: FloatArray
    log_likelihood: float
    iterations: int
    converged: bool
    model: str

    def confidence(self, q: int) -> float:
        return float(1.0 - self.p_key_wrong[q])

    def suggested(self, q: int, key: int) -> tuple[int | None, float | None]:
        """The option the judges favour over the key, and its probability, when the key is worth
        checking (P(key wrong) ≥ ``CHECK``); else (None, None). Honest probabilities seldom
        pass 0.5 — on a real exam ten judges against the key are right 4 times in 10 — so the
        suggestion is the likeliest other option, not only an option likelier than the key."""
        row = self.posterior[q]
        if 1.0 - row[key] < CHECK:
            return None, None
        others = row.copy()
        others[key] = -1.0
        best = int(np.argmax(others))
        return best, float(row[best])


@dataclass(frozen=True)
class Profile:
    """A measured judge: its counts (tp, fn, tn, fp) on gold questions. ``exact``: the rates are
    known, not measured elsewhere (a SIMULATED judge's set rates), so they carry over whole."""

    tp: int
    fn: int
    tn: int
    fp: int
    exact: bool = False


def _sigmoid(x: FloatArray) -> FloatArray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)), dtype=np.float64)


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return float(np.log(p) - np.log1p(-p))


class DifficultyJudges:
    """The judge model with question difficulty and attractive distractors (the default)."""

    name = "difficulty"

    def __init__(
        self,
        *,
        wrong_share: float = DEFAULT_WRONG_SHARE,
        strength: float = PRIOR_STRENGTH,
        levels: Sequence[float] = LEVELS,
        profiles: Sequence[Profile | None] | None = None,
        attractor: bool = True,
        max_iter: int = 200,
        tol: float = 1e-8,
        answer_tol: float = 1e-3,
        draws: int = 32,
        seed: int = 0,
        fixed_share: bool = False,
    ) -> None:
        if not 0.0 < wrong_share < 1.0:
            raise ValueError(f"wrong-key share {wrong_share} outside (0, 1)")
        if strength < 0:
            raise ValueError("prior strength must be non-negative")
        self.m0 = wrong_share
        self.strength = strength
        self.delta = np.asarray(levels, dtype=np.float64)
        self.profiles = tuple(profiles) if profiles is not None else None
        self.attractor = attractor
        self.max_iter = max_iter
        self.tol = tol
        self.answer_tol = answer_tol
        self.draws = draws
        self.seed = seed
        # π is ``wrong_share`` as given, neither matched to the quiz nor set aside by it
        self.fixed_share = fixed_share

    # -- the E-step ------------------------------------------------------------------------
    def _setup(self, obs: Observations) -> _Arrays:
        return _Arrays(obs)

    def _log_joint(
        self,
        d: _Arrays,
        pi: float,
        omega: FloatArray,
        beta: FloatArray,
        theta: FloatArray,
        alpha: FloatArray,
        gamma: FloatArray,
    ) -> tuple[FloatArray, FloatArray]:
        """log P(c, ℓ, verdicts) for every question (Q × W(c) × L, the attractor t summed out
        in closed form), and the expected picks on the attractor given (c, ℓ) for β's M-step."""
        L = len(self.delta)
        n = d.counts.astype(np.float64)
        with np.errstate(divide="ignore"):
            lp_c = np.where(d.is_key, np.log(1.0 - pi), np.log(pi / (n - 1))[:, None])
        lp_c = np.where(d.valid, lp_c, -np.inf)
        total = lp_c[:, :, None] + np.log(omega)[None, None, :]
        on_t = np.zeros((d.nq, d.w, L))
        if d.pick_j.size:
            a = _sigmoid(theta[d.pick_j][:, None] - self.delta[None, :])  # P × L
            la, lm = np.log(np.clip(a, _CLIP, 1)), np.log(np.clip(1 - a, _CLIP, 1))
            # Σ_j w_j (O[q,c,j] log a_jℓ + (A[q,j] − O[q,c,j]) log(1 − a_jℓ))
            wj = d.weight[d.pick_j][:, None]  # shared mistakes count once (see _Arrays)
            total = (
                total
                + np.einsum("qcj,jl->qcl", d.onehot_p, (la - lm) * wj)
                + (d.answered_p @ (lm * wj))[:, None, :]
            )
            b = np.broadcast_to(np.asarray(beta, dtype=np.float64), (L,))
            att = b[None, :] + (1.0 - b[None, :]) / (n - 1)[:, None]  # Q × L
            oth = (1.0 - b[None, :]) / (n - 1)[:, None]
            lat, loth = np.log(np.clip(att, _CLIP, 1)), np.log(np.clip(oth, _CLIP, 1))
            cnt = d.cnt_w  # Q × W: picks per option, each judge at its weight
            # every miss at oth, then the picks on t (≠ c, uniform prior 1/(n − 1)) at att
            total = total + (d.n_answered_w[:, None] - cnt)[:, :, None] * loth[:, None, :]
            g = cnt[:, None, :] * (lat - loth)[:, :, None]  # Q × L × W(t)
            g = np.where(d.valid[:, None, :], g, -np.inf)
            gt = np.broadcast_to(g[:, None, :, :], (d.nq, d.w, L, d.w))
            gt = np.where(d.not_self[None, :, None, :], gt, -np.inf)
            top = gt.max(axis=3, keepdims=True)
            top = np.where(np.isfinite(top), top, 0.0)
            e = np.exp(gt - top)
            z = e.sum(axis=3)
            with np.errstate(divide="ignore"):
                total = total + np.log(z) + top[..., 0] - np.log(n - 1)[:, None, None]
            on_t = np.einsum("qclt,qt->qcl", e, d.cnt) / np.maximum(z, 1e-300)
        if d.assert_j.size:
            tpr = _sigmoid(alpha[d.assert_j][:, None] - self.delta[None, :])  # A × L
            fpr = _sigmoid(gamma[d.assert_j][:, None] + self.delta[None, :])
            lt, lf = np.log(np.clip(tpr, _CLIP, 1)), np.log(np.clip(1 - tpr, _CLIP, 1))
            nt, nf = np.log(np.clip(fpr, _CLIP, 1)), np.log(np.clip(1 - fpr, _CLIP, 1))
            # every option wrong, then the change when option c is the correct one
            ys, ns = d.yes_sum[:, d.assert_j], d.no_sum[:, d.assert_j]
            base = ys @ nt + ns @ nf
            change = np.einsum("qcj,jl->qcl", d.yes[:, :, d.assert_j], lt - nt) + np.einsum(
                "qcj,jl->qcl", d.no[:, :, d.assert_j], lf - nf
            )
            total = total + base[:, None, :] + change
        return np.where(d.valid[:, :, None], total, -np.inf), on_t

    def _e_step(self, d: _Arrays, params: tuple) -> tuple[FloatArray, float, FloatArray]:
        """Responsibilities over (c, ℓ), the log-likelihood, and the attractor's expected picks."""
        lj, on_t = self._log_joint(d, *params)
        flat = lj.reshape(d.nq, -1)
        top = flat.max(axis=1, keepdims=True)
        weights = np.exp(flat - top)
        total = weights.sum(axis=1, keepdims=True)
        r = (weights / total).reshape(lj.shape)
        return r, float(np.sum(np.log(total[:, 0]) + top[:, 0])), on_t

    # -- the fit ----------------------------------------------------------------------------
    def fit(self, obs: Observations) -> JudgeFit:
        if obs.judges == 1 and len(self.delta) > 1:
            # One judge cannot tell a hard question from an easy one: only its rates over the
            # quiz are identified, and they are all the posterior needs. One level is the same
            # model's answer at a tenth of the work.
            one = copy.copy(self)
            one.delta = np.array([float(np.mean(self.delta))])
            return one.fit(obs)
        d = self._setup(obs)
        L = len(self.delta)
        priors = self._judge_priors(obs, np.full(L, 1.0 / L))
        params, r, loglik, iterations, converged = self._run(d, priors, free_pi=False)
        identified = False
        exact = self.profiles is not None and any(p is not None and p.exact for p in self.profiles)
        enough = obs.questions >= MIN_SET_ASIDE or exact  # known rates need no long quiz
        if priors.measured.any() and enough and not self.fixed_share:
            # A measured judge can identify π, but a profile measured on other questions carries
            # over only so far: the quiz moves π off the default only when its evidence is
            # clear (a likelihood-ratio test at p < 0.05), else the default stands. A handful of
            # questions never does: the default is what is known of real banks.
            free = self._run(d, priors, free_pi=True)
            if 2.0 * (free[2] - loglik) > _DECISIVE:
                params, r, loglik, iterations, converged = free
                identified = True
        priors.free_pi = identified  # the run kept: what the intervals are drawn about
        return self._result(d, obs, priors, params, r, loglik, iterations, converged, identified)

    def _run(
        self, d: _Arrays, priors: _JudgePriors, *, free_pi: bool
    ) -> tuple[tuple, FloatArray, float, int, bool]:
        """EM from the default start; π fixed at the default unless ``free_pi``."""
        L = len(self.delta)
        nj = len(d.modes)
        omega = np.full(L, 1.0 / L)
        beta = np.full(L, 0.5 if (self.attractor and d.pick_j.size) else 0.0)
        theta = np.full(nj, _THETA_PRIOR[0] + float(np.mean(self.delta)))
        alpha = np.full(nj, _ALPHA_PRIOR[0] + float(np.mean(self.delta)))
        gamma = np.full(nj, _GAMMA_PRIOR[0] - float(np.mean(self.delta)))
        priors.free_pi = free_pi
        params = (self.m0, omega, beta, theta, alpha, gamma)
        previous = -np.inf
        converged = False
        iterations = 0
        last = np.full(d.nq, np.nan)
        r, loglik, on_t = self._e_step(d, params)
        for iterations in range(1, self.max_iter + 1):  # noqa: B007 - the count is reported
            # converged when the likelihood has settled or no question's P(key wrong) moves by
            # more than ``answer_tol`` (EM crawls along the ridge between the judges' abilities
            # and the difficulty levels long after the answers have stopped moving)
            wrong_now = 1.0 - r.sum(axis=2)[np.arange(d.nq), d.keys]
            moved = float(np.max(np.abs(wrong_now - last))) if d.nq else 0.0
            last = wrong_now
            if abs(loglik - previous) < self.tol * max(1.0, abs(loglik)) or (
                iterations > 3 and moved < self.answer_tol
            ):
                converged = True
                break
            previous = loglik
            params = self._m_step(d, r, on_t, params, priors)
            r, loglik, on_t = self._e_step(d, params)
        return params, r, loglik, iterations, converged

    def _result(
        self,
        d: _Arrays,
        obs: Observations,
        priors: _JudgePriors,
        params: tuple,
        r: FloatArray,
        loglik: float,
        iterations: int,
        converged: bool,
        identified: bool,
    ) -> JudgeFit:
        pi, omega, beta, theta, alpha, gamma = params
        post_c = r.sum(axis=2)
        p_wrong = 1.0 - post_c[np.arange(d.nq), obs.keys]
        if identified:
            wrong_sum = float(p_wrong.sum())
            a_post = wrong_sum + _SET_ASIDE * self.m0
            b_post = d.nq - wrong_sum + _SET_ASIDE * (1 - self.m0)
        else:  # π is the default's: its uncertainty is the prior's
            a_post = self.strength * self.m0
            b_post = self.strength * (1 - self.m0)
        lo, hi = _beta_interval(a_post, b_post)
        # the share the fit expects: the mean P(key wrong) (π itself when identified; with the
        # default standing, π is set so that this mean is the default)
        expected = float(p_wrong.mean()) if d.nq and not self.fixed_share else float(pi)
        share = WrongShare(
            expected, (lo, hi), self.m0, self.strength, identified, bool(priors.measured.any())
        )
        judges = self._judge_rates(d, obs, omega, theta, alpha, gamma, priors)
        interval = self._intervals(d, params, a_post, b_post, priors, obs)
        return JudgeFit(
            posterior=post_c,
            p_key_wrong=p_wrong,
            interval=interval,
            wrong_share=share,
            judges=judges,
            attraction=self._attraction(d, params),
            level_weights=omega,
            log_likelihood=loglik,
            iterations=iterations,
            converged=converged,
            model=self.name,
        )

    def _attraction(self, d: _Arrays, params: tuple) -> float:
        """β over the whole quiz: the share of missed picks that land on their question's
        attractor, above the even share (0: misses spread evenly; 1: all on one distractor)."""
        if not d.pick_j.size or d.w <= 2:
            return 0.0
        r, _, on_t = self._e_step(d, params)
        landed = float(np.einsum("qcl,qcl->", r, on_t))
        missed = float(np.einsum("qcl,qc->", r, d.n_answered[:, None] - d.cnt))
        if missed <= 0:
            return 0.0
        inv = float(np.mean(1.0 / (d.counts - 1)))
        return float(np.clip((landed / missed - inv) / (1 - inv), 0.0, 1.0))

    def _judge_priors(self, obs: Observations, omega: FloatArray) -> _JudgePriors:
        nj = obs.judges
        mean = np.zeros((nj, 3))
        sd = np.zeros((nj, 3))
        mean[:, 0], sd[:, 0] = _THETA_PRIOR
        mean[:, 1], sd[:, 1] = _ALPHA_PRIOR
        mean[:, 2], sd[:, 2] = _GAMMA_PRIOR
        mean[:, 0] += float(omega @ self.delta)
        mean[:, 1] += float(omega @ self.delta)
        mean[:, 2] -= float(omega @ self.delta)
        measured = np.zeros(nj, dtype=bool)
        targets = np.full((nj, 2), np.nan)
        weights = np.zeros((nj, 2))
        if self.profiles is not None:
            for j, prof in enumerate(self.profiles[:nj]):
                if prof is None:
                    continue
                measured[j] = True
                pos, neg = prof.tp + prof.fn, prof.tn + prof.fp
                targets[j] = ((prof.tp + 0.5) / (pos + 1), (prof.fp + 0.5) / (neg + 1))
                # a profile measured on other questions carries over with at most this weight:
                # a judge's accuracy moves from one subject to the next by more than its
                # binomial error (on a real exam, 0.78 on one half and 0.80 on the other)
                weights[j] = (
                    (pos, neg) if prof.exact else (min(pos, PROFILE_CAP), min(neg, PROFILE_CAP * 3))
                )
        return _JudgePriors(mean, sd, measured, targets, weights)

    def _m_step(
        self, d: _Arrays, r_cl: FloatArray, on_t: FloatArray, params: tuple, pr: _JudgePriors
    ) -> tuple:
        pi, omega, beta, theta, alpha, gamma = params
        nq = d.nq
        r_l = r_cl.sum(axis=1)  # Q × L
        r_c = r_cl.sum(axis=2)  # Q × W
        wrong = float(nq - r_c[np.arange(nq), d.keys].sum())
        if pr.free_pi:  # the default was set aside: the quiz's own share, barely shrunk
            pi = (wrong + _SET_ASIDE * self.m0) / (nq + _SET_ASIDE)
            pi = float(np.clip(pi, 1e-4, 0.9))
        elif self.fixed_share:  # the caller's share, as it is (a re-judged edit: its run's)
            pi = self.m0
        else:
            # not identified by the verdicts: the default stands (see the module's note) as the
            # expected share of wrong keys — π is set so that the mean P(key wrong) over the
            # quiz is the default, and the verdicts only say which keys those are likely to be
            pi = float(np.clip(pi * self.m0 / max(wrong / nq, 1e-9), 1e-5, 0.5))
        omega = r_l.sum(axis=0) + _OMEGA_PSEUDO
        omega = omega / omega.sum()
        pr.omega_now = omega
        if d.pick_j.size:
            if self.attractor:
                # per level: the share of missed picks that landed on the attractor
                landed = np.einsum("qcl,qcl->l", r_cl, on_t) + 1.0
                missed = np.einsum("qcl,qc->l", r_cl, d.n_answered[:, None] - d.cnt) + 2.0
                share = landed / missed
                inv = float(np.mean(1.0 / (d.counts - 1)))
                if d.w > 2 and inv < 1:
                    beta = np.clip((share - inv) / (1 - inv), 0.0, 0.995)
            # per pick judge and level: expected correct picks and answers
            correct = np.einsum("qcl,qcj->jl", r_cl, d.onehot)
            answered = np.einsum("ql,qj->jl", r_l, d.answered)
            for j in map(int, d.pick_j):
                theta[j] = self._newton(theta[j], correct[j], answered[j], -1.0, pr, j, 0)
        if d.assert_j.size:
            said_true_c = np.einsum("qcl,qcj->jl", r_cl, d.yes)
            judged_c = np.einsum("qcl,qcj->jl", r_cl, d.yes + d.no)
            said_true_all = np.einsum("ql,qj->jl", r_l, d.yes_sum)
            judged_all = np.einsum("ql,qj->jl", r_l, d.yes_sum + d.no_sum)
            for j in map(int, d.assert_j):
                alpha[j] = self._newton(alpha[j], said_true_c[j], judged_c[j], -1.0, pr, j, 1)
                gamma[j] = self._newton(
                    gamma[j],
                    said_true_all[j] - said_true_c[j],
                    judged_all[j] - judged_c[j],
                    1.0,
                    pr,
                    j,
                    2,
                )
        return (pi, omega, beta, theta, alpha, gamma)

    def _newton(
        self,
        x: float,
        succ: FloatArray,
        trials: FloatArray,
        sign: float,
        pr: _JudgePriors,
        j: int,
        which: int,
    ) -> float:
        """argmax over x of Σ_ℓ succ log σ(x + sign·δ_ℓ) + (trials − succ) log(1 − σ) + priors.

        ``sign`` is −1 for a rate that falls with difficulty (accuracy, TPR) and +1 for one that
        rises (FPR). A measured profile adds its counts on the rate averaged over the levels."""
        mu, sd = pr.mean[j, which], pr.sd[j, which]
        target = None
        weight = 0.0
        if pr.measured[j] and which in (0, 1):
            target, weight = pr.targets[j, 0], pr.weights[j, 0]
        elif pr.measured[j] and which == 2:
            target, weight = pr.targets[j, 1], pr.weights[j, 1]
        omega = pr.omega_now if pr.omega_now is not None else None
        if target is not None and weight > 0:
            sd = 10.0  # a measured judge: its profile is the prior
        for _ in range(25):
            p = _sigmoid(x + sign * self.delta)
            grad = float(np.sum(succ - trials * p)) - (x - mu) / sd**2
            hess = -float(np.sum(trials * p * (1 - p))) - 1.0 / sd**2
            if target is not None and weight > 0:
                w = omega if omega is not None else np.full(len(self.delta), 1 / len(self.delta))
                pm = float(w @ p)
                dp = float(w @ (p * (1 - p)))
                grad += weight * (target - pm) / max(pm * (1 - pm), 1e-9) * dp
                hess -= weight * dp * dp / max(pm * (1 - pm), 1e-9)
            step = grad / hess
            x -= float(np.clip(step, -2.0, 2.0))
            if abs(step) < 1e-8:
                break
        return float(x)

    def _judge_rates(self, d, obs, omega, theta, alpha, gamma, pr) -> tuple[JudgeRates, ...]:
        out = []
        mean_n = float(np.mean(obs.counts)) if obs.questions else 4.0
        for j in range(obs.judges):
            answered = (
                int(d.answered[:, j].sum())
                if obs.modes[j] == "pick"
                else int((d.yes_sum[:, j] + d.no_sum[:, j] > 0).sum())
            )
            if obs.modes[j] == "pick":
                a = float(omega @ _sigmoid(theta[j] - self.delta))
                out.append(
                    JudgeRates(
                        "pick", a, 1 - (1 - a) / (mean_n - 1), bool(pr.measured[j]), answered
                    )
                )
            else:
                tpr = float(omega @ _sigmoid(alpha[j] - self.delta))
                fpr = float(omega @ _sigmoid(gamma[j] + self.delta))
                out.append(JudgeRates("assertion", tpr, 1 - fpr, bool(pr.measured[j]), answered))
        return tuple(out)

    def _intervals(self, d, params, a_post, b_post, pr, obs) -> FloatArray:
        """95 % interval of P(key right) per question: the posterior under parameter draws —
        π from its Beta, each judge's logits from a normal as wide as its information (wide
        when its rates are not measured)."""
        pi, omega, beta, theta, alpha, gamma = params
        nq = d.nq
        if self.draws <= 0:  # no interval asked for (a bench's speed): the point, twice
            r, _, _ = self._e_step(d, params)
            point = r.sum(axis=2)[np.arange(nq), d.keys]
            return np.stack([point, point], axis=1)
        rng = np.random.default_rng(self.seed)
        draws = max(8, self.draws)
        out = np.empty((draws, nq))
        # logit sd per judge: from a measured profile's counts, else the data's information
        # floored by how little a single judge's agreement says about its own accuracy
        sd = np.full(obs.judges, 0.6)
        for j in range(obs.judges):
            if pr.measured[j]:
                n = max(pr.weights[j, 0], 1.0)
                p = pr.targets[j, 0]
                sd[j] = 1.0 / np.sqrt(n * p * (1 - p))
            elif obs.judges >= 3:
                sd[j] = 0.25
        # with the default standing, π was set so the quiz's mean P(key wrong) is the default:
        # each drawn share is scaled the same way, so the interval is about the point
        scale = 1.0 if pr.free_pi or self.fixed_share else pi / (a_post / (a_post + b_post))
        drawn = []
        for _ in range(draws):
            pi_k = float(np.clip(rng.beta(a_post, b_post) * scale, 1e-6, 0.9))
            th = theta + rng.normal(0, sd)
            al = alpha + rng.normal(0, sd)
            ga = gamma + rng.normal(0, sd)
            drawn.append((pi_k, omega, beta, th, al, ga))
        if not d.pick_j.size:  # assertion judges only (a vet run): every draw at once
            out = self._key_posteriors(d, drawn)
        else:
            for k, params_k in enumerate(drawn):
                r, _, _ = self._e_step(d, params_k)
                out[k] = r.sum(axis=2)[np.arange(nq), d.keys]
        return np.stack([np.quantile(out, 0.025, axis=0), np.quantile(out, 0.975, axis=0)], axis=1)

    def _key_posteriors(self, d: _Arrays, drawn: list[tuple]) -> FloatArray:
        """P(key right) per question (draws × Q) under each of ``drawn``'s parameters, for
        judges that all judge assertions: :meth:`_e_step`'s posterior for every draw in one
        pass of array operations (32 passes of small ones took most of a vet run's fit)."""
        pis = np.array([p[0] for p in drawn])  # D
        omega = drawn[0][1]
        alphas = np.array([p[4] for p in drawn])[:, d.assert_j]  # D × A
        gammas = np.array([p[5] for p in drawn])[:, d.assert_j]
        n = d.counts.astype(np.float64)
        with np.errstate(divide="ignore"):
            other = np.log(pis[:, None] / (n - 1)[None, :])  # D × Q
            lp_c = np.where(d.is_key[None], np.log(1.0 - pis)[:, None, None], other[:, :, None])
        lp_c = np.where(d.valid[None], lp_c, -np.inf)  # D × Q × W
        total = lp_c[..., None] + np.log(omega)[None, None, None, :]  # D × Q × W × L
        tpr = _sigmoid(alphas[:, :, None] - self.delta[None, None, :])  # D × A × L
        fpr = _sigmoid(gammas[:, :, None] + self.delta[None, None, :])
        lt, lf = np.log(np.clip(tpr, _CLIP, 1)), np.log(np.clip(1 - tpr, _CLIP, 1))
        nt, nf = np.log(np.clip(fpr, _CLIP, 1)), np.log(np.clip(1 - fpr, _CLIP, 1))
        ys, ns = d.yes_sum[:, d.assert_j], d.no_sum[:, d.assert_j]  # Q × A
        base = np.einsum("qa,dal->dql", ys, nt) + np.einsum("qa,dal->dql", ns, nf)
        change = np.einsum("qca,dal->dqcl", d.yes[:, :, d.assert_j], lt - nt) + np.einsum(
            "qca,dal->dqcl", d.no[:, :, d.assert_j], lf - nf
        )
        total = total + base[:, :, None, :] + change
        joint = np.where(d.valid[None, :, :, None], total, -np.inf)
        flat = joint.reshape(len(drawn), d.nq, -1)
        weights = np.exp(flat - flat.max(axis=2, keepdims=True))
        r = (weights / weights.sum(axis=2, keepdims=True)).reshape(joint.shape)
        return np.asarray(r.sum(axis=3)[:, np.arange(d.nq), d.keys], dtype=np.float64)


@dataclass
class _JudgePriors:
    mean: FloatArray
    sd: FloatArray
    measured: npt.NDArray[np.bool_]
    targets: FloatArray  # (TPR or accuracy, FPR)
    weights: FloatArray  # verdicts behind each
    omega_now: FloatArray | None = None
    free_pi: bool = False


class _Arrays:
    """The verdicts in the shapes the E- and M-steps use."""

    def __init__(self, obs: Observations) -> None:
        v = obs.verdicts
        nq, w, nj = v.shape
        self.nq, self.w = nq, w
        self.keys = obs.keys
        self.counts = obs.counts
        self.valid = np.arange(w)[None, :] < obs.counts[:, None]
        self.is_key = np.zeros((nq, w), dtype=bool)
        self.is_key[np.arange(nq), obs.keys] = True
        self.not_self = ~np.eye(w, dtype=bool)
        self.modes = obs.modes
        modes = np.array(obs.modes)
        self.pick_j = np.flatnonzero(modes == "pick")
        self.assert_j = np.flatnonzero(modes != "pick")
        picks = obs.picks()
        self.onehot = np.zeros((nq, w, nj))
        qi, ji = np.nonzero(picks >= 0)
        self.onehot[qi, picks[qi, ji], ji] = 1.0
        self.answered = (picks >= 0).astype(np.float64)  # Q × J
        self.n_answered = self.answered.sum(axis=1)
        self.cnt = self.onehot.sum(axis=2)  # Q × W
        self.weight = shared_mistake_weights(picks)
        self.onehot_p = self.onehot[:, :, self.pick_j]
        self.answered_p = self.answered[:, self.pick_j]
        self.cnt_w = self.onehot @ self.weight
        self.n_answered_w = self.answered @ self.weight
        seen = ~np.isnan(v) & self.valid[:, :, None]
        amask = np.zeros(nj, dtype=bool)
        amask[self.assert_j] = True
        seen = seen & amask[None, None, :]
        self.yes = np.where(seen, np.nan_to_num(v), 0.0)
        self.no = np.where(seen, 1.0 - np.nan_to_num(v), 0.0)
        self.yes_sum = self.yes.sum(axis=1)
        self.no_sum = self.no.sum(axis=1)


def _beta_interval(a: float, b: float, level: float = 0.95) -> tuple[float, float]:
    rng = np.random.default_rng(12345)
    x = rng.beta(max(a, 1e-3), max(b, 1e-3), size=4000)
    tail = (1 - level) / 2
    return float(np.quantile(x, tail)), float(np.quantile(x, 1 - tail))


def independent_judges(**options: object) -> DifficultyJudges:
    """Today's independent model as a case of this one: every question equally hard (one
    level) and misses spread evenly (no attractor); the rest of ``options`` as for
    :class:`DifficultyJudges`."""
    return DifficultyJudges(levels=(0.0,), attractor=False, **options)  # type: ignore[arg-type]


def majority_disagreement(obs: Observations) -> FloatArray:
    """The share of each question's answering judges that named an option other than the key
    (pick judges) or called the key false / another option true (assertion judges): the plain
    vote every model is compared with."""
    picks = obs.picks()
    answered = picks >= 0
    away = answered & (picks != obs.keys[:, None])
    v = obs.verdicts
    key_v = v[np.arange(obs.questions), obs.keys, :]  # Q × J
    other_true = np.nansum(
        np.where(np.arange(v.shape[1])[None, :, None] == obs.keys[:, None, None], 0.0, v), axis=1
    )
    assertion = np.array([m != "pick" for m in obs.modes], dtype=bool)[None, :]
    a_seen = assertion & ~np.isnan(key_v)
    a_away = a_seen & ((key_v == 0) | (other_true > 0))
    num = away.sum(axis=1) + a_away.sum(axis=1)
    den = answered.sum(axis=1) + a_seen.sum(axis=1)
    return np.divide(num, den, out=np.zeros(len(num)), where=den > 0)


_SHARED_EDGE = 0.5  # excess shared mistakes below this are what judges of one era share anyway


def shared_mistake_weights(picks: npt.NDArray[np.int64]) -> FloatArray:
    """Per judge, the weight of its verdicts when judges share mistakes.

    Two judges share a mistake when, on a question where either leaves the panel's most common
    answer, they name the same option. Across a real panel that share is low (about 0.1, up to
    0.26 for two releases of one model family); two copies of one model share nearly every
    mistake (0.99), and counting both would count one judge's evidence twice. Each judge's
    excess over the panel's median share, scaled to [0, 1] and counted from ``_SHARED_EDGE`` up,
    says how much of another judge it repeats; its weight is 1 / (1 + Σ excess), so k copies of
    one judge weigh about one judge together. Judges that do not pick (assertion mode) keep 1.
    """
    nq, nj = picks.shape
    weight = np.ones(nj)
    if nj < 3 or nq == 0:
        return weight
    answered = picks >= 0
    counts = np.zeros((nq, int(max(picks.max(), 0)) + 1))
    for j in range(nj):
        rows = np.flatnonzero(answered[:, j])
        np.add.at(counts, (rows, picks[rows, j]), 1.0)
    modal = np.argmax(counts, axis=1)
    shared = np.full((nj, nj), np.nan)
    for j in range(nj):
        for k in range(j + 1, nj):
            both = answered[:, j] & answered[:, k]
            away = both & ((picks[:, j] != modal) | (picks[:, k] != modal))
            if away.sum() >= 10:
                shared[j, k] = shared[k, j] = float(np.mean(picks[away, j] == picks[away, k]))
    off = shared[~np.isnan(shared)]
    if not off.size:
        return weight
    typical = float(np.median(off))
    excess = np.clip((shared - typical) / max(1.0 - typical, 1e-9), 0.0, 1.0)
    excess = np.where(np.isnan(excess), 0.0, excess)
    excess = np.clip((excess - _SHARED_EDGE) / (1.0 - _SHARED_EDGE), 0.0, 1.0)
    return np.asarray(1.0 / (1.0 + excess.sum(axis=1)), dtype=np.float64)
