"""Agreement statistics against textbook examples, Dawid–Skene without gold labels (B2), AUROC."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from quiztui.core.agreement import (
    auroc,
    cohen_kappa,
    dawid_skene_binary,
    fleiss_kappa,
    fleiss_kappa_labels,
)
from quiztui.simulate.vet import judge_verdict

# --- Cohen's κ ----------------------------------------------------------------------------------


def _two_raters(yes_yes: int, yes_no: int, no_yes: int, no_no: int) -> tuple[list[str], list[str]]:
    a = ["yes"] * (yes_yes + yes_no) + ["no"] * (no_yes + no_no)
    b = ["yes"] * yes_yes + ["no"] * yes_no + ["yes"] * no_yes + ["no"] * no_no
    return a, b


def test_cohen_kappa_textbook_2x2() -> None:
    # Wikipedia "Cohen's kappa", 50 grant proposals: p_o = 35/50, p_e = 0.5·0.6 + 0.5·0.4 = 0.5.
    a, b = _two_raters(20, 5, 10, 15)
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    # Two more from the same page: 45/15/25/15 → 0.1304, 25/35/5/35 → 0.2593 (exact fractions).
    assert cohen_kappa(*_two_raters(45, 15, 25, 15)) == pytest.approx(
        float((Fraction(60, 100) - Fraction(54, 100)) / (1 - Fraction(54, 100))), abs=1e-12
    )
    assert cohen_kappa(*_two_raters(25, 35, 5, 35)) == pytest.approx(
        float((Fraction(60, 100) - Fraction(46, 100)) / (1 - Fraction(46, 100))), abs=1e-12
    )


def test_cohen_kappa_three_categories_by_hand() -> None:
    a = ["x", "x", "y", "y", "z", "z", "x", "y"]
    b = ["x", "y", "y", "y", "z", "x", "x", "z"]
    # p_o = 5/8; marginals a = (3, 3, 2)/8, b = (3, 3, 2)/8 → p_e = (9 + 9 + 4)/64 = 22/64.
    expected = (Fraction(5, 8) - Fraction(22, 64)) / (1 - Fraction(22, 64))
    assert cohen_kappa(a, b) == pytest.approx(float(expected), abs=1e-12)


def test_cohen_kappa_skips_missing_and_is_nan_when_undefined() -> None:
    a, b = _two_raters(20, 5, 10, 15)
    assert cohen_kappa(a + [None, "yes"], b + ["no", None]) == pytest.approx(0.4, abs=1e-12)
    assert math.isnan(cohen_kappa([None, "yes"], ["no", None]))
    assert math.isnan(cohen_kappa([True, True], [True, True]))  # p_e = 1
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([True], [True, False])


# --- Fleiss' κ ----------------------------------------------------------------------------------

# Fleiss (1971) as on Wikipedia: 10 items, 14 raters each, 5 categories; κ ≈ 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
# By hand: Σ_i (Σ_j n_ij² − 14) = 182+46+56+80+60+84+44+32+52+52 = 688, so P̄ = 688 / (10·14·13);
# column totals 20, 28, 39, 21, 32 of 140, so P_e = (400+784+1521+441+1024) / 140² = 4170/19600.
FLEISS_P_BAR = Fraction(688, 1820)
FLEISS_P_E = Fraction(4170, 19600)
FLEISS_KAPPA = float((FLEISS_P_BAR - FLEISS_P_E) / (1 - FLEISS_P_E))


def _expand(table: list[list[int]]) -> list[list[int | None]]:
    return [[j for j, count in enumerate(row) for _ in range(count)] for row in table]


def test_fleiss_kappa_textbook_example() -> None:
    assert round(FLEISS_KAPPA, 3) == 0.210
    assert fleiss_kappa(FLEISS_TABLE) == pytest.approx(FLEISS_KAPPA, abs=1e-12)
    assert fleiss_kappa_labels(_expand(FLEISS_TABLE)) == pytest.approx(FLEISS_KAPPA, abs=1e-12)


def test_fleiss_labels_skip_missing_and_thin_items() -> None:
    labels = _expand(FLEISS_TABLE)
    for row in labels:
        row.insert(3, None)
    labels.append([None, 4, None] + [None] * 12)  # one rating only: left out
    labels.append([None] * 15)
    assert fleiss_kappa_labels(labels) == pytest.approx(FLEISS_KAPPA, abs=1e-12)
    assert math.isnan(fleiss_kappa_labels([[1, None], [None, None]]))


def test_fleiss_with_two_raters_is_scotts_pi() -> None:
    a, b = _two_raters(20, 5, 10, 15)
    # Scott's π: pooled share of "yes" 55/100, p_e = 0.55² + 0.45² = 0.505, π = 0.195/0.495.
    labels: list[list[str | None]] = [[x, y] for x, y in zip(a, b, strict=True)]
    assert fleiss_kappa_labels(labels) == pytest.approx(13 / 33, abs=1e-12)


def test_fleiss_labels_with_unequal_rater_counts() -> None:
    labels: list[list[str | None]] = [
        ["a", "a", "a"],
        ["a", "b", None],
        ["b", "b", "b"],
        ["a", "b", "b"],
    ]
    # Per item: 6/6, 0/2, 6/6, 2/6 → P̄ = (1 + 0 + 1 + 1/3)/4 = 7/12; pooled shares: a 5/11, b 6/11.
    p_bar = Fraction(7, 12)
    p_e = Fraction(25 + 36, 121)
    assert fleiss_kappa_labels(labels) == pytest.approx(float((p_bar - p_e) / (1 - p_e)), abs=1e-12)


def test_fleiss_table_validation_and_undefined() -> None:
    with pytest.raises(ValueError):
        fleiss_kappa([[2, 0], [1, 0]])  # unequal raters per item
    with pytest.raises(ValueError):
        fleiss_kappa([[1, 0], [0, 1]])  # one rater
    with pytest.raises(ValueError):
        fleiss_kappa([[-1, 3], [1, 1]])
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))  # one category throughout
    assert math.isnan(fleiss_kappa(np.zeros((0, 3))))


# --- B2: Dawid–Skene ----------------------------------------------------------------------------

JUDGES = [(0.95, 0.90), (0.80, 0.85), (0.70, 0.95)]  # (TPR, TNR)


def _three_judges() -> tuple[np.ndarray, np.ndarray]:
    """1,000 questions × 4 options (25 % true), three judges with seeds 0, 1, 2."""
    items = [(f"q{i} option {j}", j == i % 4) for i in range(1000) for j in range(4)]
    truth = np.array([t for _, t in items])
    labels = np.array(
        [
            [float(judge_verdict(text, t, tpr, tnr, seed=s)) for s, (tpr, tnr) in enumerate(JUDGES)]
            for text, t in items
        ]
    )
    return labels, truth


def test_dawid_skene_recovers_judge_accuracy_without_gold() -> None:
    labels, truth = _three_judges()
    result = dawid_skene_binary(labels)
    assert result.converged
    print(
        f"\nB2: TPR {np.round(result.tpr, 4)}, TNR {np.round(result.tnr, 4)}, "
        f"prevalence {result.prevalence:.4f}, {result.iterations} iterations"
    )
    for j, (tpr, tnr) in enumerate(JUDGES):
        assert result.tpr[j] == pytest.approx(tpr, abs=0.03), j
        assert result.tnr[j] == pytest.approx(tnr, abs=0.03), j
    assert result.prevalence == pytest.approx(0.25, abs=0.02)
    # The posterior labels beat the best single judge.
    panel_accuracy = float(((result.posterior > 0.5) == truth).mean())
    judge_accuracy = [float(((labels[:, j] == 1.0) == truth).mean()) for j in range(3)]
    print(f"B2 accuracy: posterior {panel_accuracy:.4f}, judges {np.round(judge_accuracy, 4)}")
    assert panel_accuracy > max(judge_accuracy)


def test_dawid_skene_with_missing_verdicts() -> None:
    labels, truth = _three_judges()
    rng = np.random.default_rng(5)
    labels[rng.random(labels.shape) < 0.2] = np.nan
    labels[:10] = np.nan  # ten items nobody judged
    result = dawid_skene_binary(labels)
    assert result.converged
    for j, (tpr, tnr) in enumerate(JUDGES):
        assert result.tpr[j] == pytest.approx(tpr, abs=0.04), j
        assert result.tnr[j] == pytest.approx(tnr, abs=0.04), j
    assert np.allclose(result.posterior[:10], result.prevalence)
    assert ((result.posterior[10:] > 0.5) == truth[10:]).mean() > 0.9


def test_dawid_skene_class_labels_follow_the_better_than_chance_assumption() -> None:
    labels, _ = _three_judges()
    flipped = dawid_skene_binary(1.0 - labels)
    original = dawid_skene_binary(labels)
    # Every verdict inverted: the judges still look better than chance, with the classes swapped.
    assert np.allclose(flipped.tpr, original.tnr, atol=1e-6)
    assert np.allclose(flipped.tnr, original.tpr, atol=1e-6)
    assert flipped.prevalence == pytest.approx(1 - original.prevalence, abs=1e-6)
    assert flipped.log_likelihood == pytest.approx(original.log_likelihood, rel=1e-9)
    assert float(np.mean(flipped.tpr + flipped.tnr)) >= 1.0


def test_dawid_skene_undoes_label_switching() -> None:
    labels, truth = _three_judges()
    original = dawid_skene_binary(labels)
    # Started from the wrong labelling, EM settles where every judge is worse than chance; the
    # result is swapped back to the labelling where they beat it.
    switched = dawid_skene_binary(labels, initial=1.0 - truth)
    assert switched.converged
    assert np.allclose(switched.tpr, original.tpr, atol=1e-4)
    assert np.allclose(switched.tnr, original.tnr, atol=1e-4)
    assert switched.prevalence == pytest.approx(original.prevalence, abs=1e-4)
    assert np.allclose(switched.posterior, original.posterior, atol=1e-3)
    with pytest.raises(ValueError):
        dawid_skene_binary(labels, initial=np.full(3, 0.5))


def test_dawid_skene_keeps_rates_off_zero_and_one() -> None:
    # Three perfect judges: smoothing keeps the rates finite and below 1.
    truth = np.array([1.0, 0.0, 0.0, 1.0, 0.0] * 20)
    result = dawid_skene_binary(np.column_stack([truth, truth, truth]))
    assert np.all((result.tpr < 1) & (result.tpr > 0.99))
    assert np.all((result.tnr < 1) & (result.tnr > 0.99))
    assert np.isfinite(result.log_likelihood)
    assert np.array_equal(result.posterior > 0.5, truth == 1.0)


def test_dawid_skene_rejects_bad_labels() -> None:
    with pytest.raises(ValueError):
        dawid_skene_binary(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError):
        dawid_skene_binary(np.array([1.0, 0.0]))
    with pytest.raises(ValueError):
        dawid_skene_binary(np.full((3, 2), np.nan))


# --- AUROC --------------------------------------------------------------------------------------


def test_auroc_perfect_reversed_and_tied() -> None:
    assert auroc([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == 1.0
    assert auroc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0
    assert auroc([0.5] * 6, [True, False] * 3) == 0.5
    # Positives 1, 2 against negatives 1, 0: pairs 0.5 + 1 + 1 + 1 = 3.5 of 4.
    assert auroc([1, 2, 1, 0], [1, 1, 0, 0]) == pytest.approx(0.875)


def test_auroc_undefined_with_one_class() -> None:
    assert math.isnan(auroc([0.1, 0.2], [True, True]))
    assert math.isnan(auroc([0.1, 0.2], [False, False]))
    with pytest.raises(ValueError):
        auroc([0.1, 0.2], [True])
    with pytest.raises(ValueError):
        auroc([0.1, math.nan], [True, False])


def test_auroc_matches_brute_force_pairs() -> None:
    rng = np.random.default_rng(9)
    for size in (2, 17, 300):
        scores = rng.integers(0, 8, size=size).astype(float)  # plenty of ties
        labels = rng.random(size) < 0.3
        labels[0], labels[1] = True, False
        pos, neg = scores[labels], scores[~labels]
        diff = pos[:, None] - neg[None, :]
        expected = ((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size
        assert auroc(scores, labels) == pytest.approx(expected, abs=1e-12)
