"""Multi-judge panels: member runs, Dawid–Skene without gold labels, κ, disagreements (item 5)."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from conftest import REPO
from pipeline_helpers import make_quiz

from quiztui.cli import main
from quiztui.pipeline.events import RunFinished
from quiztui.pipeline.panel import PanelFinished, PanelMemberEvent, PanelRun
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table
from quiztui.store import Store

JUDGES = ((0.95, 0.90), (0.80, 0.85), (0.70, 0.95))


def run_panel(quiz, providers, db: Path):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        with Store(db) as store:
            run = PanelRun(
                quiz,
                providers,
                store,
                load_prompt("judge_assertions"),
                VetSettings(use_cache=False),
            )
            return [e async for e in run.events()]

    return asyncio.run(go())


def test_panel_recovers_each_judge_without_gold_labels(tmp_path: Path) -> None:
    quiz = make_quiz(600, wrong_every=10)
    truth = truth_table(quiz)
    providers = [
        SimulatedProvider(truth, tpr=tpr, tnr=tnr, seed=10 + i)
        for i, (tpr, tnr) in enumerate(JUDGES)
    ]
    events = run_panel(quiz, providers, tmp_path / "q.db")
    finished = [e for e in events if isinstance(e, PanelFinished)]
    assert len(finished) == 1 and events[-1] is finished[0]
    member_runs = [
        e for e in events if isinstance(e, PanelMemberEvent) and isinstance(e.event, RunFinished)
    ]
    assert sorted(e.judge for e in member_runs) == [0, 1, 2]
    summary = finished[0].summary
    assert summary.em_converged
    for estimate, (tpr, tnr) in zip(summary.judges, JUDGES, strict=True):
        assert abs(estimate.tpr - tpr) <= 0.05, (estimate, tpr)
        assert abs(estimate.tnr - tnr) <= 0.05, (estimate, tnr)
        assert estimate.judged == 2400
    assert abs(summary.prevalence - 0.25) < 0.03
    assert len(summary.cohen) == 3 and all(0.2 < k < 0.9 for _, _, k in summary.cohen)
    assert 0.2 < summary.fleiss < 0.9
    # The panel finds the wrong keys: every 10th question's key is wrong (truth: option 0).
    wrong = {f"q{i}" for i in range(10, 601, 10)}
    by_conf = sorted(summary.questions, key=lambda q: q.confidence)
    lowest = {q.question_id for q in by_conf[: len(wrong)]}
    assert len(lowest & wrong) >= 0.9 * len(wrong)
    suggested = [
        q for q in summary.questions if q.question_id in wrong and q.suggested_option is not None
    ]
    assert sum(q.suggested_option == 0 for q in suggested) >= 0.9 * len(suggested)
    assert 0 < len(summary.disagreements) < len(summary.questions)
    # Each member is an ordinary stored run, tagged as part of a panel.
    with Store(tmp_path / "q.db") as store:
        assert {store.run_kind(e.run_id) for e in summary.judges} == {"panel"}


def test_panel_needs_two_judges(tmp_path: Path) -> None:
    quiz = make_quiz(3)
    with pytest.raises(ValueError):
        run_panel(quiz, [SimulatedProvider(truth_table(quiz))], tmp_path / "q.db")


def test_panel_cli_with_simulated_members(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = REPO / "sample_quizzes" / "planted_errors.json"
    members = [
        "--member",
        "simulated:tpr=0.9,tnr=0.9,seed=1",
        "--member",
        "simulated:tpr=0.8,tnr=0.95,seed=2",
        "--member",
        "simulated:tpr=0.95,tnr=0.8,seed=3",
    ]
    assert main(["panel", str(quiz), *members, "--fit", "structured", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["judges"]) == 3 and len(data["cohen_kappa"]) == 3
    assert all("SIMULATED" in j["label"] for j in data["judges"])
    assert not math.isnan(data["fleiss_kappa"])
    planted = {"q1", "q4", "q8", "q10"}
    flagged = {q["question_id"] for q in data["questions"] if q["confidence"] < 0.5}
    assert planted <= flagged | {q["question_id"] for q in data["questions"] if q["disagreement"]}

    assert data["model"] == "structured" and data["usable"] and data["problems"] == []
    assert data["key_right"] == pytest.approx(8 / 12, abs=0.1)  # 4 of 12 keys planted wrong

    assert main(["panel", str(quiz), *members, "--fit", "structured"]) == 0
    text = capsys.readouterr().out
    assert "Fleiss' κ" in text and "Panel fit: structured" in text
    assert all(j["rates"] in text for j in data["judges"])  # core/figures wording
    assert data["judges"][0]["rates"].endswith(" · panel fit (structured)")
    # The structured fit's rates carry their 95 % intervals, in the one wording and the JSON.
    for judge in data["judges"]:
        for rate in ("tpr", "tnr"):
            ci = judge[f"{rate}_ci"]
            if ci is not None:  # a rate at its clip on 12 questions has none
                assert ci[0] <= judge[rate] <= ci[1]
                assert (
                    f"{rate.upper()} {judge[rate]:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"
                    in (judge["rates"])
                )
    assert any(j["tpr_ci"] is not None for j in data["judges"])
    assert "log-likelihood" in text and "NOT USABLE" not in text
    assert "questions with disagreeing verdicts" in text
    # The per-assertion fit stays available by name.
    assert main(["panel", str(quiz), *members, "--fit", "dawid-skene"]) == 0
    text = capsys.readouterr().out
    assert "Dawid–Skene" in text and " · panel fit (Dawid–Skene)" in text


def test_panel_prior_auto_takes_the_fits_share_of_right_keys(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    quiz = REPO / "sample_quizzes" / "planted_errors.json"
    members = [
        arg
        for i, rates in enumerate(("tpr=0.9,tnr=0.9", "tpr=0.8,tnr=0.95", "tpr=0.95,tnr=0.8"))
        for arg in ("--member", f"simulated:{rates},seed={i + 1}")
    ]
    structured = ["--fit", "structured", "--format", "json"]
    monkeypatch.setenv("QUIZTUI_VET_PRIOR", "0.95")
    assert main(["panel", str(quiz), *members, *structured]) == 0
    fixed = json.loads(capsys.readouterr().out)
    assert fixed["prior"] == 0.95
    monkeypatch.delenv("QUIZTUI_VET_PRIOR")  # auto is the default
    assert main(["panel", str(quiz), *members, *structured]) == 0
    auto = json.loads(capsys.readouterr().out)
    assert auto["prior"] == pytest.approx(auto["key_right"]) and auto["prior"] < 0.8
    # A lower prior can only lower the confidence in each key.
    pairs = zip(fixed["questions"], auto["questions"], strict=True)
    assert all(a["confidence"] <= f["confidence"] + 1e-12 for f, a in pairs)


def test_panel_cli_says_a_degenerate_fit_is_not_usable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Judges that call every option true carry no information about which option is right.
    quiz = REPO / "sample_quizzes" / "planted_errors.json"
    members = [arg for seed in (1, 2) for arg in ("--member", f"simulated:tpr=1,tnr=0,seed={seed}")]
    members += ["--fit", "structured"]
    assert main(["panel", str(quiz), *members, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert not data["usable"]
    assert any("carries no information" in p for p in data["problems"])
    assert main(["panel", str(quiz), *members]) == 0
    text = capsys.readouterr().out
    assert "NOT USABLE as a judge profile: judge 1 carries no information" in text
    assert "uncalibrated rates" in text


def test_panel_cli_repeated_samples(capsys: pytest.CaptureFixture[str]) -> None:
    quiz = REPO / "sample_quizzes" / "planted_errors.json"
    assert main(["panel", str(quiz), "--samples", "3", "--format", "md"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("# quiztui panel: planted\\_errors")
    assert out.err.count("panel judge") == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--member", "simulated"], "at least two judges"),
        (["--samples", "1"], "--samples 1: input should be greater than or equal to 2"),
        (["--member", "a", "--member", "b", "--samples", "2"], "not both"),
        (["--member", "simulated:tpr=x", "--member", "simulated"], "tpr"),
        (["--member", "simulated:foo=1", "--member", "simulated"], "unknown simulated parameter"),
        (
            ["--member", "simulated:tpr=5", "--member", "simulated"],
            "--member simulated:tpr=5: tpr: input should be less than or equal to 1",
        ),
        (
            ["--member", "simulated:tnr=-0.5", "--member", "simulated"],
            "--member simulated:tnr=-0.5: tnr: input should be greater than or equal to 0",
        ),
    ],
)
def test_panel_cli_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = REPO / "sample_quizzes" / "planted_errors.json"
    assert main(["panel", str(quiz), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1, f"one line: {err!r}"


def _panel_on_a_terminal(tmp_path: Path, extra_env: dict[str, str]) -> str:
    """``quiztui panel`` with its stdout on a pseudo-terminal, as a user at a terminal sees it."""
    import os
    import pty
    import subprocess
    import sys

    quiz = REPO / "sample_quizzes" / "planted_errors.json"
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env |= {
        "QUIZTUI_DATA_DIR": str(tmp_path / "data"),
        "QUIZTUI_CONFIG_DIR": str(tmp_path / "config"),
        "QUIZTUI_LOG_DIR": str(tmp_path / "log"),
        **extra_env,
    }
    leader, follower = pty.openpty()
    members = [
        "--member",
        "simulated:tpr=1,tnr=0,seed=1",
        "--member",
        "simulated:tpr=1,tnr=0,seed=2",
        "--fit",
        "structured",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "quiztui", "panel", str(quiz), *members],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=120) == 0
    os.close(leader)
    return b"".join(chunks).decode("utf-8")


def test_a_panel_fit_that_is_not_usable_says_so_in_red_on_a_terminal(tmp_path: Path) -> None:
    # Two judges who call everything true carry no information: the fit must not be offered.
    out = _panel_on_a_terminal(tmp_path, {})
    lines = out.replace("\r\n", "\n").splitlines()
    alerts = [line for line in lines if "NOT USABLE" in line or "uncalibrated rates" in line]
    assert len(alerts) == 3
    assert all(line.startswith("\x1b[31m") and line.endswith("\x1b[0m") for line in alerts)
    assert "undefined (the verdicts do not vary)" in out  # κ with no variation, not "nan"
    # The only escapes are those colour codes; NO_COLOR keeps the words and drops the colour.
    assert out.count("\x1b") == 6
    plain = _panel_on_a_terminal(tmp_path, {"NO_COLOR": "1"})
    assert "\x1b" not in plain and plain.count("NOT USABLE") == 2


def test_the_default_panel_fit_lets_judges_fail_together_and_says_where_its_share_comes_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 26: the panel scores through core/judges by default. SIMULATED members' rates are
    set, so known: the quiz's 4 planted wrong keys of 12 clearly move the share off its 2 %
    default, and the report says where the share comes from (tests/test_judges.py: the rest)."""
    quiz = REPO / "sample_quizzes" / "planted_errors.json"
    members = [
        arg
        for i, rates in enumerate(("tpr=0.9,tnr=0.9", "tpr=0.8,tnr=0.95", "tpr=0.95,tnr=0.8"))
        for arg in ("--member", f"simulated:{rates},seed={i + 1}")
    ]
    assert main(["panel", str(quiz), *members, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "difficulty" and data["usable"]
    assert data["wrong_share_source"].startswith("estimated from the verdicts")
    assert data["expected_wrong"] == pytest.approx(
        sum(1 - q["confidence"] for q in data["questions"])
    )
    for q in data["questions"]:
        lo, hi = q["interval"]
        assert lo <= q["confidence"] <= hi
        assert sum(q["p_true"]) == pytest.approx(1.0)
    # the planted keys are the likeliest wrong ones
    worst = sorted(data["questions"], key=lambda q: q["confidence"])[:4]
    assert {q["question_id"] for q in worst} == {"q1", "q4", "q8", "q10"}
    assert 2 < data["expected_wrong"] < 5
    assert main(["panel", str(quiz), *members]) == 0
    assert "judges that fail together on hard questions" in capsys.readouterr().out
