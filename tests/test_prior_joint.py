"""Issue 21 item 1 (robustness): X and the judge's TPR/TNR fitted together from one quiz
(``core.prior.fit_prior_and_rates``), for a profile that does not hold on the quiz."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli import main
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.figures import judge_rates_text
from quiztui.core.prior import estimate_prior, fit_prior_and_rates
from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.tui.screens.metrics import MetricsScreen
from quiztui.tui.widgets.header import RunHeader

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
    assert fit.accuracy.label == (
        "fitted from this quiz, from profile #3 measured 2026-11-20 (weight 0)"
    )
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


def write_quiz(tmp_path: Path, questions: int, seed: int) -> Path:
    """A Quizaic JSON quiz of four-option questions, 20 % of its keys wrong, with the truth file
    beside it (``*.truth.json``) that the simulated judge answers from."""
    rng = random.Random(seed)
    rows, answers = [], []
    for n in range(questions):
        options = [f"answer {n}.{i}" for i in range(4)]
        true = rng.randrange(4)
        key = rng.choice([i for i in range(4) if i != true]) if rng.random() < 0.2 else true
        stem = f"Which statement about item {n} holds?"
        rows.append({"question": stem, "responses": options, "correct": options[key]})
        answers.append({"question": stem, "correct": options[true]})
    path = tmp_path / "items.json"
    path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    truth = {"answers": answers}
    (tmp_path / "items.truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return path


def test_vet_with_auto_rates_scores_the_end_with_the_fitted_rates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The simulated judge says TRUE of a true option 75 % of the time, FALSE of a false one 95 %;
    uncalibrated, the run assumes 0.90 / 0.90. auto+rates fits the judge from 300 questions."""
    monkeypatch.setenv("QUIZTUI_SIMULATED_LINE_DELAY", "0")
    monkeypatch.setenv("QUIZTUI_SIMULATED_TPR", "0.75")
    monkeypatch.setenv("QUIZTUI_SIMULATED_TNR", "0.95")
    path = write_quiz(tmp_path, 300, seed=8)
    common = [
        "vet", str(path), "--no-tui", "--judge", "simulated", "--sim-latency", "0",
        "--fail-on", "never", "--db", str(tmp_path / "runs.db"),
    ]  # fmt: skip
    out = tmp_path / "fit.json"
    assert main([*common, "--prior", "auto+rates", "-o", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["tpr"] == pytest.approx(0.75, abs=0.06)
    assert report["tnr"] == pytest.approx(0.95, abs=0.03)
    assert report["calibration"] == (
        "fitted from this quiz, from uncalibrated defaults (not measured) (weight 20)"
    )
    assert report["judge_rates"] == judge_rates_text(
        report["tpr"], report["tnr"], None, None, report["calibration"]
    )
    assert report["prior"] == pytest.approx(0.8, abs=0.07)
    assert ": prior auto " in capsys.readouterr().err
    # The same verdicts with plain auto: since issue 26 the judge model scores them, and a
    # SIMULATED judge's set rates count as known, so the share of right keys is found too (the
    # scoring rates shown stay the assumed defaults).
    plain = tmp_path / "auto.json"
    assert main([*common, "--prior", "auto", "-o", str(plain)]) == 0
    assumed = json.loads(plain.read_text(encoding="utf-8"))
    assert (assumed["tpr"], assumed["tnr"]) == (0.9, 0.9)
    assert assumed["prior"] == pytest.approx(0.8, abs=0.07)
    assert "the SIMULATED judge's set rates" in assumed["prior_used"]


async def test_the_tui_shows_the_fitted_rates_once_the_run_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_quiz(tmp_path, 120, seed=9)
    config = load_config()
    config = config.model_copy(
        update={
            "judge": config.judge.model_copy(update={"provider": "simulated", "logprobs": "off"}),
            "vet": config.vet.model_copy(update={"prior": "auto+rates"}),
            "simulated": config.simulated.model_copy(
                update={"tpr": 0.8, "tnr": 0.95, "latency": 0.0, "line_delay": 0.0}
            ),
        }
    )
    quiz = load_quiz(path)
    with Store(tmp_path / "runs.db") as store:
        runs = vet_runs(config, quiz, store, None)
        app = build_vet_app(config, store, quiz, runs)
        async with app.run_test(size=(220, 50)) as pilot:
            await settled(pilot)
            summary = app.vet_screen.state.summary
            assert summary is not None and summary.calibration.startswith("fitted from this quiz")
            figure = judge_rates_text(
                summary.tpr, summary.tnr, summary.tpr_ci, summary.tnr_ci, summary.calibration
            )
            header = app.vet_screen.query_one(RunHeader)
            await wait_until(pilot, lambda: figure in str(header.render()), what="fitted rates")
            await pilot.press("m")
            await wait_until(pilot, lambda: isinstance(app.screen, MetricsScreen), what="metrics")
            caption = app.screen.query_one("#bayes-caption", Static).content
            assert figure in getattr(caption, "plain", str(caption))
