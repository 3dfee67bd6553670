"""Issue 21 item 1 (robustness): X and the judge's TPR/TNR fitted together from one quiz
(``core.prior.fit_prior_and_rates``), for a profile that does not hold on the quiz."""

from __future__ import annotations

import random

import pytest

from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.prior import estimate_prior, fit_prior_and_rates

Quiz = list[tuple[list[bool | None], int]]


def world(questions: int, wrong: float, tpr: float, tnr: float, seed: int) -> tuple[Quiz, float]:
    """Four-option questions, one true option, the key wrong at rate ``wrong``; a judge with
    ``tpr``/``tnr`` answers every option. Also returns the share of right keys."""
    rng = random.Random(seed)
    quiz: Quiz = []
    right = 0
    for _ in range(questions):
        true = rng.randrange(4)
        key = rng.choice([o for o in range(4) if o != true]) if rng.random() < wrong else true
        right += key == true
        quiz.append(
            ([rng.random() < tpr if i == true else rng.random() >= tnr for i in range(4)], key)
        )
    return quiz, right / questions


def test_a_profile_off_by_005_is_corrected_from_the_quiz() -> None:
    quiz, share = world(2000, 0.10, 0.90, 0.90, seed=11)
    wrong_profile = JudgeAccuracy(tpr=0.85, tnr=0.85, label="profile #3 measured 2026-11-20")
    fit = fit_prior_and_rates(quiz, wrong_profile)
    assert fit.converged and fit.prior.questions == 2000
    assert fit.accuracy.tpr == pytest.approx(0.90, abs=0.02)
    assert fit.accuracy.tnr == pytest.approx(0.90, abs=0.01)
    assert fit.prior.value == pytest.approx(share, abs=0.02)
    lo, hi = fit.prior.interval
    assert lo <= share <= hi
    assert fit.accuracy.label == "quiz fit (0 pseudo-assertions of profile #3 measured 2026-11-20)"
    # The profile's rates as they are: X absorbs the error and lands further from the truth.
    fixed_rates = estimate_prior(quiz, wrong_profile)
    assert abs(fixed_rates.value - share) > abs(fit.prior.value - share)


def test_a_heavy_profile_keeps_its_rates_and_gives_the_auto_prior() -> None:
    quiz, _ = world(300, 0.20, 0.90, 0.90, seed=4)
    profile = JudgeAccuracy(tpr=0.88, tnr=0.93)
    fit = fit_prior_and_rates(quiz, profile, weight=1e12)
    assert fit.accuracy.tpr == pytest.approx(0.88, abs=1e-6)
    assert fit.accuracy.tnr == pytest.approx(0.93, abs=1e-6)
    # With the rates fixed, the EM's X is the root estimate_prior finds by bisection.
    assert fit.prior.value == pytest.approx(estimate_prior(quiz, profile).value, abs=1e-6)


def test_few_questions_shrink_x_and_unjudged_options_add_nothing() -> None:
    flagged: Quiz = [([False, True, None, False], 0)] * 10  # the key called false every time
    fit = fit_prior_and_rates(flagged, JudgeAccuracy(), 0.95, weight=50)
    alone = fit_prior_and_rates(flagged, JudgeAccuracy(), 0.95, weight=50, shrink_below=0)
    assert fit.prior.pseudo == 20 and alone.prior.pseudo == 0
    assert alone.prior.value < fit.prior.value < 0.95
    assert fit_prior_and_rates([([None, None], 0)], JudgeAccuracy()).prior.questions == 0
    with pytest.raises(ValueError):
        fit_prior_and_rates(flagged, JudgeAccuracy(), weight=-1)
