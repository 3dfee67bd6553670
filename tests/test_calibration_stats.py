"""Assessing the assessor: rates and intervals on simulated gold runs (B1), the confidence interval
from calibration counts, and how well the posterior finds wrong keys (B3)."""

from __future__ import annotations

import itertools
import math
import random
import subprocess
import sys

import numpy as np
import pytest

from quiztui.core.agreement import auroc
from quiztui.core.bayes import (
    JudgeAccuracy,
    confidence_interval,
    panel_posterior,
    question_posterior,
)
from quiztui.core.calibration import Confusion, beta_interval, wilson_interval
from quiztui.core.kscore import Badge, badge, k_score
from quiztui.core.quiz import Question
from quiztui.pipeline.scoring import score_question
from quiztui.simulate.vet import judge_verdict

TPR, TNR = 0.85, 0.92

# 1,000 questions × 4 options: 1,000 true assertions and 3,000 false ones.
GOLD = [(f"q{i} option {j}", j == i % 4) for i in range(1000) for j in range(4)]


def _gold_run(seed: int, tpr: float = TPR, tnr: float = TNR) -> Confusion:
    return Confusion.from_pairs(
        (truth, judge_verdict(text, truth, tpr, tnr, seed=seed)) for text, truth in GOLD
    )


# --- B1: a simulated gold run -------------------------------------------------------------------


def test_gold_run_estimates_tpr_and_tnr() -> None:
    c = _gold_run(seed=0)
    assert (c.positives, c.negatives, c.unjudged) == (1000, 3000, 0)
    print(f"\nB1 seed 0: TPR {c.tpr:.4f}, TNR {c.tnr:.4f}")
    assert c.tpr == pytest.approx(TPR, abs=0.02)
    assert c.tnr == pytest.approx(TNR, abs=0.02)
    for method in ("wilson", "beta"):
        lo, hi = c.tpr_interval(method)
        assert lo <= TPR <= hi, (method, lo, hi)
        lo, hi = c.tnr_interval(method)
        assert lo <= TNR <= hi, (method, lo, hi)


def test_interval_coverage_over_repeated_gold_runs() -> None:
    """200 gold runs (seeds 0..199): each 95 % interval covers the true rate 92–98 % of the time."""
    covered = {(m, r): 0 for m in ("wilson", "beta") for r in ("tpr", "tnr")}
    repeats = 200
    for seed in range(repeats):
        c = _gold_run(seed)
        for method in ("wilson", "beta"):
            lo, hi = c.tpr_interval(method)
            covered[method, "tpr"] += lo <= TPR <= hi
            lo, hi = c.tnr_interval(method)
            covered[method, "tnr"] += lo <= TNR <= hi
    coverage = {key: hits / repeats for key, hits in covered.items()}
    print(f"\nB1 coverage over {repeats} runs: {coverage}")
    for key, value in coverage.items():
        assert 0.92 <= value <= 0.98, (key, value)


# --- Wilson and Beta sanity vectors -------------------------------------------------------------


def test_wilson_interval_solves_the_score_equation() -> None:
    # The Wilson bounds are the roots p of (p̂ − p)² = z² p (1 − p) / n, i.e. of
    # (1 + z²/n) p² − (2 p̂ + z²/n) p + p̂² = 0; solved here independently with z from scipy.
    from scipy.stats import norm

    z = float(norm.ppf(0.975))
    for successes, n in [(850, 1000), (2760, 3000), (1, 10), (7, 7)]:
        p_hat = successes / n
        a, b, c = 1 + z * z / n, -(2 * p_hat + z * z / n), p_hat * p_hat
        disc = math.sqrt(b * b - 4 * a * c)
        expected = ((-b - disc) / (2 * a), (-b + disc) / (2 * a))
        assert wilson_interval(successes, n) == pytest.approx(expected, abs=1e-9)
    # And by hand, z = 1.96: centre (0.85 + 0.00192) / 1.00384 = 0.84866, half-width
    # 1.96 · √(0.1275/1000 + 3.8416/4e6) / 1.00384 = 0.02213 → [0.82653, 0.87079].
    lo, hi = wilson_interval(850, 1000)
    assert (round(lo, 5), round(hi, 5)) == (0.82653, 0.87079)


