"""Issue 21 item 2 (T2): the structured panel fit — the latent variable is which option is right.

Seeded simulated panels (numpy's generator; the rates are the judges' true ones), the fit's
posterior checked against ``core.bayes.panel_posterior`` with the fitted rates, and the cases
where a fit must not be offered as a profile: not converged, a judge with no information, and
label switching.
"""

from __future__ import annotations

import numpy as np
import pytest

from quiztui.core.bayes import JudgeAccuracy, panel_posterior
from quiztui.core.panel_fit import structured_fit, verdict_array

JUDGES = ((0.92, 0.90), (0.85, 0.94), (0.95, 0.85))


def simulated(
    questions: int, seed: int, judges: tuple[tuple[float, float], ...] = JUDGES, wrong: float = 0.1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    true = rng.integers(0, 4, questions)
    truth = np.zeros((questions, 4), dtype=bool)
    truth[np.arange(questions), true] = True
    keys = np.where(rng.random(questions) < wrong, (true + rng.integers(1, 4, questions)) % 4, true)
    verdicts = np.empty((questions, 4, len(judges)))
    for j, (tpr, tnr) in enumerate(judges):
        u = rng.random((questions, 4))
        verdicts[:, :, j] = np.where(truth, u < tpr, u >= tnr)
    return verdicts, keys, truth


def test_a_large_panel_recovers_every_rate_and_the_share_of_right_keys() -> None:
    verdicts, keys, truth = simulated(4000, seed=1)
    fit = structured_fit(verdicts, keys.tolist(), [4] * 4000)
    assert fit.usable and fit.converged and fit.problems == ()
    want = np.array(JUDGES)
    assert np.max(np.abs(fit.tpr - want[:, 0])) < 0.02
    assert np.max(np.abs(fit.tnr - want[:, 1])) < 0.02
    right = float(np.mean(truth[np.arange(4000), keys]))
    assert fit.key_right == pytest.approx(right, abs=0.02)
    assert fit.none_share < 0.02  # every question has a right option


def test_at_300_questions_the_fit_is_as_close_as_knowing_the_truth() -> None:
    # What the rates were in this sample, measured with the truth known: the fit should be
    # within sampling noise of it, not merely of the generating rates.
    verdicts, keys, truth = simulated(300, seed=7)
    fit = structured_fit(verdicts, keys.tolist(), [4] * 300)
    t = truth[:, :, None]
    oracle_tpr = (verdicts * t).sum((0, 1)) / t.sum()
    oracle_tnr = ((1 - verdicts) * ~t).sum((0, 1)) / (~t).sum()
    assert np.max(np.abs(fit.tpr - oracle_tpr)) < 0.02
    assert np.max(np.abs(fit.tnr - oracle_tnr)) < 0.01


def test_the_posterior_is_the_bayes_panel_posterior_with_the_fitted_rates() -> None:
    verdicts, keys, _ = simulated(200, seed=3)
    fit = structured_fit(verdicts, keys.tolist(), [4] * 200, allow_none=False, tol=1e-12)
    accuracies = [JudgeAccuracy(float(a), float(b)) for a, b in zip(fit.tpr, fit.tnr, strict=True)]
    for q in (0, 17, 199):
        per_judge = [[bool(verdicts[q, i, j]) for i in range(4)] for j in range(3)]
        post = panel_posterior(per_judge, int(keys[q]), accuracies, fit.key_right)
        assert fit.posterior[q, :4] == pytest.approx(post.posterior, abs=1e-6)
        assert fit.posterior[q, 4] == 0.0  # "none" is not allowed here


def test_unjudged_verdicts_and_questions_of_different_sizes() -> None:
    # Two-option and four-option questions side by side; a fifth of verdicts missing.
    rng = np.random.default_rng(5)
    rows: list[list[list[bool | None]]] = []
    keys, counts = [], []
    for q in range(1500):
        n = 2 if q % 3 == 0 else 4
        true = int(rng.integers(0, n))
        rows.append(
            [
                [
                    None
                    if rng.random() < 0.2
                    else bool(rng.random() < tpr if i == true else rng.random() >= tnr)
                    for i in range(n)
                ]
                for tpr, tnr in JUDGES
            ]
        )
        keys.append(true)
        counts.append(n)
    labels = verdict_array(rows)
    assert labels.shape == (1500, 4, 3) and np.isnan(labels[0, 2:, :]).all()
    fit = structured_fit(labels, keys, counts)
    assert fit.usable
    want = np.array(JUDGES)
    assert np.max(np.abs(np.stack([fit.tpr, fit.tnr], 1) - want)) < 0.035


def test_a_fit_that_did_not_converge_is_flagged_and_not_offered() -> None:
    verdicts, keys, _ = simulated(300, seed=2)
    fit = structured_fit(verdicts, keys.tolist(), [4] * 300, max_iter=2)
    assert not fit.converged and not fit.usable
    assert fit.problems[0] == "did not converge in 2 iterations"
    full = structured_fit(verdicts, keys.tolist(), [4] * 300)
    assert full.converged and full.iterations > 2
    assert full.log_likelihood > fit.log_likelihood


def test_judges_who_say_true_of_everything_carry_no_information() -> None:
    verdicts = np.ones((100, 4, 3))  # every option called true by every judge
    fit = structured_fit(verdicts, [0] * 100, [4] * 100)
    assert not fit.usable
    assert sum("carries no information" in p for p in fit.problems) == 3


def test_an_inverted_judge_is_label_switching() -> None:
    # Judge 3 says the opposite of the truth: TPR 0.1, TNR 0.1.
    verdicts, keys, _ = simulated(600, seed=4, judges=((0.9, 0.9), (0.9, 0.9), (0.1, 0.1)))
    fit = structured_fit(verdicts, keys.tolist(), [4] * 600)
    assert not fit.usable
    assert any(p.startswith("label switching: judge 3") for p in fit.problems), fit.problems
    assert fit.tpr[2] + fit.tnr[2] < 1.0


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="questions × options × judges"):
        structured_fit(np.zeros((3, 4)), [0, 0, 0], [4, 4, 4])
    with pytest.raises(ValueError, match="key among them"):
        structured_fit(np.zeros((1, 4, 2)), [4], [4])
