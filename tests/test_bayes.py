"""The seed's figures as exact test vectors (A2) and calibration of the posterior (A3)."""

from __future__ import annotations

import random

import pytest

from quiztui.core.bayes import (
    JudgeAccuracy,
    expected_calibration_error,
    p_accurate_given_judged,
    p_k,
    question_posterior,
)


@pytest.mark.parametrize(
    ("x", "expected"),
    [(0.1, 0.5), (0.5, 0.9), (0.8, 0.972972972972973), (0.95, 0.9941860465116279)],
)
def test_seed_table_p_accurate_given_judged(x: float, expected: float) -> None:
    assert p_accurate_given_judged(0.9, x) == pytest.approx(expected, abs=1e-12)


def test_seed_rounded_figures() -> None:
    assert round(p_accurate_given_judged(0.9, 0.8), 3) == 0.973
    assert round(p_accurate_given_judged(0.9, 0.95), 4) == 0.9942


def test_seed_disease_example() -> None:
    # 99 % accurate test, 1 % prevalence: half of the positives are sick.
    assert p_accurate_given_judged(0.99, 0.01) == pytest.approx(0.5, abs=1e-12)
    assert 0.99 * 0.01 + 0.01 * 0.99 == pytest.approx(0.0198)


def test_seed_binomial_table() -> None:
    expected = [0.00000625, 0.000475, 0.0135375, 0.171475, 0.81450625]
    got = [p_k(i, 4, 0.95) for i in range(5)]
    assert got == pytest.approx(expected, abs=1e-15)
    assert sum(got) == pytest.approx(1.0)
    assert p_k(4, 4, 0.99) == pytest.approx(0.96059601, abs=1e-15)


def test_posterior_all_agree_is_confident() -> None:
    post = question_posterior([False, True, False, False], key=1, acc=JudgeAccuracy())
    assert post.confidence > 0.99
    assert post.suggested is None
    assert sum(post.posterior) == pytest.approx(1.0)


def test_posterior_suggests_the_option_the_judge_believes() -> None:
    # Judge: key (0) false, option 2 true, the others false.
    post = question_posterior(
        [False, False, True, False], key=0, acc=JudgeAccuracy(0.9, 0.9), prior=0.95
    )
    # Hand-derived: prior odds key:C = 0.95 : 0.05/3;
    # likelihood ratio C:key = (0.9·0.9)/(0.1·0.1) = 81.
    odds_c = (0.05 / 3) * 81 / 0.95
    assert post.suggested == 2
    # The two remaining distractors: L(c=1)/L(key) = (0.1·0.1)/(0.1·0.1)·… = 1 (each flips one
    # false verdict of a true option into a true verdict of a false one): odds (0.05/3)/0.95 each.
    odds_other = (0.05 / 3) / 0.95
    assert post.confidence == pytest.approx(1 / (1 + odds_c + 2 * odds_other), rel=1e-12)
    assert post.suggested_p == pytest.approx(post.posterior[2])
    assert post.suggested_p > post.confidence


def test_posterior_uses_tpr_and_tnr_separately() -> None:
    verdicts = [True, False, True, False]  # key 0 said true, distractor 2 also said true
    asym = question_posterior(verdicts, 0, JudgeAccuracy(tpr=0.99, tnr=0.6), prior=0.5)
    sym = question_posterior(verdicts, 0, JudgeAccuracy(tpr=0.795, tnr=0.795), prior=0.5)
    # Same mean accuracy, different posteriors: the model does not collapse TPR/TNR into one s.
    assert asym.confidence != pytest.approx(sym.confidence, abs=1e-3)
    # Hand-derived: L(c=0) = L(c=2) = tpr·tnr²·(1−tnr); L(c=1) = L(c=3) = (1−tnr)²·(1−tpr)·tnr.
    tpr, tnr = 0.99, 0.6
    other = 0.5 / 3
    l0 = tpr * tnr * tnr * (1 - tnr)
    l1 = (1 - tnr) * (1 - tpr) * (1 - tnr) * tnr
    expected = 0.5 * l0 / (0.5 * l0 + other * l1 * 2 + other * l0)
    assert asym.confidence == pytest.approx(expected, rel=1e-12)


def test_unjudged_contributes_prior_only() -> None:
    acc = JudgeAccuracy()
    none = question_posterior([None, None, None, None], key=0, acc=acc, prior=0.8)
    assert none.confidence == pytest.approx(0.8)
    partial = question_posterior([True, None, None, None], key=0, acc=acc, prior=0.8)
    full = question_posterior([True, False, False, False], key=0, acc=acc, prior=0.8)
    assert none.confidence < partial.confidence < full.confidence


def _simulate(n_questions: int, prior: float, tpr: float, tnr: float, n_opt: int, seed: int):
    rng = random.Random(seed)
    acc = JudgeAccuracy(tpr, tnr)
    confidences, outcomes = [], []
    for _ in range(n_questions):
        key = rng.randrange(n_opt)
        if rng.random() < prior:
            true = key
        else:
            true = rng.choice([i for i in range(n_opt) if i != key])
        verdicts: list[bool | None] = []
        for i in range(n_opt):
            if i == true:
                verdicts.append(rng.random() < tpr)
            else:
                verdicts.append(not (rng.random() < tnr))
        post = question_posterior(verdicts, key, acc, prior)
        confidences.append(post.confidence)
        outcomes.append(true == key)
    return confidences, outcomes


@pytest.mark.parametrize(
    ("prior", "tpr", "tnr"),
    [(0.95, 0.9, 0.9), (0.8, 0.85, 0.92), (0.6, 0.75, 0.8)],
)
def test_confidence_is_calibrated_on_a_simulated_quiz(prior: float, tpr: float, tnr: float) -> None:
    """A3: 2,000 questions whose key errors and judge follow the model: ECE ≤ 0.03 (10 bins)."""
    conf, outcome = _simulate(2000, prior, tpr, tnr, 4, seed=7)
    ece = expected_calibration_error(conf, outcome, bins=10)
    assert ece <= 0.03, ece
    # And the confidence is informative: far better than the prior alone at separating outcomes.
    mean_right = sum(c for c, o in zip(conf, outcome, strict=True) if o) / max(1, sum(outcome))
    mean_wrong = sum(c for c, o in zip(conf, outcome, strict=True) if not o) / max(
        1, len(outcome) - sum(outcome)
    )
    assert mean_right - mean_wrong > 0.3


def test_misspecified_confidence_is_detectably_miscalibrated() -> None:
    """The ECE check has teeth: assuming a perfect judge when it is 75 % accurate fails it."""
    rng_conf, outcome = _simulate(2000, 0.6, 0.75, 0.8, 4, seed=7)
    del rng_conf
    conf_wrong = []
    rng = random.Random(7)
    acc_assumed = JudgeAccuracy(0.99, 0.99)
    for _ in range(2000):
        key = rng.randrange(4)
        true = key if rng.random() < 0.6 else rng.choice([i for i in range(4) if i != key])
        verdicts = [
            (rng.random() < 0.75) if i == true else not (rng.random() < 0.8) for i in range(4)
        ]
        conf_wrong.append(question_posterior(verdicts, key, acc_assumed, 0.6).confidence)
    assert expected_calibration_error(conf_wrong, outcome) > 0.03