def test_wilson_interval_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(0, 50)
    assert lo == 0.0 and 0 < hi < 0.1
    lo, hi = wilson_interval(50, 50)
    assert hi == 1.0 and 0.9 < lo < 1
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_beta_interval_matches_scipy_and_closed_forms() -> None:
    from scipy.stats import beta

    for successes, n in [(850, 1000), (2760, 3000), (3, 10), (0, 0)]:
        a, b = successes + 1, n - successes + 1
        assert beta_interval(successes, n) == pytest.approx(
            (beta.ppf(0.025, a, b), beta.ppf(0.975, a, b)), abs=1e-12
        )
    # Closed forms: Beta(1, 1) is uniform; Beta(1, n + 1) has quantile 1 − (1 − q)^(1/(n + 1)).
    assert beta_interval(0, 0) == pytest.approx((0.025, 0.975), abs=1e-12)
    assert beta_interval(0, 20) == pytest.approx(
        (1 - 0.975 ** (1 / 21), 1 - 0.025 ** (1 / 21)), abs=1e-12
    )
    assert beta_interval(20, 20) == pytest.approx((0.025 ** (1 / 21), 0.975 ** (1 / 21)), abs=1e-12)


# --- panel_posterior ----------------------------------------------------------------------------


def test_panel_of_one_is_question_posterior() -> None:
    acc = JudgeAccuracy(0.8, 0.93)
    for verdicts in itertools.product([True, False, None], repeat=4):
        single = question_posterior(list(verdicts), 2, acc, prior=0.7)
        assert panel_posterior([list(verdicts)], 2, [acc], prior=0.7) == single


def test_panel_multiplies_likelihoods() -> None:
    # Two judges: posterior odds of option c against the key = prior odds × both likelihood ratios.
    a, b = JudgeAccuracy(0.9, 0.8), JudgeAccuracy(0.7, 0.95)
    va, vb = [False, True, False], [True, True, None]
    post = panel_posterior([va, vb], 0, [a, b], prior=0.6)

    def lik(verdicts: list[bool | None], acc: JudgeAccuracy, c: int) -> float:
        out = 1.0
        for i, v in enumerate(verdicts):
            if v is not None:
                p_true = acc.tpr if i == c else 1 - acc.tnr
                out *= p_true if v else 1 - p_true
        return out

    weights = [(0.6 if c == 0 else 0.2) * lik(va, a, c) * lik(vb, b, c) for c in range(3)]
    expected = [w / sum(weights) for w in weights]
    assert post.posterior == pytest.approx(expected, rel=1e-12)
    assert post.suggested == 1


def test_panel_rejects_mismatched_input() -> None:
    acc = JudgeAccuracy()
    with pytest.raises(ValueError):
        panel_posterior([], 0, [])
    with pytest.raises(ValueError):
        panel_posterior([[True, False]], 0, [acc, acc])
    with pytest.raises(ValueError):
        panel_posterior([[True, False], [True, False, False]], 0, [acc, acc])
    with pytest.raises(ValueError):
        panel_posterior([[True, False]], 2, [acc])


# --- confidence_interval ------------------------------------------------------------------------

COUNTS = (850, 150, 2760, 240)  # tp, fn, tn, fp
CALIBRATED = JudgeAccuracy(0.85, 0.92, calibrated=True, counts=COUNTS)


def _patterns(n: int = 4) -> list[list[bool | None]]:
    return [list(v) for v in itertools.product([True, False, None], repeat=n)]


def test_no_interval_without_counts() -> None:
    assert confidence_interval([True, False, False, False], 0, JudgeAccuracy()) is None


def test_interval_contains_the_point_confidence() -> None:
    for verdicts in _patterns():
        point = question_posterior(verdicts, 0, CALIBRATED).confidence
        interval = confidence_interval(verdicts, 0, CALIBRATED)
        assert interval is not None
        lo, hi = interval
        # (1e-12: the point comes from sums of logs, the interval from ratios.)
        assert 0.0 <= lo <= point + 1e-12 and point <= hi + 1e-12 and hi <= 1.0, (
            verdicts,
            lo,
            point,
            hi,
        )


def test_interval_matches_a_per_draw_posterior() -> None:
    """The vectorised shortcut equals question_posterior evaluated at every Beta draw."""
    tp, fn, tn, fp = COUNTS
    rng = np.random.default_rng(3)
    tprs = rng.beta(tp + 1, fn + 1, size=64)
    tnrs = rng.beta(tn + 1, fp + 1, size=64)
    for verdicts in ([False, True, True, None], [True, False, False, False], [None] * 4):
        per_draw = [
            question_posterior(verdicts, 1, JudgeAccuracy(a, b), prior=0.9).confidence
            for a, b in zip(tprs, tnrs, strict=True)
        ]
        expected = np.quantile(per_draw, [0.05, 0.95])
        got = confidence_interval(verdicts, 1, CALIBRATED, prior=0.9, level=0.9, draws=64, seed=3)
        assert got == pytest.approx(tuple(expected), abs=1e-12)


