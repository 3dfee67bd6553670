"""Graders fitted on a user's own marks, judged by k-fold cross-validation (issue 21 item 3).

Every marked answer is graded once; the folds reuse those scores. For each fold the models below
are fitted on the other k − 1 folds and predict the held-out one; the held-out predictions of all
folds are pooled and scored against the human marks (0–5): AAD, RMSE, bracket accuracy, Pearson r,
Spearman ρ, each with a seeded bootstrap 95 % interval (items resampled).

Models (rows):

- ``constant mean`` (baseline): the training marks' mean;
- ``lexical overlap`` (baseline): token F1 against the reference, through a monotone (isotonic) map;
- ``G · monotone``: grader G's raw score through an isotonic map (what ``--benchmark msrpar`` fits
  on its train split);
- ``G · ordinal``: grader G's score cut into the three brackets (0–2, 2–4, 4–5) at the two
  thresholds that put the most training marks in their own bracket; the point prediction is the
  monotone map's value held inside that bracket. A curve fitted for squared error pulls toward the
  mean and so rarely predicts the outer brackets; the thresholds are fitted for the brackets;
- ``neighbours``: the similarity-weighted mean mark of the (up to 3) most similar already-marked
  answers *of the same question* in the training folds (only when questions have several answers);
- ``combined``: a ridge regression over every grader's raw score, lexical overlap and the
  neighbours' mark (missing values take the training mean), and ``combined · ordinal``: its output
  cut at fitted thresholds as above.

Pure numpy (+ scipy's isotonic regression and ranks, imported lazily by ``core.benchmark``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from quiztui.core.benchmark import SCALE_MAX, Agreement, MonotoneMap, agreement, fit_isotonic

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NEIGHBOURS_K = 3
RIDGE_LAMBDA = 1.0
BOOTSTRAP = 1000
LEXICAL = "lexical overlap"
NEIGHBOURS = "neighbours"
# Each bracket's range for a point prediction held inside it: [0, 2), [2, 4), [4, 5].
_BRACKET_LO = np.array([0.0, 2.0, 4.0])
_BRACKET_HI = np.array([2.0 - 1e-6, 4.0 - 1e-6, SCALE_MAX])


def fold_ids(n: int, k: int, seed: int = 0, fixed: Sequence[str] | None = None) -> IntArray:
    """Each item's fold: from ``fixed`` labels (sorted, numbered 0..) when given, else a seeded
    permutation dealt round-robin into ``k`` folds (sizes differ by at most one)."""
    if fixed is not None:
        labels = sorted(set(fixed))
        index = {label: i for i, label in enumerate(labels)}
        return np.array([index[f] for f in fixed], dtype=np.int64)
    if not 2 <= k <= n:
        raise ValueError(f"{k} folds need between 2 and {n} (the number of marked answers)")
    folds = np.empty(n, dtype=np.int64)
    folds[np.random.default_rng(seed).permutation(n)] = np.arange(n) % k
    return folds


def bracket_of(scores: Array) -> IntArray:
    return np.digitize(scores, [2.0, 4.0]).astype(np.int64)


def fit_thresholds(z: Array, human: Array) -> tuple[float, float]:
    """The cut points t1 ≤ t2 on ``z`` (below t1: bracket 0; from t2: bracket 2) that put the
    most training items in their human bracket; ties keep the first (lowest) cuts."""
    values, inverse = np.unique(z, return_inverse=True)
    m = values.size
    counts = np.zeros((m, 3))
    np.add.at(counts, (inverse, bracket_of(human)), 1.0)
    prefix = np.vstack([np.zeros(3), np.cumsum(counts, axis=0)])  # prefix[i]: values[:i]
    gain = prefix[:, 1] - prefix[:, 2]  # bracket 1 up to j, minus bracket 2 up to j
    best_j = np.empty(m + 1, dtype=np.int64)  # for each i, the j ≥ i maximising gain[j]
    best_j[m] = m
    for i in range(m - 1, -1, -1):
        best_j[i] = i if gain[i] >= gain[best_j[i + 1]] else best_j[i + 1]
    i_all = np.arange(m + 1)
    acc = prefix[i_all, 0] - prefix[i_all, 1] + gain[best_j] + prefix[m, 2]
    i = int(np.argmax(acc))
    j = int(best_j[i])

    def cut(pos: int) -> float:
        if pos == 0:
            return -np.inf
        if pos == m:
            return np.inf
        return float((values[pos - 1] + values[pos]) / 2)

    return cut(i), cut(j)


def hold_in_bracket(value: Array, z: Array, cuts: tuple[float, float]) -> Array:
    b = np.where(z < cuts[0], 0, np.where(z < cuts[1], 1, 2))
    return np.clip(value, _BRACKET_LO[b], _BRACKET_HI[b])


# --- neighbours ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Group:
    """The answers of one question (item indices) and their pairwise similarity."""

    members: IntArray
    similarity: Array  # (len(members), len(members))


def neighbour_marks(
    groups: Sequence[Group], human: Array, known: npt.NDArray[np.bool_], n: int
) -> Array:
    """Each item's similarity-weighted mean mark over its ≤ 3 most similar *known* answers of the
    same question (itself excluded); NaN when it has none."""
    out = np.full(n, np.nan)
    for g in groups:
        sims = g.similarity.astype(float).copy()
        np.fill_diagonal(sims, -np.inf)
        sims[:, ~known[g.members]] = -np.inf
        order = np.argsort(-sims, axis=1)[:, :NEIGHBOURS_K]
        top = np.take_along_axis(sims, order, axis=1)
        usable = np.isfinite(top)
        weights = np.where(usable, np.clip(top, 0.0, None) + 1e-3, 0.0)
        marks = human[g.members][order]
        total = weights.sum(axis=1)
        has = total > 0
        out[g.members[has]] = (weights[has] * marks[has]).sum(axis=1) / total[has]
    return out


# --- models -------------------------------------------------------------------------------------


@dataclass
class Fitted:
    """One fitted model; ``predict`` maps feature columns to 0–5 (NaN: no prediction)."""

    name: str
    kind: str  # mean | monotone | ordinal | neighbours | combined | combined-ordinal
    feature: str | None = None
    mean: float = 0.0
    iso: MonotoneMap | None = None
    cuts: tuple[float, float] | None = None
    features: tuple[str, ...] = ()
    centre: tuple[float, ...] = ()
    spread: tuple[float, ...] = ()
    impute: tuple[float, ...] = ()
    weights: tuple[float, ...] = ()
    intercept: float = 0.0

    def predict(self, cols: Mapping[str, Array], n: int) -> Array:
        if self.kind == "mean":
            return np.full(n, self.mean)
        if self.kind in ("monotone", "ordinal"):
            assert self.iso is not None and self.feature is not None
            x = cols[self.feature]
            out = np.full(n, np.nan)
            ok = ~np.isnan(x)
            out[ok] = self.iso(x[ok])
            if self.kind == "ordinal":
                assert self.cuts is not None
                out[ok] = hold_in_bracket(out[ok], x[ok], self.cuts)
            return out
        if self.kind == "neighbours":
            x = cols[NEIGHBOURS]
            return np.where(np.isnan(x), self.mean, x)
        z = self._linear(cols, n)
        if self.kind == "combined-ordinal":
            assert self.cuts is not None
            return hold_in_bracket(z, z, self.cuts)
        return z

    def _linear(self, cols: Mapping[str, Array], n: int) -> Array:
        x = np.column_stack([cols[f] for f in self.features]) if self.features else np.zeros((n, 0))
        x = np.where(np.isnan(x), np.asarray(self.impute), x)
        x = (x - np.asarray(self.centre)) / np.asarray(self.spread)
        z = x @ np.asarray(self.weights) + self.intercept
        return np.asarray(np.clip(z, 0.0, SCALE_MAX), dtype=float)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["iso"] = None if self.iso is None else {"xs": self.iso.xs, "ys": self.iso.ys}
        d["cuts"] = None if self.cuts is None else [_finite(c) for c in self.cuts]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Fitted:
        iso = d.get("iso")
        cuts = d.get("cuts")
        return cls(
            name=str(d["name"]),
            kind=str(d["kind"]),
            feature=d.get("feature"),
            mean=float(d.get("mean", 0.0)),
            iso=None
            if iso is None
            else MonotoneMap(
                "isotonic", tuple(map(float, iso["xs"])), tuple(map(float, iso["ys"]))
            ),
            cuts=None if cuts is None else (_unfinite(cuts[0], -1), _unfinite(cuts[1], 1)),
            features=tuple(d.get("features", ())),
            centre=tuple(map(float, d.get("centre", ()))),
            spread=tuple(map(float, d.get("spread", ()))),
            impute=tuple(map(float, d.get("impute", ()))),
            weights=tuple(map(float, d.get("weights", ()))),
            intercept=float(d.get("intercept", 0.0)),
        )


def _finite(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def _unfinite(x: float | None, sign: int) -> float:
    return sign * np.inf if x is None else float(x)


def fit_models(
    cols: Mapping[str, Array], human: Array, train: npt.NDArray[np.bool_], graders: Sequence[str]
) -> list[Fitted]:
    """Every model of the table, fitted on the ``train`` items. ``cols`` holds each grader's raw
    score, ``LEXICAL`` and (when questions have several answers) ``NEIGHBOURS``, NaN = missing."""
    y = human[train]
    mean = float(y.mean())
    models = [Fitted("constant mean", "mean", mean=mean)]
    for name in (LEXICAL, *graders):
        x = cols[name][train]
        ok = ~np.isnan(x)
        if not ok.any():
            continue
        iso = fit_isotonic(x[ok], y[ok])
        models.append(Fitted(f"{name} · monotone", "monotone", feature=name, iso=iso))
        if name != LEXICAL:
            cuts = fit_thresholds(x[ok], y[ok])
            models.append(Fitted(f"{name} · ordinal", "ordinal", feature=name, iso=iso, cuts=cuts))
    features = [*graders, LEXICAL]
    if NEIGHBOURS in cols:
        models.append(Fitted(NEIGHBOURS, "neighbours", mean=mean))
        features.append(NEIGHBOURS)
    combined = _ridge(cols, y, train, features)
    models.append(combined)
    z = combined.predict({k: v[train] for k, v in cols.items()}, int(train.sum()))
    ordinal = replace(
        combined, name="combined · ordinal", kind="combined-ordinal", cuts=fit_thresholds(z, y)
    )
    models.append(ordinal)
    return models


def _ridge(
    cols: Mapping[str, Array], y: Array, train: npt.NDArray[np.bool_], features: Sequence[str]
) -> Fitted:
    x = np.column_stack([cols[f][train] for f in features])
    impute = np.array(
        [float(np.nanmean(c)) if (~np.isnan(c)).any() else 0.0 for c in x.T], dtype=float
    )
    x = np.where(np.isnan(x), impute, x)
    centre = x.mean(axis=0)
    spread = x.std(axis=0)
    spread[spread == 0] = 1.0
    xs = (x - centre) / spread
    intercept = float(y.mean())
    w = np.linalg.solve(xs.T @ xs + RIDGE_LAMBDA * np.eye(xs.shape[1]), xs.T @ (y - intercept))
    return Fitted(
        "combined",
        "combined",
        features=tuple(features),
        centre=tuple(centre.tolist()),
        spread=tuple(spread.tolist()),
        impute=tuple(impute.tolist()),
        weights=tuple(w.tolist()),
        intercept=intercept,
    )


# --- cross-validation ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FoldRow:
    """One model's pooled held-out figures; ``intervals``: bootstrap 95 % (lo, hi) per metric."""

    name: str
    baseline: bool
    agreement: Agreement
    rmse: float
    intervals: dict[str, tuple[float, float] | None]
    index: tuple[int, ...]  # the items it predicted (an unscored item has no prediction)
    predicted: tuple[float, ...]
    human: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class KFoldResult:
    dataset: str
    graders: tuple[str, ...]
    k: int
    seed: int
    n: int
    folds: tuple[int, ...]
    rows: tuple[FoldRow, ...]
    unscored: dict[str, int]
    neighbour_groups: int  # questions with two or more marked answers
    final: tuple[Fitted, ...] = field(default=())  # every model refitted on all the marks

    def best(self) -> FoldRow:
        """The non-baseline row with the best held-out bracket accuracy (then the lower AAD)."""
        rows = [r for r in self.rows if not r.baseline] or list(self.rows)
        return max(rows, key=lambda r: (r.agreement.bracket_accuracy, -r.agreement.aad))


