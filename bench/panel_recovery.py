"""Does the panel fit recover each judge's TPR/TNR? (issue 21, T2)

Simulated panels: 3 judges with different rates answer every option of 300 four-option
questions (one option true; the key wrong in 10 % of questions, which the fit does not know).
For each of 50 seeds, the structured fit (``core.panel_fit.structured_fit``: the latent variable
is which option is correct) and the per-assertion Dawid–Skene fit
(``core.agreement.dawid_skene_binary``) are run on the same verdicts; a seed counts as recovered
when all six rates are within ±0.03 of the judges' true rates. Also printed: the oracle count —
the rates measured with the truth known, i.e. what sampling noise alone allows.

    .venv/bin/python bench/panel_recovery.py
    .venv/bin/python bench/panel_recovery.py --seeds 20 --questions 600
"""

from __future__ import annotations

import argparse

import numpy as np

from quiztui.core.agreement import dawid_skene_binary
from quiztui.core.panel_fit import structured_fit

JUDGES = ((0.92, 0.90), (0.85, 0.94), (0.95, 0.85))  # (TPR, TNR)
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
    want = np.array(JUDGES)
    return bool(
        np.all(np.abs(tpr - want[:, 0]) <= band) and np.all(np.abs(tnr - want[:, 1]) <= band)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--band", type=float, default=0.03)
    args = parser.parse_args()
    found = {"structured": 0, "Dawid-Skene": 0, "oracle": 0}
    unusable = 0
    iterations = []
    worst = 0.0
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
    rates = ", ".join(f"({a:.2f}, {b:.2f})" for a, b in JUDGES)
    print(f"{args.seeds} seeds x {args.questions} questions x {OPTIONS} options; judges {rates}")
    print(f"{'fit':<12} {'seeds with all 6 rates within ±' + format(args.band, 'g'):>34}")
    for name, count in found.items():
        print(f"{name:<12} {count:>28} / {args.seeds}")
    print(
        f"structured: not usable in {unusable} seeds; iterations {min(iterations)}–"
        f"{max(iterations)}; largest error {worst:.3f}"
    )


if __name__ == "__main__":
    main()