def test_interval_narrows_with_ten_times_the_counts() -> None:
    tp, fn, tn, fp = COUNTS
    bigger = JudgeAccuracy(0.85, 0.92, calibrated=True, counts=(10 * tp, 10 * fn, 10 * tn, 10 * fp))
    checked = 0
    for verdicts in _patterns():
        small = confidence_interval(verdicts, 0, CALIBRATED)
        large = confidence_interval(verdicts, 0, bigger)
        assert small is not None and large is not None
        width_small, width_large = small[1] - small[0], large[1] - large[0]
        judged = {v for v in verdicts if v is not None}
        if len(judged) <= 1 and (None not in verdicts or not judged):
            # All unjudged, or every option said the same: the rates cancel, P(key) = prior.
            assert width_small < 1e-12 and width_large < 1e-12
            continue
        assert width_large < width_small, verdicts
        checked += 1
    assert checked == 3**4 - 3


def test_interval_is_deterministic_across_processes() -> None:
    verdicts = [False, True, False, None]
    here = confidence_interval(verdicts, 1, CALIBRATED)
    assert here == confidence_interval(verdicts, 1, CALIBRATED)
    code = (
        "from quiztui.core.bayes import JudgeAccuracy, confidence_interval\n"
        f"acc = JudgeAccuracy(0.85, 0.92, calibrated=True, counts={COUNTS!r})\n"
        f"print(repr(confidence_interval({verdicts!r}, 1, acc)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == repr(here)
    # A different seed draws differently (so the seed is what makes it deterministic).
    assert confidence_interval(verdicts, 1, CALIBRATED, seed=1) != here


def test_score_question_carries_the_interval_for_a_calibrated_judge() -> None:
    question = Question(id="q1", text="?", options=("a", "b", "c", "d"), key=2)
    verdicts: list[bool | None] = [False, True, True, None]
    scored = score_question(question, verdicts, CALIBRATED, prior=0.9)
    assert scored.interval == confidence_interval(verdicts, 2, CALIBRATED, prior=0.9)
    assert scored.interval is not None
    assert scored.interval[0] <= scored.confidence <= scored.interval[1]
    assert score_question(question, verdicts, JudgeAccuracy(0.85, 0.92)).interval is None


def test_interval_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        confidence_interval([True], 0, CALIBRATED)
    with pytest.raises(ValueError):
        confidence_interval([True, False], 2, CALIBRATED)
    with pytest.raises(ValueError):
        confidence_interval([True, False], 0, CALIBRATED, level=1.0)


# --- B3: finding wrong keys ---------------------------------------------------------------------


def _simulated_quiz(
    tpr: float, tnr: float, judges: int = 1, questions: int = 2000, n: int = 4, seed: int = 11
) -> tuple[list[int], list[int], list[list[list[bool | None]]]]:
    """Keys, true answers and verdicts (per judge, per option) with exactly 10 % wrong keys."""
    rng = random.Random(seed)
    wrong = set(rng.sample(range(questions), questions // 10))
    keys, answers, verdicts = [], [], []
    for q in range(questions):
        key = rng.randrange(n)
        answer = rng.choice([i for i in range(n) if i != key]) if q in wrong else key
        keys.append(key)
        answers.append(answer)
        verdicts.append(
            [
                [
                    judge_verdict(f"q{q} option {i}", i == answer, tpr, tnr, seed=seed * 100 + j)
                    for i in range(n)
                ]
                for j in range(judges)
            ]
        )
    return keys, answers, verdicts


def _expected_suggestion_rate(tpr: float, tnr: float, prior: float, n: int = 4) -> float:
    """Under the model: P(posterior's top option is the true answer | key wrong, k < n).

    Enumerates every verdict pattern; ties for the top are split evenly (the simulated rate breaks
    them by floating-point rounding, which is as good as random here).
    """
    acc = JudgeAccuracy(tpr, tnr)
    key = 0
    flagged = hit = 0.0
    for answer in range(1, n):
        for pattern in itertools.product([False, True], repeat=n):
            p = 1 / (n - 1)
            for i, said in enumerate(pattern):
                p *= (tpr if said else 1 - tpr) if i == answer else (1 - tnr if said else tnr)
            if k_score([i == key for i in range(n)], pattern) == n:
                continue
            post = question_posterior(list(pattern), key, acc, prior).posterior
            top = [i for i in range(n) if post[i] >= max(post) - 1e-12]
            flagged += p
            hit += p * (answer in top) / len(top)
    return hit / flagged


def _expected_suggestion_precision(tpr: float, tnr: float, prior: float, n: int = 4) -> float:
    """Under the model: P(suggested option is the true answer | key wrong, a suggestion is made)."""
    acc = JudgeAccuracy(tpr, tnr)
    key = 0
    made = hit = 0.0
    for answer in range(1, n):
        for pattern in itertools.product([False, True], repeat=n):
            p = 1 / (n - 1)
            for i, said in enumerate(pattern):
                p *= (tpr if said else 1 - tpr) if i == answer else (1 - tnr if said else tnr)
            post = question_posterior(list(pattern), key, acc, prior)
            if post.suggested is None:
                continue
            made += p
            hit += p * (post.suggested == answer)
    return hit / made


@pytest.mark.parametrize(("tpr", "tnr"), [(0.85, 0.92), (0.9, 0.9), (0.95, 0.95)])
def test_posterior_finds_wrong_keys_at_least_as_well_as_k(tpr: float, tnr: float) -> None:
    keys, answers, verdicts = _simulated_quiz(tpr, tnr)
    acc = JudgeAccuracy(tpr, tnr)
    prior = 0.9  # the simulated quiz's share of right keys
    wrong = [key != answer for key, answer in zip(keys, answers, strict=True)]
    by_posterior, by_k, hits, suggestions = [], [], [], []
    for key, answer, per_judge in zip(keys, answers, verdicts, strict=True):
        said = per_judge[0]
        n = len(said)
        post = question_posterior(said, key, acc, prior)
        if key != answer and post.suggested is not None:
            # The judge flagged the key and named another option ("judge thinks C is the answer").
            suggestions.append(post.suggested == answer)
        k = k_score([i == key for i in range(n)], said)
        # Patterns that are the same up to option order get the same confidence mathematically,
        # but the log-space sums round differently; round so such ties stay ties.
        by_posterior.append(round(1.0 - post.confidence, 12))
        by_k.append(n - k)
        if key != answer and badge(n, k) in (Badge.QUESTIONABLE, Badge.POOR):
            top = max(range(n), key=lambda i: (post.posterior[i], i == key))
            hits.append(top == answer)
    auc_posterior, auc_k = auroc(by_posterior, wrong), auroc(by_k, wrong)
    rate = sum(hits) / len(hits)
    suggested_rate = sum(suggestions) / len(suggestions)
    expected = _expected_suggestion_rate(tpr, tnr, prior)
    print(
        f"\nB3 TPR {tpr} TNR {tnr}: AUROC posterior {auc_posterior:.4f}, k-rule {auc_k:.4f}; "
        f"suggested option = true answer in {sum(suggestions)}/{len(suggestions)} wrong keys the"
        f" judge flagged with a suggestion ({suggested_rate:.3f}, model"
        f" {_expected_suggestion_precision(tpr, tnr, prior):.3f}); "
        f"top option = true answer in {sum(hits)}/{len(hits)} flagged wrong keys ({rate:.3f}; "
        f"model expects {expected:.3f})"
    )
    assert auc_posterior >= auc_k
    # The suggestion can only be wrong when the true answer is said false and a distractor true,
    # which looks exactly like a right suggestion; the model's ceiling is below 0.90 for the two
    # weaker judges (0.898, 0.885) and above it for a 0.95/0.95 judge (0.946). Check both the model and,
    # where the model allows it, the 0.90 target.
    precision = _expected_suggestion_precision(tpr, tnr, prior)
    se_s = math.sqrt(precision * (1 - precision) / len(suggestions))
    assert abs(suggested_rate - precision) <= 3 * se_s, (suggested_rate, precision)
    if precision >= 0.92:
        assert suggested_rate >= 0.90
    assert len(hits) >= 190  # nearly every wrong key is flagged by k < n
    # One judge cannot reach 0.90 here: the true answer must be said true *and* the key said false
    # (P = TPR·TNR ≈ 0.78) before any option can outrank the key. The measured rate must agree
    # with what the model predicts (±3 binomial standard errors).
    se = math.sqrt(expected * (1 - expected) / len(hits))
    assert abs(rate - expected) <= 3 * se, (rate, expected)


@pytest.mark.parametrize(("tpr", "tnr"), [(0.85, 0.92), (0.9, 0.9)])
def test_a_panel_of_three_names_the_true_answer(tpr: float, tnr: float) -> None:
    """Three independent judges of the same accuracy put the true answer on top ≥ 90 % of the time."""
    keys, answers, verdicts = _simulated_quiz(tpr, tnr, judges=3)
    acc = JudgeAccuracy(tpr, tnr)
    hits = []
    for key, answer, per_judge in zip(keys, answers, verdicts, strict=True):
        n = len(per_judge[0])
        k = k_score([i == key for i in range(n)], per_judge[0])
        if key != answer and badge(n, k) in (Badge.QUESTIONABLE, Badge.POOR):
            post = panel_posterior(per_judge, key, [acc] * 3, prior=0.9)
            top = max(range(n), key=lambda i: (post.posterior[i], i == key))
            hits.append(top == answer)
    rate = sum(hits) / len(hits)
    print(f"\nB3 panel of 3, TPR {tpr} TNR {tnr}: {sum(hits)}/{len(hits)} ({rate:.3f})")
    assert rate >= 0.90
