"""Simulated worlds with the truth known, for checking a judge model (issue 26).

Two kinds: judges that err **independently** (today's model: every question alike, misses spread
evenly over the distractors, assertion judges with fixed TPR/TNR), and judges that err
**together** on hard questions (each question draws a difficulty; a judge's accuracy falls with
it; misses gather on one attractive distractor per question). Both give the verdict array every
model takes (:class:`quiztui.core.judges.Observations`) and which keys are wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from quiztui.core.judges import Observations


@dataclass(frozen=True)
class World:
    observations: Observations
    key_wrong: npt.NDArray[np.bool_]
    truth: npt.NDArray[np.int64]  # the correct option of each question
    accuracy: npt.NDArray[np.float64]  # per judge: its realised pick accuracy (or TPR)
    attraction: float  # realised share of misses on the attractor, above the even share


def _keys(rng: np.random.Generator, truth: npt.NDArray[np.int64], n: int, wrong_share: float):
    wrong = rng.random(len(truth)) < wrong_share
    shift = rng.integers(1, n, size=len(truth))
    keys = np.where(wrong, (truth + shift) % n, truth)
    return keys.astype(np.int64), wrong


def correlated_picks(
    questions: int,
    abilities: npt.ArrayLike,
    *,
    wrong_share: float = 0.02,
    options: int = 4,
    difficulty_sd: float = 2.0,
    attractor: float = 0.8,
    seed: int = 0,
) -> World:
    """Pick judges that fail together: question difficulty d ~ N(0, sd); judge j picks the
    correct option with σ(θ_j − d); a miss lands on the question's attractor with probability
    ``attractor`` + (1 − attractor)/(n − 1), elsewhere evenly."""
    rng = np.random.default_rng(seed)
    theta = np.asarray(abilities, dtype=np.float64)
    nj = len(theta)
    truth = rng.integers(0, options, size=questions).astype(np.int64)
    keys, wrong = _keys(rng, truth, options, wrong_share)
    d = rng.normal(0.0, difficulty_sd, size=questions)
    att = (truth + rng.integers(1, options, size=questions)) % options
    a = 1.0 / (1.0 + np.exp(-(theta[None, :] - d[:, None])))
    right = rng.random((questions, nj)) < a
    to_att = rng.random((questions, nj)) < attractor
    # an even miss: one of the n − 1 wrong options
    even = (truth[:, None] + rng.integers(1, options, size=(questions, nj))) % options
    picks = np.where(right, truth[:, None], np.where(to_att, att[:, None], even))
    v = np.zeros((questions, options, nj))
    v[np.arange(questions)[:, None], picks, np.arange(nj)[None, :]] = 1.0
    missed = ~right
    realised = float(np.mean(picks[missed] == np.broadcast_to(att[:, None], picks.shape)[missed]))
    inv = 1.0 / (options - 1)
    obs = Observations.of(v, keys, np.full(questions, options), ["pick"] * nj)
    return World(obs, wrong, truth, right.mean(axis=0), (realised - inv) / (1 - inv))


def independent_assertions(
    questions: int,
    rates: list[tuple[float, float]],
    *,
    wrong_share: float = 0.1,
    options: int = 4,
    seed: int = 0,
) -> World:
    """Assertion judges with fixed (TPR, TNR), every verdict independent given the truth."""
    rng = np.random.default_rng(seed)
    nj = len(rates)
    truth = rng.integers(0, options, size=questions).astype(np.int64)
    keys, wrong = _keys(rng, truth, options, wrong_share)
    is_true = np.arange(options)[None, :] == truth[:, None]
    v = np.zeros((questions, options, nj))
    tprs = np.zeros(nj)
    for j, (tpr, tnr) in enumerate(rates):
        u = rng.random((questions, options))
        v[:, :, j] = np.where(is_true, u < tpr, u >= tnr)
        tprs[j] = float(v[:, :, j][is_true].mean())
    obs = Observations.of(v, keys, np.full(questions, options), ["assertion"] * nj)
    return World(obs, wrong, truth, tprs, 0.0)


def independent_picks(
    questions: int,
    accuracies: list[float],
    *,
    wrong_share: float = 0.1,
    options: int = 4,
    seed: int = 0,
) -> World:
    """Pick judges that err independently and evenly (every question alike, no attractor)."""
    rng = np.random.default_rng(seed)
    nj = len(accuracies)
    truth = rng.integers(0, options, size=questions).astype(np.int64)
    keys, wrong = _keys(rng, truth, options, wrong_share)
    acc = np.asarray(accuracies)
    right = rng.random((questions, nj)) < acc[None, :]
    even = (truth[:, None] + rng.integers(1, options, size=(questions, nj))) % options
    picks = np.where(right, truth[:, None], even)
    v = np.zeros((questions, options, nj))
    v[np.arange(questions)[:, None], picks, np.arange(nj)[None, :]] = 1.0
    obs = Observations.of(v, keys, np.full(questions, options), ["pick"] * nj)
    return World(obs, wrong, truth, right.mean(axis=0), 0.0)
