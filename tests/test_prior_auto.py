"""Issue 21 item 1: ``prior = "auto"`` — the share of right keys estimated from the run itself.

Core maths against hand-checkable cases (the estimate is the EM fixed point and the score's root;
shrinkage below 30 questions), the config and ``--prior`` flag, and a real vet run (simulated
judge, real SQLite store) whose end scores use the estimate, which an edited question's re-judge
keeps.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli import main
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.judges import DifficultyJudges, Observations, Profile
from quiztui.core.prior import estimate_prior, key_likelihoods
from quiztui.core.quiz import Question, Quiz
from quiztui.formats import load_quiz
from quiztui.pipeline.events import QuestionScored, RunFinished, VetEvent
from quiztui.report import render_report
from quiztui.store import Store
from quiztui.tui.widgets.header import RunHeader

ACC = JudgeAccuracy(tpr=0.9, tnr=0.9)


def world(questions: int, wrong: float, seed: int) -> list[tuple[list[bool | None], int, bool]]:
    rng = random.Random(seed)
    out: list[tuple[list[bool | None], int, bool]] = []
    for _ in range(questions):
        true = rng.randrange(4)
        key = rng.choice([o for o in range(4) if o != true]) if rng.random() < wrong else true
        verdicts: list[bool | None] = [
            rng.random() < 0.9 if i == true else rng.random() >= 0.9 for i in range(4)
        ]
        out.append((verdicts, key, key == true))
    return out


def test_key_likelihoods_by_hand() -> None:
    # Verdicts T F F F, key 0: L(c=0) = .9·.9³; L(c=j≠0) = (1 − .9)·(1 − .9)·.9² each.
    a, b = key_likelihoods([True, False, False, False], 0, ACC)
    assert a == pytest.approx(0.9**4)
    assert b == pytest.approx(0.1 * 0.1 * 0.9**2)
    # An unjudged option adds no likelihood.
    a, b = key_likelihoods([True, None, False, False], 0, ACC)
    assert a == pytest.approx(0.9**3)
    assert b == pytest.approx((0.1 * 0.9**2 + 2 * 0.1 * 0.1 * 0.9) / 3)


def test_the_estimate_is_the_em_fixed_point_and_covers_the_true_share() -> None:
    quiz = world(400, 0.2, seed=3)
    est = estimate_prior([(v, k) for v, k, _ in quiz], ACC)
    assert est.pseudo == 0 and est.questions == 400 and est.converged
    # At the maximum, X equals the mean responsibility P(key right | verdicts) — EM's update.
    pairs = [key_likelihoods(v, k, ACC) for v, k, _ in quiz]
    x = est.value
    mean_resp = sum(x * a / (x * a + (1 - x) * b) for a, b in pairs) / len(pairs)
    assert mean_resp == pytest.approx(x, abs=1e-6)
    share = sum(ok for _, _, ok in quiz) / len(quiz)
    lo, hi = est.interval
    assert lo < x < hi and lo <= share <= hi
    assert abs(x - 0.8) < 0.05
    assert est.label.startswith(f"auto {x:.2f} [{lo:.2f}, {hi:.2f}] · 400 q")


def test_few_questions_shrink_toward_the_default() -> None:
    # Ten questions, every key flagged: the data alone say the keys are mostly wrong.
    flagged: list[tuple[list[bool | None], int]] = [([False, True, False, False], 0)] * 10
    alone = estimate_prior(flagged, ACC, 0.95, shrink_below=0)
    shrunk = estimate_prior(flagged, ACC, 0.95)
    assert shrunk.pseudo == 20  # 30 − 10 pseudo-questions at the default
    assert alone.value < 0.2 < shrunk.value < 0.95
    assert "shrunk toward 0.95" in shrunk.label
    # Thirty questions or more: the default has no weight.
    assert estimate_prior(flagged * 3, ACC, 0.95).pseudo == 0
    # No verdict at all: nothing to learn from, the default stands.
    nothing = estimate_prior([([None, None, None], 1)] * 50, ACC, 0.9)
    assert nothing.value == 0.9 and nothing.questions == 0


def test_every_key_right_stays_below_one() -> None:
    perfect: list[tuple[list[bool | None], int]] = [([True, False, False, False], 0)] * 200
    est = estimate_prior(perfect, ACC)
    assert 0.99 <= est.value < 1.0


def test_config_and_flag_accept_auto_or_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = tmp_path / "config.toml"
    toml.write_text('[vet]\nprior = "auto"\nprior_default = 0.9\n', encoding="utf-8")
    config = load_config(toml, environ={})
    assert config.vet.prior == "auto" and config.vet.prior_default == 0.9
    assert load_config(toml, environ={"QUIZTUI_VET_PRIOR": "0.8"}).vet.prior == 0.8
    assert load_config(toml, environ={"QUIZTUI_VET_PRIOR": "auto+rates"}).vet.prior == "auto+rates"
    quiz = tmp_path / "q.json"
    quiz.write_text(
        '[{"question": "2 + 2?", "responses": ["3", "4"], "correct": "4"}]\n', encoding="utf-8"
    )
    for bad in ("1.5", "automatic", "0"):
        code = main(["vet", str(quiz), "--no-tui", "--judge", "simulated", "--prior", bad])
        err = capsys.readouterr().err.strip()
        assert code == 2
        want = f"--prior {bad}: Input should be auto, auto+rates or a number"
        assert err.count("\n") == 0 and want in err


def planted_quiz(questions: int, wrong: float, seed: int) -> Quiz:
    rng = random.Random(seed)
    qs, truth = [], {}
    for i in range(questions):
        true = rng.randrange(4)
        key = rng.choice([o for o in range(4) if o != true]) if rng.random() < wrong else true
        qs.append(
            Question(
                id=f"q{i + 1}",
                text=f"Which of these is fact {i}?",
                options=tuple(f"statement {i}.{j}" for j in range(4)),
                key=key,
            )
        )
        truth[f"q{i + 1}"] = true
    return Quiz(title="planted", questions=tuple(qs), truth=truth)


async def drain(events: AsyncIterator[VetEvent]) -> tuple[dict[str, QuestionScored], RunFinished]:
    scores: dict[str, QuestionScored] = {}
    finished = None
    async for event in events:
        if isinstance(event, QuestionScored):
            scores[event.question_id] = event
        elif isinstance(event, RunFinished):
            finished = event
    assert finished is not None
    return scores, finished


async def test_a_vet_run_scores_with_the_estimate_and_a_rejudge_keeps_it(tmp_path: Path) -> None:
    quiz = planted_quiz(80, 0.3, seed=11)
    config = load_config()
    config = config.model_copy(
        update={
            "judge": config.judge.model_copy(update={"provider": "simulated", "logprobs": "off"}),
            "vet": config.vet.model_copy(update={"prior": "auto"}),
            "simulated": config.simulated.model_copy(
                update={"tpr": 0.9, "tnr": 0.9, "latency": 0.0, "line_delay": 0.0}
            ),
        }
    )
    with Store(tmp_path / "runs.db") as store:
        runs = vet_runs(config, quiz, store, None)
        assert runs.settings.prior_auto and runs.settings.prior == 0.95
        scores, finished = await drain(runs.start_run())
        summary = finished.summary
        verdicts = {q.question_id: (list(q.verdicts), q.key) for q in summary.questions}
        # issue 26: scored through core/judges; the simulated judge's set rates (0.9/0.9) count
        # as known, so 30 % wrong keys decisively move the share off its 2 % default
        rows = [verdicts[q.id] for q in quiz.questions]
        obs = Observations.build([[v] for v, _ in rows], [k for _, k in rows])
        fit = DifficultyJudges(profiles=[Profile(900, 100, 2700, 300, exact=True)]).fit(obs)
        assert fit.wrong_share.identified
        assert summary.prior == pytest.approx(1 - fit.wrong_share.value)
        assert abs(summary.prior - 0.7) < 0.12 and summary.prior < 0.9
        assert "the SIMULATED judge's set rates" in (summary.prior_label or "")
        for i, q in enumerate(quiz.questions):
            assert scores[q.id].confidence == pytest.approx(fit.confidence(i), abs=1e-9)
        # One edited question re-judged alone is scored with the run's estimate, not a new one.
        edited = quiz.questions[0].model_copy(update={"text": "Which of these is fact zero?"})
        _, again = await drain(runs.start_run(Quiz(title="one", questions=(edited,))))
        assert again.summary.prior == pytest.approx(summary.prior)


def write_planted(tmp_path: Path, quiz: Quiz) -> Path:
    """``quiz`` as a quiz file with a truth file beside it, the way sample quizzes come."""
    rows = [
        {"question": q.text, "responses": list(q.options), "correct": q.options[q.key]}
        for q in quiz.questions
    ]
    answers = [{"question": q.text, "correct": q.options[quiz.truth[q.id]]} for q in quiz.questions]
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "facts.truth.json").write_text(json.dumps({"answers": answers}), encoding="utf-8")
    return path


def auto_prior_setup(tmp_path: Path) -> tuple[Any, Any]:
    """A 40-question quiz with 30 % wrong keys, vetted by the simulated judge with prior auto."""
    path = write_planted(tmp_path, planted_quiz(40, 0.3, seed=5))
    config = load_config()
    config = config.model_copy(
        update={
            "judge": config.judge.model_copy(update={"provider": "simulated", "logprobs": "off"}),
            "vet": config.vet.model_copy(update={"prior": "auto"}),
            "simulated": config.simulated.model_copy(update={"latency": 0.0, "line_delay": 0.0}),
        }
    )
    return config, load_quiz(path)


async def test_the_tui_header_names_the_estimated_prior(tmp_path: Path) -> None:
    # 240 columns: the header also carries the run's expected wrong keys, before the prior
    config, quiz = auto_prior_setup(tmp_path)
    with Store(tmp_path / "runs.db") as store:
        runs = vet_runs(config, quiz, store, None)
        app = build_vet_app(config, store, quiz, runs)
        async with app.run_test(size=(240, 40)) as pilot:
            await settled(pilot)
            header = app.vet_screen.query_one(RunHeader)
            await wait_until(
                pilot, lambda: header.prior is not None, what="the prior in the header"
            )
            estimate = runs.prior_estimate()
            assert estimate is not None and header.prior == estimate.label
            assert f"prior: auto {estimate.value:.2f} [" in str(header.content)
            summary = app.vet_screen.state.summary
            assert summary is not None and summary.prior_label == estimate.label
            markdown = re.sub(r"\\(.)", r"\1", render_report(summary, "md"))  # unescaped
            assert f"- Prior: {estimate.label}" in markdown


async def test_at_80x24_the_stats_line_names_the_prior_the_header_has_no_room_for(
    tmp_path: Path,
) -> None:
    from textual.widgets import Static

    config, quiz = auto_prior_setup(tmp_path)
    with Store(tmp_path / "runs.db") as store:
        runs = vet_runs(config, quiz, store, None)
        app = build_vet_app(config, store, quiz, runs)
        async with app.run_test(size=(80, 24)) as pilot:
            await settled(pilot)
            header = app.vet_screen.query_one(RunHeader)
            await wait_until(pilot, lambda: header.prior is not None, what="the prior")
            await pilot.pause()
            estimate = runs.prior_estimate()
            assert estimate is not None
            assert "prior" not in header.render_line(0).text  # the one-line header is full
            stats = app.vet_screen.query_one("#stats-line", Static)
            line = stats.render_line(0).text
            assert line.startswith(f"prior auto {estimate.value:.2f} · requests ")


async def test_the_tui_header_names_a_fixed_prior_too(tmp_path: Path) -> None:
    path = write_planted(tmp_path, planted_quiz(12, 0.0, seed=2))
    config = load_config()
    config = config.model_copy(
        update={
            "judge": config.judge.model_copy(update={"provider": "simulated", "logprobs": "off"}),
            "vet": config.vet.model_copy(update={"prior": 0.9}),
            "simulated": config.simulated.model_copy(update={"latency": 0.0, "line_delay": 0.0}),
        }
    )
    quiz = load_quiz(path)
    with Store(tmp_path / "runs.db") as store:
        runs = vet_runs(config, quiz, store, None)
        app = build_vet_app(config, store, quiz, runs)
        async with app.run_test(size=(200, 40)) as pilot:
            await settled(pilot)
            header = app.vet_screen.query_one(RunHeader)
            await wait_until(
                pilot, lambda: header.prior is not None, what="the prior in the header"
            )
            assert header.prior == "fixed 0.9" and runs.prior_estimate() is None
            assert app.vet_screen.state.summary is not None
            assert app.vet_screen.state.summary.prior_label is None


def test_headless_vet_names_the_prior_it_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZTUI_SIMULATED_LINE_DELAY", "0")
    path = write_planted(tmp_path, planted_quiz(40, 0.3, seed=5))
    common = [
        "vet", str(path), "--no-tui", "--judge", "simulated", "--sim-latency", "0",
        "--fail-on", "never", "--db", str(tmp_path / "runs.db"),
    ]  # fmt: skip
    assert main([*common, "--prior", "auto", "-o", str(tmp_path / "auto.json")]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if ": prior auto " in x)
    assert line.endswith("· from this quiz (the SIMULATED judge's set rates)")
    report = json.loads((tmp_path / "auto.json").read_text(encoding="utf-8"))
    assert f"auto {report['prior']:.2f} [" in line
    assert report["prior"] < 0.9  # about 30 % of the keys are wrong
    assert main([*common, "--prior", "0.9", "-o", str(tmp_path / "fixed.json")]) == 0
    assert ": prior " not in capsys.readouterr().err
    assert json.loads((tmp_path / "fixed.json").read_text(encoding="utf-8"))["prior"] == 0.9