def cross_validate(
    dataset: str,
    cols: Mapping[str, Array],
    human: Sequence[float] | Array,
    graders: Sequence[str],
    folds: IntArray,
    groups: Sequence[Group] = (),
    *,
    seed: int = 0,
    bootstrap: int = BOOTSTRAP,
) -> KFoldResult:
    """Fit on k − 1 folds, predict the held-out fold, for every fold; pool and score."""
    h = np.asarray(human, dtype=float)
    n = h.size
    k = int(folds.max()) + 1
    if k < 2:
        raise ValueError("cross-validation needs at least two folds")
    use_neighbours = any(g.members.size > 1 for g in groups)
    pooled: dict[str, Array] = {}
    order: list[str] = []
    for f in range(k):
        train = folds != f
        test = ~train
        fold_cols = dict(cols)
        if use_neighbours:
            # Training rows see their other training neighbours; held-out rows see training ones.
            fold_cols[NEIGHBOURS] = neighbour_marks(groups, h, train, n)
        for model in fit_models(fold_cols, h, train, graders):
            if model.name not in pooled:
                pooled[model.name] = np.full(n, np.nan)
                order.append(model.name)
            test_cols = {name: v[test] for name, v in fold_cols.items()}
            pooled[model.name][test] = model.predict(test_cols, int(test.sum()))
    rng = np.random.default_rng(seed)
    rows = []
    for name in order:
        p = pooled[name]
        ok = ~np.isnan(p)
        idx = np.flatnonzero(ok)
        if idx.size < 2:
            continue
        agree = agreement(p[ok], h[ok])
        intervals = bootstrap_intervals(p[ok], h[ok], rng, bootstrap)
        if name == "constant mean":
            # A constant has no correlation (its folds differ only by their training means).
            agree = replace(agree, pearson=None, spearman=None)
            intervals |= {"pearson": None, "spearman": None}
        rows.append(
            FoldRow(
                name=name,
                baseline=name in ("constant mean", f"{LEXICAL} · monotone"),
                agreement=agree,
                rmse=float(np.sqrt(np.mean((p[ok] - h[ok]) ** 2))),
                intervals=intervals,
                index=tuple(idx.tolist()),
                predicted=tuple(p[ok].tolist()),
                human=tuple(h[ok].tolist()),
            )
        )
    all_cols = dict(cols)
    if use_neighbours:
        everyone = np.ones(n, dtype=bool)
        all_cols[NEIGHBOURS] = neighbour_marks(groups, h, everyone, n)
    final = tuple(fit_models(all_cols, h, np.ones(n, dtype=bool), graders))
    return KFoldResult(
        dataset=dataset,
        graders=tuple(graders),
        k=k,
        seed=seed,
        n=n,
        folds=tuple(folds.tolist()),
        rows=tuple(rows),
        unscored={g: int(np.isnan(cols[g]).sum()) for g in graders},
        neighbour_groups=sum(1 for g in groups if g.members.size > 1),
        final=final,
    )


