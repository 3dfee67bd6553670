"""Does the panel fit recover each judge's TPR/TNR? (issue 21, T2)

Simulated panels: 3 judges with different rates answer every option of 300 four-option
questions (one option true; the key wrong in 10 % of questions, which the fit does not know).
For each of 50 seeds, the structured fit (``core.panel_fit.structured_fit``: the latent variable
is which option is correct) and the per-assertion Dawid–Skene fit
(``core.agreement.dawid_skene_binary``) are run on the same verdicts; a seed counts as recovered
when all six rates are within ±0.03 of the judges' true rates. Also printed: the oracle count —
the rates measured with the truth known, i.e. what sampling noise alone allows — and that
ceiling computed exactly: with 300 questions each judge's TPR rests on 300 true options (SE
≈ sqrt(p(1 − p)/300) = 0.021 at 0.85), so even the truth-known rates land within ±0.03 in only
about 82 % of seeds (41 of 50 expected).

So the bench also separates the fit's own error from the world's sampling noise: the structured
fit against the *realized* rates — the share of its true options each judge actually called
true (and of its false options false) in that seed, what the truth-known count measures — and
the coverage of the fit's 95 % intervals (``StructuredFit.tpr_ci``/``tnr_ci``: Wilson on the
effective counts from the observed information) over the judges' generating rates: the interval,
not the point, is what carries the sampling noise to the user.

    .venv/bin/python bench/panel_recovery.py
    .venv/bin/python bench/panel_recovery.py --seeds 20 --questions 600
    .venv/bin/python bench/panel_recovery.py --judges strong   # or 0.95/0.92,0.93/0.95,...
"""

from __future__ import annotations

import argparse

import numpy as np

from quiztui.core.agreement import dawid_skene_binary
from quiztui.core.panel_fit import structured_fit

# (TPR, TNR) per judge. "mixed" (the default) has one judge at TPR 0.85, whose 300 true options
# alone put ±0.03 out of reach in 12 % of seeds; "strong" has every TPR ≥ 0.93.
PANELS = {
    "mixed": ((0.92, 0.90), (0.85, 0.94), (0.95, 0.85)),
    "strong": ((0.95, 0.92), (0.93, 0.95), (0.96, 0.90)),
}
JUDGES = PANELS["mixed"]
OPTIONS = 4


