"""``panel --save-profiles``: a usable structured panel fit kept as judge profiles (issue 21 item
2: a fit that is not usable "is not offered as a profile"; a usable one is).

With no gold labels the panel's fitted rates are the best a user has. Each judge's profile keeps
the fit's effective counts (core/panel_fit: the fit's precision from the observed information),
so it shows the fit's own intervals, and a later ``vet`` with that judge alone scores with it,
labelled ``profile #N panel fit DATE``. Real SQLite files, simulated judges.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pipeline_helpers import make_quiz

from quiztui.cli import main
from quiztui.pipeline.panel import MIN_PANEL_COUNT, PanelFinished, PanelRun
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table
from quiztui.store import Store

JUDGES = ((0.92, 0.90), (0.85, 0.94), (0.95, 0.85))


def finish(quiz, providers, db: Path, model: str = "structured") -> PanelFinished:  # type: ignore[no-untyped-def]
    async def go() -> PanelFinished:
        with Store(db) as store:
            run = PanelRun(
                quiz,
                providers,
                store,
                load_prompt("judge_assertions"),
                VetSettings(use_cache=False),
                model=model,
                save_profiles=True,
            )
            events = [e async for e in run.events()]
        assert isinstance(events[-1], PanelFinished)
        return events[-1]

    return asyncio.run(go())


def judges(quiz, rates=JUDGES):  # type: ignore[no-untyped-def]
    truth = truth_table(quiz)
    return [
        SimulatedProvider(truth, tpr=tpr, tnr=tnr, seed=10 + i)
        for i, (tpr, tnr) in enumerate(rates)
    ]


def test_a_usable_fit_is_saved_as_each_judges_profile_with_the_fits_intervals(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(300, wrong_every=10)
    providers = judges(quiz)
    finished = finish(quiz, providers, tmp_path / "q.db")
    assert finished.summary.usable and finished.not_saved == ()
    assert len(finished.profiles) == 3
    prompt = load_prompt("judge_assertions")
    with Store(tmp_path / "q.db") as store:
        for provider, estimate, profile in zip(
            providers, finished.summary.judges, finished.profiles, strict=True
        ):
            assert profile.gold == "panel fit (structured) of 3 judges on arith: 300 questions"
            assert profile.from_panel and profile.run_id == estimate.run_id
            # the fit's effective counts, so the same intervals and (to rounding) the same rates
            c = profile.confusion
            assert (c.tp, c.tp + c.fn) == estimate.tpr_counts
            assert (c.tn, c.tn + c.fp) == estimate.tnr_counts
            assert profile.tpr_ci == estimate.tpr_ci and profile.tnr_ci == estimate.tnr_ci
            assert abs(profile.tpr - estimate.tpr) < 0.002
            assert abs(profile.tnr - estimate.tnr) < 0.002
            assert min(c.tp + c.fn, c.tn + c.fp) >= MIN_PANEL_COUNT
            # a later vet of this set-up finds it, and says where its rates come from
            found = store.profiles.match(
                provider=provider.name,
                model=provider.model,
                prompt_hash=prompt.hash,
                batch_size=20,
                mode="assertion",
            )
            assert found is not None and found.id == profile.id
            assert found.accuracy().label.startswith(f"profile #{profile.id} panel fit 20")


def test_a_fit_that_is_not_usable_saves_nothing(tmp_path: Path) -> None:
    quiz = make_quiz(300)
    finished = finish(quiz, judges(quiz, ((1.0, 0.0), (1.0, 0.0))), tmp_path / "q.db")
    assert not finished.summary.usable and finished.profiles == ()
    assert finished.not_saved[0].startswith("not saved: the fit is not usable (")
    with Store(tmp_path / "q.db") as store:
        assert store.profiles.list() == []


def test_small_panels_twins_and_the_per_assertion_fit_save_nothing(tmp_path: Path) -> None:
    small = make_quiz(12)
    finished = finish(small, judges(small), tmp_path / "a.db")
    assert finished.profiles == () and len(finished.not_saved) == 3
    assert all("rest on too few verdicts" in line for line in finished.not_saved)

    quiz = make_quiz(300, wrong_every=10)
    twins = judges(quiz, ((0.9, 0.9), (0.9, 0.9), (0.85, 0.94)))  # 1 and 2: one set-up
    finished = finish(quiz, twins, tmp_path / "b.db")
    assert [p.model for p in finished.profiles] == [twins[2].model]
    assert finished.not_saved == (
        "judge 1: not saved: the same set-up as judge 2 (repeated samples of one model share"
        " its blind spots)",
        "judge 2: not saved: the same set-up as judge 1 (repeated samples of one model share"
        " its blind spots)",
    )

    finished = finish(quiz, judges(quiz), tmp_path / "c.db", model="dawid-skene")
    assert finished.profiles == ()
    assert finished.not_saved == (
        "not saved: judge profiles come from the structured fit only (--fit structured)",
    )


def test_the_cli_saves_them_and_a_later_vet_scores_with_the_same_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("QUIZTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("QUIZTUI_JUDGE_PROVIDER", raising=False)
    quiz = make_quiz(300, wrong_every=10)
    path = tmp_path / "arith.json"
    path.write_text(
        json.dumps(
            [
                {"question": q.text, "responses": list(q.options), "correct": q.options[q.key]}
                for q in quiz.questions
            ]
        ),
        encoding="utf-8",
    )
    members = [
        a for tpr, tnr in JUDGES for a in ("--member", f"simulated:tpr={tpr},tnr={tnr},seed=3")
    ]
    assert main(["panel", str(path), *members, "--fit", "structured", "--save-profiles"]) == 0
    err = capsys.readouterr().err
    saved = [line for line in err.splitlines() if "saved judge profile #" in line]
    assert len(saved) == 3, err
    second = saved[1].split(": ", 2)[2]  # the rates of judge 2's profile, as vet will say them
    assert second.endswith(" · profile #2 panel fit " + second.rsplit(" ", 1)[1])
    # vet with judge 2 alone: its profile is the newest of that set-up
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "config.toml").write_text(
        "[simulated]\ntpr = 0.85\ntnr = 0.94\nseed = 3\n", encoding="utf-8"
    )
    assert main(["vet", str(path), "--no-tui", "--format", "json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["judge_rates"] == second