METRICS = ("aad", "rmse", "bracket_accuracy", "pearson", "spearman")


def bootstrap_intervals(
    p: Array, h: Array, rng: np.random.Generator, draws: int = BOOTSTRAP
) -> dict[str, tuple[float, float] | None]:
    """Percentile 95 % intervals of each metric over ``draws`` resamples of the items."""
    from scipy.stats import rankdata  # lazy, as in core.benchmark

    parts: dict[str, list[Array]] = {name: [] for name in METRICS}
    # In blocks of draws, so memory stays at a block's resamples whatever the number of items.
    block = max(1, min(draws, 200_000 // max(1, p.size)))
    for start in range(0, draws, block):
        idx = rng.integers(0, p.size, size=(min(block, draws - start), p.size))
        ps, hs = p[idx], h[idx]
        parts["aad"].append(np.mean(np.abs(ps - hs), axis=1))
        parts["rmse"].append(np.sqrt(np.mean((ps - hs) ** 2, axis=1)))
        parts["bracket_accuracy"].append(np.mean(bracket_of(ps) == bracket_of(hs), axis=1))
        parts["pearson"].append(_rowwise_pearson(ps, hs))
        parts["spearman"].append(_rowwise_pearson(rankdata(ps, axis=1), rankdata(hs, axis=1)))
    out: dict[str, tuple[float, float] | None] = {}
    for name in METRICS:
        v = np.concatenate(parts[name])
        v = v[np.isfinite(v)]
        out[name] = (
            None
            if v.size < draws // 2
            else (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5)))
        )
    return out


def _rowwise_pearson(a: Array, b: Array) -> Array:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    denom = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (a * b).sum(axis=1) / np.where(denom > 0, denom, 1.0), np.nan)
