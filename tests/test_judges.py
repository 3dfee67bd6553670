"""The judge-behaviour model (core/judges.py, issue 26): simulated worlds with the truth known,
and the real exam with human labels when ../shared/data is present."""

from __future__ import annotations

import numpy as np
import pytest

from quiztui.core.agreement import auroc, average_precision
from quiztui.core.bayes import JudgeAccuracy, expected_calibration_error, panel_posterior
from quiztui.core.judges import (
    DEFAULT_WRONG_SHARE,
    DifficultyJudges,
    Observations,
    Profile,
    independent_judges,
    majority_disagreement,
    shared_mistake_weights,
)
from quiztui.simulate.worlds import correlated_picks, independent_assertions, independent_picks
from quiztui.testing.real_exam import default_path, load


def _ece(fit, world) -> float:
    return expected_calibration_error(fit.p_key_wrong.tolist(), world.key_wrong.tolist())


def test_judges_that_fail_together_recover_their_parameters_and_stay_calibrated() -> None:
    world = correlated_picks(2000, np.linspace(1.5, 3.0, 8), wrong_share=0.02, seed=1)
    fit = DifficultyJudges().fit(world.observations)
    assert fit.converged
    # each judge's accuracy over the quiz, and how much its misses gather on one distractor
    for rates, realised in zip(fit.judges, world.accuracy, strict=True):
        assert abs(rates.accuracy - realised) < 0.03
    assert abs(fit.attraction - world.attraction) < 0.1
    assert _ece(fit, world) < 0.02
    assert abs(fit.p_key_wrong.mean() - world.key_wrong.mean()) < 0.01


def test_the_independent_model_reads_shared_failures_as_wrong_keys() -> None:
    """The same world through today's independent model: judges converging on a distractor are
    read as near-certain wrong keys (why the model above exists)."""
    world = correlated_picks(1000, np.linspace(1.5, 3.0, 8), wrong_share=0.02, seed=2)
    obs = world.observations
    acc = [JudgeAccuracy(0.8, 1 - 0.2 / 3)] * obs.judges
    p_old = []
    for q in range(obs.questions):
        verdicts = [[bool(x) for x in obs.verdicts[q, :, j]] for j in range(obs.judges)]
        p_old.append(1 - panel_posterior(verdicts, int(obs.keys[q]), acc, 0.95).confidence)
    old = expected_calibration_error(p_old, world.key_wrong.tolist())
    new = _ece(DifficultyJudges().fit(obs), world)
    assert old > 3 * new
    assert old > 0.03


@pytest.mark.parametrize("seed", [3, 4])
def test_independent_error_worlds_still_come_out_calibrated(seed: int) -> None:
    picks = independent_picks(1200, [0.9, 0.85, 0.8], wrong_share=0.02, seed=seed)
    fit = DifficultyJudges().fit(picks.observations)
    assert _ece(fit, picks) < 0.02
    for rates, realised in zip(fit.judges, picks.accuracy, strict=True):
        assert abs(rates.accuracy - realised) < 0.03
    rates = [(0.92, 0.90), (0.85, 0.94), (0.95, 0.85)]
    verdicts = independent_assertions(1200, rates, wrong_share=0.02, seed=seed)
    fit = DifficultyJudges().fit(verdicts.observations)
    assert _ece(fit, verdicts) < 0.02
    for got, (tpr, tnr) in zip(fit.judges, rates, strict=True):
        assert got.mode == "assertion"
        assert abs(got.accuracy - tpr) < 0.03
        assert abs(got.tnr - tnr) < 0.03


def test_the_independent_model_is_the_special_case_of_one_level_and_no_attractor() -> None:
    """One difficulty level, misses spread evenly: the posteriors are core/bayes' independent
    posteriors at the fitted rates and share (assertion judges)."""
    world = independent_assertions(400, [(0.9, 0.85), (0.8, 0.95)], wrong_share=0.1, seed=8)
    fit = independent_judges(draws=0).fit(world.observations)
    share = float(fit.wrong_share.value)
    # the posterior mean is the share the fit held (the default standing)
    assert share == pytest.approx(DEFAULT_WRONG_SHARE, abs=0.002)
    obs = world.observations
    pi = _fitted_pi(fit, obs)
    accuracies = [JudgeAccuracy(r.accuracy, r.tnr) for r in fit.judges]
    for q in range(0, obs.questions, 37):
        verdicts = [[bool(x) for x in obs.verdicts[q, :, j]] for j in range(obs.judges)]
        post = panel_posterior(verdicts, int(obs.keys[q]), accuracies, 1 - pi)
        assert 1 - post.confidence == pytest.approx(fit.p_key_wrong[q], abs=1e-6)


