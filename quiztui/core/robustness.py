"""Robustness of answers under question paraphrases: the MultiQ&A metrics (Cho & Watson, §5).

Every question j is asked as the original q0 (column 0, the identity) and as v paraphrases
(columns 1..v), giving r = v + 1 raters. ``answers`` is questions × raters of category codes
``0..K_j − 1`` or ``MISSING`` (a refusal, a filtered or unparseable reply, a failed request).
A missing answer is never counted as wrong: it is left out of every statistic. ``correct`` is the
code of the right answer, negative when no category is right (then every answered rater scores 0).

With m_ij = 1 when rater i answered question j correctly:

* accuracy A = m_j0; worst Ω = min_i m_ij; best O = max_i m_ij; plurality Ŷ = m(mode_i answer_ij)
  (§5.1). The mode's ties go to the identity's answer when it is among the most frequent, else to
  the smallest tied code.
* difficulty µD = mean_i m_ij (§5.2, Lord 1952).
* certainty Hη = 1 + Σ p log p / log K_j, i.e. 1 − H/H_max (§5.2); 1 when K_j = 1.
* Gibbs' M2 term 1 − K_j/(K_j − 1) · (1 − Σ p²) (§5.2); 1 when K_j = 1.
* Fleiss' per-question agreement P_j and, over the complete questions, Fleiss' κ (§5.2).
* Cronbach's α, which for 0/1 scores is KR-20 (§5.3), over the complete questions.

Everything is vectorised: the category counts come from one ``np.bincount``. Undefined values are
nan, never an exception; malformed input is a ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from quiztui.core.agreement import fleiss_kappa

MISSING = -1

_ORDER_TOLERANCE = 1e-12

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True, eq=False)
class QuestionMetrics:
    """Per-question metrics, one entry per question; nan where a metric is undefined.

    ``accuracy`` is nan when the identity's answer is missing; ``worst``, ``best``,
    ``plurality``, ``difficulty``, ``certainty`` and ``m2`` when no rater answered; ``agreement``
    when fewer than two did. ``mode`` is -1 when no rater answered.
    """

    accuracy: FloatArray
    worst: FloatArray
    best: FloatArray
    plurality: FloatArray
    difficulty: FloatArray
    certainty: FloatArray
    m2: FloatArray
    agreement: FloatArray
    mode: IntArray
    answered: IntArray
    complete: BoolArray


@dataclass(frozen=True, slots=True)
class RobustnessSummary:
    """Quiz-level metrics.

    A, Ω, O and Ŷ are means over the *same* questions: those whose identity answer is present
    (where A is defined). Per question Ω_j ≤ min(Ŷ_j, A_j) ≤ max(Ŷ_j, A_j) ≤ O_j, so averaging
    over one common set keeps the seed's ordering exact; averaging each over its own set would
    not. µD, Hη and M2 are means over the questions with at least one answer. Fleiss' κ and
    Cronbach's α use only the complete questions (every rater answered). Undefined values are nan.
    """

    n: int  # questions
    raters: int  # r = v + 1, the identity included
    answered_questions: int  # questions with at least one answer
    complete_questions: int  # questions every rater answered
    missing_answers: int  # MISSING entries in the whole table
    accuracy: float
    worst: float
    best: float
    plurality: float
    difficulty: float
    certainty: float
    m2: float
    fleiss_kappa: float
    cronbach_alpha: float  # seed §5.3 as written: the questions are the items
    # The usual orientation, the forms (raters) as items and the questions as respondents:
    # KR-20 of m.T. With exchangeable raters the seed's orientation is noise around 0, while this
    # one measures how consistently the forms of a question are answered right or wrong.
    cronbach_alpha_forms: float = math.nan

    @property
    def ordering_holds(self) -> bool:
        """Ω ≤ min(Ŷ, A) ≤ max(Ŷ, A) ≤ O within 1e-12; False when any of them is nan."""
        values = (self.worst, self.plurality, self.accuracy, self.best)
        if any(math.isnan(x) for x in values):
            return False
        low, high = min(self.plurality, self.accuracy), max(self.plurality, self.accuracy)
        tol = _ORDER_TOLERANCE
        return self.worst <= low + tol and low <= high + tol and high <= self.best + tol


@dataclass(frozen=True, slots=True, eq=False)
class _Computed:
    metrics: QuestionMetrics
    counts: IntArray  # n × max(K) category counts
    correct: BoolArray  # m as a boolean n × r matrix (False where missing)
    valid: BoolArray  # answered entries


def _validate(
    answers: npt.ArrayLike, correct: npt.ArrayLike, k: npt.ArrayLike
) -> tuple[IntArray, IntArray, IntArray]:
    a = np.asarray(answers)
    c = np.asarray(correct)
    kk = np.asarray(k)
    if a.ndim != 2:
        raise ValueError(f"answers must be questions × raters (2-D), got {a.ndim}-D")
    n, r = a.shape
    if r < 1:
        raise ValueError("answers need at least one rater column (the original question)")
    for name, arr in (("answers", a), ("correct", c), ("k", kk)):
        if arr.size and arr.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if c.shape != (n,):
        raise ValueError(f"correct must hold one code per question ({n}), got shape {c.shape}")
    if kk.shape != (n,):
        raise ValueError(f"k must hold one count per question ({n}), got shape {kk.shape}")
    a = a.astype(np.int64, copy=False)
    c = c.astype(np.int64, copy=False)
    kk = kk.astype(np.int64, copy=False)
    if n == 0:
        return a, c, kk
    bad_k = kk < 1
    if bad_k.any():
        row = int(np.argmax(bad_k))
        raise ValueError(f"k[{row}] = {kk[row]}: a question needs at least one category")
    bad_c = c >= kk
    if bad_c.any():
        row = int(np.argmax(bad_c))
        raise ValueError(f"correct[{row}] = {c[row]} is not below K = {kk[row]}")
    bad = (a < MISSING) | (a >= kk[:, None])
    if bad.any():
        row, col = divmod(int(np.argmax(bad)), r)
        raise ValueError(
            f"answers[row {row}, column {col}] = {a[row, col]} is not a code for K = {kk[row]}"
            f" (expected 0..{kk[row] - 1}, or {MISSING} for a missing answer)"
        )
    return a, c, kk


def _count(answers: IntArray, valid: BoolArray, width: int) -> IntArray:
    """n × width counts of the valid codes, by one bincount over row * width + code."""
    n = answers.shape[0]
    if n == 0 or width == 0:
        return np.zeros((n, width), dtype=np.int64)
    flat = (np.arange(n, dtype=np.int64)[:, None] * width + answers)[valid]
    return np.bincount(flat, minlength=n * width).reshape(n, width)


def count_table(answers: npt.ArrayLike, k: npt.ArrayLike) -> IntArray:
    """Questions × max(K) table of how many raters gave each category; MISSING is not counted."""
    kk = np.asarray(k)
    a, _, kk = _validate(answers, np.full(kk.shape, MISSING), kk)
    width = int(kk.max()) if kk.size else 0
    return _count(a, a >= 0, width)


def _compute(answers: npt.ArrayLike, correct: npt.ArrayLike, k: npt.ArrayLike) -> _Computed:
    a, c, kk = _validate(answers, correct, k)
    n = a.shape[0]
    valid = a >= 0
    answered = valid.sum(axis=1)
    has_any = answered > 0
    width = int(kk.max()) if n else 0
    counts = _count(a, valid, width)
    # Valid codes are ≥ 0, so a negative correct code never matches: m = 0 for every rater.
    m = valid & (a == c[:, None])
    right = m.sum(axis=1)
    nan = np.nan

    accuracy = np.where(valid[:, 0], m[:, 0], nan)
    worst = np.where(has_any, right == answered, nan)
    best = np.where(has_any, right > 0, nan)
    safe_answered = np.maximum(answered, 1)
    difficulty = np.where(has_any, right / safe_answered, nan)

    # Mode: the identity's answer when it ties for most frequent, else the smallest tied code.
    if width:
        most = counts.max(axis=1)
        tied = counts == most[:, None]
        identity = a[:, 0]
        identity_tied = valid[:, 0] & tied[np.arange(n), np.maximum(identity, 0)]
        mode = np.where(identity_tied, identity, np.argmax(tied, axis=1))
    else:
        mode = np.zeros(n, dtype=np.int64)
    mode = np.where(has_any, mode, MISSING).astype(np.int64)
    plurality = np.where(has_any, mode == c, nan)

    share = counts / safe_answered[:, None]
    log_share = np.log(share, out=np.zeros_like(share), where=counts > 0)
    sum_plogp = (share * log_share).sum(axis=1)
    sum_p2 = (share * share).sum(axis=1)
    several = kk > 1
    log_k = np.log(np.where(several, kk, 2))
    certainty = np.where(several, 1.0 + sum_plogp / log_k, 1.0)
    certainty = np.where(has_any, certainty, nan)
    k_ratio = kk / np.where(several, kk - 1, 1)
    m2 = np.where(several, 1.0 - k_ratio * (1.0 - sum_p2), 1.0)
    m2 = np.where(has_any, m2, nan)

    pairs = answered * (answered - 1)
    sum_c2 = (counts * counts).sum(axis=1)
    agreement = np.where(pairs > 0, (sum_c2 - answered) / np.maximum(pairs, 1), nan)

    metrics = QuestionMetrics(
        accuracy=accuracy.astype(np.float64),
        worst=worst.astype(np.float64),
        best=best.astype(np.float64),
        plurality=plurality.astype(np.float64),
        difficulty=difficulty.astype(np.float64),
        certainty=certainty.astype(np.float64),
        m2=m2.astype(np.float64),
        agreement=agreement.astype(np.float64),
        mode=mode,
        answered=answered.astype(np.int64),
        complete=answered == a.shape[1],
    )
    return _Computed(metrics=metrics, counts=counts, correct=m, valid=valid)


def per_question(
    answers: npt.ArrayLike, correct: npt.ArrayLike, k: npt.ArrayLike
) -> QuestionMetrics:
    """Every per-question metric for questions × raters ``answers`` (see the module docstring)."""
    return _compute(answers, correct, k).metrics


def _mean(values: FloatArray, where: BoolArray) -> float:
    """Mean over ``where``; nan when it selects nothing (no RuntimeWarning)."""
    chosen = values[where]
    return float(chosen.mean()) if chosen.size else math.nan


def summarise(
    answers: npt.ArrayLike, correct: npt.ArrayLike, k: npt.ArrayLike
) -> RobustnessSummary:
    """Quiz-level metrics; see ``RobustnessSummary`` for which questions each one averages."""
    computed = _compute(answers, correct, k)
    q = computed.metrics
    n, raters = computed.valid.shape
    identity = computed.valid[:, 0]
    has_any = q.answered > 0
    complete = q.complete
    if raters >= 2 and complete.any():
        kappa = fleiss_kappa_counts(computed.counts[complete])
    else:
        kappa = math.nan
    alpha = kr20(computed.correct[complete]) if raters >= 2 else math.nan
    alpha_forms = kr20(computed.correct[complete].T) if raters >= 2 else math.nan
    return RobustnessSummary(
        n=n,
        raters=raters,
        answered_questions=int(has_any.sum()),
        complete_questions=int(complete.sum()),
        missing_answers=int(computed.valid.size - computed.valid.sum()),
        accuracy=_mean(q.accuracy, identity),
        worst=_mean(q.worst, identity),
        best=_mean(q.best, identity),
        plurality=_mean(q.plurality, identity),
        difficulty=_mean(q.difficulty, has_any),
        certainty=_mean(q.certainty, has_any),
        m2=_mean(q.m2, has_any),
        fleiss_kappa=kappa,
        cronbach_alpha=alpha,
        cronbach_alpha_forms=alpha_forms,
    )


def fleiss_kappa_counts(table: npt.ArrayLike) -> float:
    """Fleiss' κ (1971) from a subjects × categories count table with equal row totals.

    :func:`quiztui.core.agreement.fleiss_kappa`, except that subjects rated once give nan rather
    than an error: a robustness run whose only form is the identity has no agreement to report.
    """
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim == 2 and counts.size and (counts >= 0).all() and (counts.sum(axis=1) < 2).all():
        return math.nan
    return fleiss_kappa(counts)


def kr20(m: npt.ArrayLike) -> float:
    """Cronbach's α of 0/1 scores, i.e. KR-20 (seed §5.3), for an n × r matrix.

    Items are the n samples (questions), the "respondents" are the r raters:
    α = n/(n − 1) · (1 − Σ_j var(m[j, :]) / var(m.sum(axis=0))). Both variances are population
    variances (ddof = 0), so var(m[j, :]) = p_j q_j as in KR-20; the ratio is the same with ddof = 1
    on both. nan when n < 2 or the raters' totals do not vary.

    With only r "respondents", and raters that are exchangeable (paraphrases of one question),
    this orientation is noisy around 0; ``kr20(m.T)`` is the usual one (raters as items).
    """
    x = np.asarray(m)
    if x.ndim != 2:
        raise ValueError(f"m must be samples × raters (2-D), got {x.ndim}-D")
    if x.size and not np.isin(x, (0, 1)).all():
        raise ValueError("m must hold 0/1 scores")
    items, raters = x.shape
    if items < 2 or raters < 1:
        return math.nan
    scores = x.astype(np.float64)
    item_variance = float(scores.var(axis=1).sum())
    total_variance = float(scores.sum(axis=0).var())
    if total_variance <= 0.0:
        return math.nan
    return items / (items - 1) * (1.0 - item_variance / total_variance)


def guessing_limits(k: int, raters: int) -> dict[str, float]:
    """Expected metrics when every rater guesses uniformly among k options (seed §5.1).

    A, Ŷ and µD are 1/k (Ŷ given a key independent of the guesses); O = 1 − (1 − 1/k)^r, the
    chance that at least one of r guesses is right; Ω = (1/k)^r, the chance that all are.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if raters < 1:
        raise ValueError(f"raters must be at least 1, got {raters}")
    p = 1.0 / k
    return {
        "accuracy": p,
        "plurality": p,
        "best": 1.0 - (1.0 - p) ** raters,
        "worst": p**raters,
        "difficulty": p,
    }


def question_row(answers_row: Sequence[int], correct: int, k: int) -> dict[str, float | int | None]:
    """One question's metrics as plain Python values for JSON: None where undefined.

    Keys: accuracy, worst, best, plurality, difficulty, certainty, m2, agreement (floats or None),
    mode (the plurality code, None when no rater answered) and answered (int).
    """
    row = np.asarray(answers_row)
    if row.ndim != 1:
        raise ValueError(f"answers_row must be one question's answers (1-D), got {row.ndim}-D")
    q = per_question(row[None, :], np.asarray([correct]), np.asarray([k]))
    out: dict[str, float | int | None] = {}
    for name in (
        "accuracy",
        "worst",
        "best",
        "plurality",
        "difficulty",
        "certainty",
        "m2",
        "agreement",
    ):
        value = float(getattr(q, name)[0])
        out[name] = None if math.isnan(value) else value
    mode = int(q.mode[0])
    out["mode"] = None if mode == MISSING else mode
    out["answered"] = int(q.answered[0])
    return out


__all__ = [
    "MISSING",
    "QuestionMetrics",
    "RobustnessSummary",
    "count_table",
    "fleiss_kappa_counts",
    "guessing_limits",
    "kr20",
    "per_question",
    "question_row",
    "summarise",
]