def panel(questions: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(verdicts questions × options × judges, keys, truth questions × options)."""
    rng = np.random.default_rng(seed)
    true = rng.integers(0, OPTIONS, questions)
    truth = np.zeros((questions, OPTIONS), dtype=bool)
    truth[np.arange(questions), true] = True
    wrong = rng.random(questions) < 0.10
    keys = np.where(wrong, (true + rng.integers(1, OPTIONS, questions)) % OPTIONS, true)
    verdicts = np.empty((questions, OPTIONS, len(JUDGES)))
    for j, (tpr, tnr) in enumerate(JUDGES):
        u = rng.random((questions, OPTIONS))
        verdicts[:, :, j] = np.where(truth, u < tpr, u >= tnr)
    return verdicts, keys, truth


def within(tpr: np.ndarray, tnr: np.ndarray, band: float) -> bool:
    """All six rates within ±band. The edge counts as inside: 246/300 is exactly 0.82 = 0.85 −
    0.03, which floating point puts 3e-17 outside (that alone cost the oracle ~5 % of seeds)."""
    want = np.array(JUDGES)
    edge = band + 1e-9
    return bool(
        np.all(np.abs(tpr - want[:, 0]) <= edge) and np.all(np.abs(tnr - want[:, 1]) <= edge)
    )


def ceiling(questions: int, band: float) -> tuple[float, list[str]]:
    """P(all six rates within ±band) for an estimator that knows which option is true: each
    judge's TPR is a share of ``questions`` positives and its TNR of ``questions × (OPTIONS − 1)``
    negatives (one true option per question), exact binomial; judges and rates independent."""
    from scipy.stats import binom

    total = 1.0
    lines = []
    for j, (tpr, tnr) in enumerate(JUDGES, start=1):
        for name, rate, n in (("TPR", tpr, questions), ("TNR", tnr, questions * (OPTIONS - 1))):
            lo, hi = np.ceil(n * (rate - band) - 1e-9), np.floor(n * (rate + band) + 1e-9)
            p = float(binom.cdf(hi, n, rate) - binom.cdf(lo - 1, n, rate))
            total *= p
            se = (rate * (1 - rate) / n) ** 0.5
            lines.append(
                f"  judge {j} {name} {rate:.2f}: n = {n:>4}, SE {se:.4f},"
                f" P(within ±{band:g}) {p:.3f}"
            )
    return total, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--band", type=float, default=0.03)
    parser.add_argument(
        "--judges",
        default="mixed",
        help=f"{' or '.join(PANELS)}, or TPR/TNR pairs: 0.95/0.92,0.93/0.95,0.96/0.90",
    )
    args = parser.parse_args()
    global JUDGES
    JUDGES = PANELS.get(args.judges) or tuple(
        (float(a), float(b)) for a, b in (pair.split("/") for pair in args.judges.split(","))
    )
    found = {"structured": 0, "Dawid-Skene": 0, "oracle": 0}
    unusable = 0
    iterations = []
    worst = 0.0
    realized = 0  # seeds with all six structured rates within ±band of the realized rates
    worst_realized = 0.0
    covered = rates_total = 0  # generating rates inside the fit's 95 % interval
    for seed in range(args.seeds):
        verdicts, keys, truth = panel(args.questions, seed)
        fit = structured_fit(verdicts, keys.tolist(), [OPTIONS] * args.questions)
        unusable += not fit.usable
        iterations.append(fit.iterations)
        found["structured"] += within(fit.tpr, fit.tnr, args.band)
        want = np.array(JUDGES)
        worst = max(worst, float(np.max(np.abs(np.stack([fit.tpr, fit.tnr], 1) - want))))
        ds = dawid_skene_binary(verdicts.reshape(-1, len(JUDGES)))
        found["Dawid-Skene"] += within(np.asarray(ds.tpr), np.asarray(ds.tnr), args.band)
        t = truth[:, :, None]
        oracle_tpr = (verdicts * t).sum((0, 1)) / t.sum()
        oracle_tnr = ((1 - verdicts) * ~t).sum((0, 1)) / (~t).sum()
        found["oracle"] += within(oracle_tpr, oracle_tnr, args.band)
        off = np.abs(np.concatenate([fit.tpr - oracle_tpr, fit.tnr - oracle_tnr]))
        realized += bool(np.all(off <= args.band + 1e-9))
        worst_realized = max(worst_realized, float(off.max()))
        for ci, column in ((fit.tpr_ci, 0), (fit.tnr_ci, 1)):
            covered += int(np.sum((ci[:, 0] <= want[:, column]) & (want[:, column] <= ci[:, 1])))
            rates_total += len(want)
    rates = ", ".join(f"({a:.2f}, {b:.2f})" for a, b in JUDGES)
    print(f"{args.seeds} seeds x {args.questions} questions x {OPTIONS} options; judges {rates}")
    print(f"{'fit':<12} {'seeds with all 6 rates within ±' + format(args.band, 'g'):>34}")
    for name, count in found.items():
        print(f"{name:<12} {count:>28} / {args.seeds}")
    print(
        f"structured: not usable in {unusable} seeds; iterations {min(iterations)}–"
        f"{max(iterations)}; largest error {worst:.3f}"
    )
    print(
        f"structured against the realized rates (the truth-known measurement of each seed):"
        f" {realized} / {args.seeds} seeds with all 6 within ±{args.band:g}; largest error"
        f" {worst_realized:.3f}"
    )
    print(
        "structured 95 % intervals (Wilson on the observed-information counts) contain the"
        " generating rate:"
        f" {covered} of {rates_total} ({covered / rates_total:.1%})"
    )
    from scipy.stats import binom

    p, lines = ceiling(args.questions, args.band)
    goal = int(np.ceil(0.9 * args.seeds))
    print(
        f"ceiling (the truth known, exact binomial): P(all 6 within ±{args.band:g}) = {p:.3f}:"
        f" {p * args.seeds:.1f} of {args.seeds} seeds expected;"
        f" P(>= {goal} of {args.seeds}) = {binom.sf(goal - 1, args.seeds, p):.3f}"
    )
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