def _fitted_pi(fit, obs) -> float:  # type: ignore[no-untyped-def]
    """The π that makes core/bayes' posteriors match: solved from one question."""
    from scipy.optimize import brentq

    q = int(np.argmax(fit.p_key_wrong))
    verdicts = [[bool(x) for x in obs.verdicts[q, :, j]] for j in range(obs.judges)]
    accuracies = [JudgeAccuracy(r.accuracy, r.tnr) for r in fit.judges]

    def gap(pi: float) -> float:
        post = panel_posterior(verdicts, int(obs.keys[q]), accuracies, 1 - pi)
        return (1 - post.confidence) - float(fit.p_key_wrong[q])

    return float(brentq(gap, 1e-9, 0.999))


def test_an_unmeasured_judge_cannot_move_the_share_of_wrong_keys() -> None:
    """One judge, rates not measured: disagreement is a wrong key or a wrong judge, and nothing
    tells which, so the default share stands (and says so) whatever the judge says."""
    world = independent_assertions(300, [(0.9, 0.9)], wrong_share=0.3, seed=5)
    fit = DifficultyJudges().fit(world.observations)
    assert fit.wrong_share.value == pytest.approx(DEFAULT_WRONG_SHARE, abs=0.002)
    assert not fit.wrong_share.identified
    assert "not measured" in fit.wrong_share.source
    lo, hi = fit.wrong_share.interval
    assert lo < DEFAULT_WRONG_SHARE < hi


def test_a_measured_profile_sets_the_default_aside_only_on_decisive_evidence() -> None:
    profile = Profile(tp=180, fn=20, tn=540, fp=60)  # TPR 0.90, TNR 0.90
    many = independent_assertions(300, [(0.9, 0.9)], wrong_share=0.3, seed=5)
    fit = DifficultyJudges(profiles=[profile]).fit(many.observations)
    assert fit.wrong_share.identified
    assert abs(fit.wrong_share.value - many.key_wrong.mean()) < 0.05
    assert _ece(fit, many) < 0.05
    few = independent_assertions(300, [(0.9, 0.9)], wrong_share=0.02, seed=5)
    fit = DifficultyJudges(profiles=[profile]).fit(few.observations)
    assert not fit.wrong_share.identified
    assert fit.wrong_share.value == pytest.approx(DEFAULT_WRONG_SHARE, abs=0.002)


def test_unmeasured_rates_widen_the_interval() -> None:
    world = independent_assertions(200, [(0.9, 0.9)], wrong_share=0.02, seed=6)
    loose = DifficultyJudges().fit(world.observations)
    tight = DifficultyJudges(profiles=[Profile(900, 100, 2700, 300)]).fit(world.observations)
    q = int(np.argmax(loose.p_key_wrong))  # a question the judge disagrees on
    width_loose = loose.interval[q, 1] - loose.interval[q, 0]
    width_tight = tight.interval[q, 1] - tight.interval[q, 0]
    assert width_loose > width_tight > 0
    assert loose.interval[q, 0] <= 1 - loose.p_key_wrong[q] <= loose.interval[q, 1]


def test_copies_of_one_judge_weigh_about_one_judge() -> None:
    world = correlated_picks(600, [2.0, 2.2, 2.4, 2.6], wrong_share=0.02, seed=7)
    picks = world.observations.picks()
    with_copy = np.concatenate([picks, picks[:, :1]], axis=1)
    w = shared_mistake_weights(with_copy)
    assert w[0] == pytest.approx(0.5, abs=0.05)
    assert w[-1] == pytest.approx(0.5, abs=0.05)
    assert np.all(w[1:4] > 0.9)


