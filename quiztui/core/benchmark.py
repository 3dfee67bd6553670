"""Scoring a grader against human scores (seed 003): calibration map, AAD, brackets, correlations.

A grader's raw scores live on its own scale (1–10, 2/1/0, a cosine). They are mapped onto the
human 0–5 scale by a *monotone* map fitted on a training split — isotonic regression (pool
adjacent violators, interpolated between fitted points and clamped at the ends, as scikit-learn's
``IsotonicRegression(out_of_bounds="clip")``) or a least-squares line with its slope held at or
above zero — and judged on a separate test split:

- average absolute difference between mapped and human scores (seed 003, method 1);
- score-bracket accuracy: both in the same bracket of [0, 2), [2, 4), [4, 5] (method 2);
- Pearson and Spearman correlation of mapped and human scores;
- the 3×3 bracket confusion matrix (rows human, columns predicted);
- the constant-mean baseline: every scored test item predicted as the training mean (on the same
  items as the grader, so an unscored item cannot tilt the comparison).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

SCALE_MAX = 5.0
BRACKETS: tuple[str, ...] = ("0-2", "2-4", "4-5")
# Seed 003's published MSRpar figures: (average absolute difference, bracket accuracy).
SEED_FIGURES: dict[str, tuple[float, float]] = {
    "Queryloop paper, correctness prompt (pass3)": (1.2526, 0.5282),
    "Queryloop paper, fact scoring (facts)": (1.1672, 0.5606),
}
CALIBRATIONS = ("isotonic", "linear")

Array = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class MonotoneMap:
    """A non-decreasing map from raw grader scores to 0–5, defined by points (x, y)."""

    kind: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]

    def __call__(self, raw: Sequence[float] | Array) -> Array:
        x = np.asarray(raw, dtype=float)
        if len(self.xs) == 1:
            return np.full_like(x, self.ys[0])
        return np.clip(np.interp(x, self.xs, self.ys), 0.0, SCALE_MAX)

    def describe(self) -> str:
        if self.kind == "linear" and len(self.xs) == 2:
            (x0, x1), (y0, y1) = self.xs, self.ys
            slope = (y1 - y0) / (x1 - x0) if x1 != x0 else 0.0
            return f"linear: {slope:.4g} × raw + {y0 - slope * x0:.4g}, clipped to 0-5"
        return f"isotonic: {len(self.xs)} points over raw {self.xs[0]:.4g}..{self.xs[-1]:.4g}"


def fit_isotonic(raw: Sequence[float] | Array, human: Sequence[float] | Array) -> MonotoneMap:
    """Least-squares non-decreasing fit over the distinct raw values (pool adjacent violators).

    Each distinct raw value carries the mean of its human scores, weighted by how many there are.
    """
    from scipy.optimize import isotonic_regression  # lazy: scipy.optimize is slow to import

    x = np.asarray(raw, dtype=float)
    y = np.asarray(human, dtype=float)
    if x.size == 0:
        raise ValueError("no training scores to fit a calibration on")
    xs, inverse = np.unique(x, return_inverse=True)
    weights = np.bincount(inverse).astype(float)
    means = np.bincount(inverse, weights=y) / weights
    fitted = isotonic_regression(means, weights=weights, increasing=True).x
    return MonotoneMap(
        "isotonic", tuple(xs.tolist()), tuple(np.clip(fitted, 0, SCALE_MAX).tolist())
    )


def fit_linear(raw: Sequence[float] | Array, human: Sequence[float] | Array) -> MonotoneMap:
    """Least-squares line with slope ≥ 0 (a negative fit becomes the constant mean)."""
    x = np.asarray(raw, dtype=float)
    y = np.asarray(human, dtype=float)
    if x.size == 0:
        raise ValueError("no training scores to fit a calibration on")
    lo, hi = float(x.min()), float(x.max())
    if hi == lo:
        return MonotoneMap("linear", (lo,), (float(y.mean()),))
    slope, intercept = np.polyfit(x, y, 1)
    if slope < 0:
        slope, intercept = 0.0, float(y.mean())
    return MonotoneMap("linear", (lo, hi), (intercept + slope * lo, intercept + slope * hi))


def fit_map(kind: str, raw: Sequence[float] | Array, human: Sequence[float] | Array) -> MonotoneMap:
    if kind == "isotonic":
        return fit_isotonic(raw, human)
    if kind == "linear":
        return fit_linear(raw, human)
    raise ValueError(f"unknown calibration {kind!r} (known: {', '.join(CALIBRATIONS)})")


def bracket(scores: Sequence[float] | Array) -> npt.NDArray[np.int64]:
    """0 for [0, 2), 1 for [2, 4), 2 for [4, 5]."""
    s = np.asarray(scores, dtype=float)
    return np.digitize(s, [2.0, 4.0]).astype(np.int64)


@dataclass(frozen=True, slots=True)
class Agreement:
    """How close predicted 0–5 scores come to human ones."""

    n: int
    aad: float
    bracket_accuracy: float
    pearson: float | None  # None when either side is constant
    spearman: float | None
    confusion: tuple[tuple[int, int, int], ...]  # rows: human bracket; columns: predicted

    def as_dict(self) -> dict[str, object]:
        """As plain data (reports, the run store)."""
        return {
            "n": self.n,
            "aad": self.aad,
            "bracket_accuracy": self.bracket_accuracy,
            "pearson": self.pearson,
            "spearman": self.spearman,
            "confusion": [list(row) for row in self.confusion],
        }


def agreement(predicted: Sequence[float] | Array, human: Sequence[float] | Array) -> Agreement:
    p = np.asarray(predicted, dtype=float)
    h = np.asarray(human, dtype=float)
    if p.shape != h.shape or p.size == 0:
        raise ValueError("predicted and human scores must be non-empty and of equal length")
    bp, bh = bracket(p), bracket(h)
    confusion = np.zeros((3, 3), dtype=np.int64)
    np.add.at(confusion, (bh, bp), 1)
    return Agreement(
        n=int(p.size),
        aad=float(np.mean(np.abs(p - h))),
        bracket_accuracy=float(np.mean(bp == bh)),
        pearson=_pearson(p, h),
        spearman=_spearman(p, h),
        confusion=tuple(tuple(int(v) for v in row) for row in confusion),  # type: ignore[misc]
    )


def _pearson(a: Array, b: Array) -> float | None:
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def _spearman(a: Array, b: Array) -> float | None:
    from scipy.stats import rankdata  # lazy: keeps CLI start-up free of scipy

    return _pearson(rankdata(a), rankdata(b))


@dataclass(frozen=True, slots=True)
class BenchmarkResult:
    dataset: str
    grader: str
    calibration: MonotoneMap
    train_n: int
    test: Agreement
    baseline: Agreement  # constant training mean
    train_mean: float
    unscored_train: int
    unscored_test: int
    predicted: tuple[float, ...]  # mapped test scores, in test order (scored items only)
    human: tuple[float, ...]
    raw: tuple[float, ...]


def evaluate(
    dataset: str,
    grader: str,
    train_raw: Sequence[float | None],
    train_human: Sequence[float],
    test_raw: Sequence[float | None],
    test_human: Sequence[float],
    calibration: str = "isotonic",
) -> BenchmarkResult:
    """Fit the map on the scored training items, judge it on the scored test items.

    Unscored items (raw None) are left out of both and counted; they are never scored as zero.
    """
    tr = [(r, h) for r, h in zip(train_raw, train_human, strict=True) if r is not None]
    te = [(r, h) for r, h in zip(test_raw, test_human, strict=True) if r is not None]
    if not tr or not te:
        raise ValueError("no scored items in the training or the test split")
    tr_raw, tr_h = np.array([r for r, _ in tr]), np.array([h for _, h in tr])
    te_raw, te_h = np.array([r for r, _ in te]), np.array([h for _, h in te])
    mapping = fit_map(calibration, tr_raw, tr_h)
    predicted = mapping(te_raw)
    mean = float(np.mean(train_human))  # the baseline's one prediction, from every train score
    return BenchmarkResult(
        dataset=dataset,
        grader=grader,
        calibration=mapping,
        train_n=len(tr),
        test=agreement(predicted, te_h),
        baseline=agreement(np.full(te_h.size, mean), te_h),  # on the same scored test items
        train_mean=mean,
        unscored_train=len(train_raw) - len(tr),
        unscored_test=len(test_raw) - len(te),
        predicted=tuple(predicted.tolist()),
        human=tuple(te_h.tolist()),
        raw=tuple(te_raw.tolist()),
    )