def test_a_pick_judge_row_that_is_not_one_pick_is_unjudged() -> None:
    obs = Observations.build(
        [
            [[True, False, False], [False, False, False], [True, True, False]],
            [[None, None, None], [False, True, False], [False, False, True]],
        ],
        keys=[0, 1],
        modes=["pick", "pick", "pick"],
    )
    assert obs.picks().tolist() == [[0, -1, -1], [-1, 1, 2]]
    assert majority_disagreement(obs).tolist() == [0.0, 0.5]


def test_average_precision_matches_the_step_area_with_ties() -> None:
    scores = [0.9, 0.8, 0.8, 0.3, 0.1]
    labels = [1, 0, 1, 0, 1]
    # thresholds: 0.9 -> P 1, R 1/3; 0.8 -> P 2/3, R 2/3; 0.1 -> P 3/5, R 1
    expected = (1 / 3) * 1 + (1 / 3) * (2 / 3) + (1 / 3) * (3 / 5)
    assert average_precision(scores, labels) == pytest.approx(expected)
    assert np.isnan(average_precision([0.1, 0.2], [0, 0]))


@pytest.fixture(scope="module")
def exam():
    path = default_path()
    if path is None:
        pytest.skip("the real exam (../shared/data/mmlu_redux_helm_dev) is not here")
    return load(path)


def test_on_the_real_exam_the_panel_is_calibrated_and_ranks_as_well_as_a_vote(exam) -> None:
    scored, wrong = exam.scored(), exam.wrong()
    obs = exam.observations()
    fit = DifficultyJudges(draws=8).fit(obs)
    p, y = fit.p_key_wrong[scored], wrong[scored]
    assert expected_calibration_error(p.tolist(), y.tolist()) <= 0.03
    assert abs(p.mean() - y.mean()) <= 0.01
    vote = majority_disagreement(obs)[scored]
    assert auroc(p, y) >= auroc(vote, y) - 0.01
    assert average_precision(p, y) >= average_precision(vote, y)


def test_on_the_real_exam_a_single_judge_with_default_rates_is_calibrated(exam) -> None:
    scored, wrong = exam.scored(), exam.wrong()
    j = exam.models.index("openai_gpt-4o-2024-05-13")
    fit = DifficultyJudges(draws=8).fit(exam.observations([j]))
    p, y = fit.p_key_wrong[scored], wrong[scored]
    assert expected_calibration_error(p.tolist(), y.tolist()) <= 0.03
    assert abs(p.mean() - y.mean()) <= 0.01
    # a disagreement is worth about one wrong key in eight, not "confidence 0.2"
    away = (exam.picks[:, j] >= 0) & (exam.picks[:, j] != exam.keys)
    assert 0.05 < fit.p_key_wrong[away & scored].mean() < 0.3


@pytest.mark.parametrize("judges", [1, 3])
def test_the_interval_draws_in_one_pass_are_the_e_steps_posteriors(judges: int) -> None:
    """Assertion judges' interval draws are scored in one pass of arrays (``_key_posteriors``):
    each draw's P(key right) is what an E-step under that draw's parameters gives."""
    from quiztui.core.judges import _Arrays

    rng = np.random.default_rng(judges)
    counts = rng.integers(2, 6, size=60)
    keys = [int(rng.integers(0, c)) for c in counts]
    verdicts = [
        [[None if rng.random() < 0.1 else bool(rng.random() < 0.3) for _ in range(c)]] * judges
        for c in counts
    ]
    obs = Observations.build(verdicts, keys, ["assertion"] * judges)
    model = DifficultyJudges(levels=[-1.0, 0.5, 2.0])  # three difficulty levels
    d = _Arrays(obs)
    omega = np.array([0.2, 0.5, 0.3])
    drawn = [
        (
            float(rng.uniform(0.01, 0.3)),
            omega,
            np.zeros(3),
            rng.normal(1.0, 0.5, judges),
            rng.normal(2.0, 0.5, judges),
            rng.normal(-2.0, 0.5, judges),
        )
        for _ in range(5)
    ]
    together = model._key_posteriors(d, drawn)
    for k, params in enumerate(drawn):
        r, _, _ = model._e_step(d, params)
        np.testing.assert_allclose(together[k], r.sum(axis=2)[np.arange(d.nq), d.keys], atol=1e-12)
