"""Issue 27 items 5 and 7: the SIMULATED judge said honestly. With no judge configured its state
says where its verdicts come from (the quiz's own key, or its truth file), that it cannot find
that quiz's errors, the one step to a real judge and ``lint`` as the offline check; its own error
(by design) is worded apart from the TPR/TNR a run scores with."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from tui_helpers import wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.core.figures import judge_rates_text
from quiztui.formats import load_quiz
from quiztui.providers.factory import build_provider
from quiztui.store import Store

PLANTED = REPO / "sample_quizzes" / "planted_errors.json"


def _keyed_only(tmp_path: Path) -> Path:
    """The planted quiz without its truth file: the simulated judge has only the key."""
    path = tmp_path / "bio.json"
    shutil.copy(PLANTED, path)
    return path


def headless_said(tmp_path: Path, quiz: Path, *flags: str) -> str:
    """A headless simulated vet of ``quiz`` in a real process: its stderr on one line."""
    out = subprocess.run(
        [sys.executable, "-m", "quiztui", "vet", str(quiz), "--no-tui", "--sim-latency", "0"]
        + [*flags, "--db", str(tmp_path / "runs.db"), "-o", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode in (0, 1), out.stderr
    return " ".join(out.stderr.split())


def test_a_headless_simulated_run_says_what_its_verdicts_are_and_the_step_to_a_real_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUIZTUI_JUDGE_PROVIDER")  # no judge configured: "auto" falls back
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    said = headless_said(tmp_path, _keyed_only(tmp_path))
    assert "answers from the quiz's own key, not a model: it cannot find this quiz's errors" in said
    assert "set an API key" in said and "start a local server" in said
    assert "Offline check: quiztui lint bio.json" in said
    assert said.count("No judge configured") == 1  # fallen back to: none was configured


def test_a_simulated_judge_asked_for_is_not_worded_as_a_missing_one(tmp_path: Path) -> None:
    said = headless_said(tmp_path, _keyed_only(tmp_path), "--judge", "simulated")
    assert "No judge configured" not in said
    assert "Simulated judge chosen: the SIMULATED judge answers from the quiz's own key" in said
    assert "set an API key" in said  # the step to a real judge all the same


def test_with_a_truth_file_it_says_the_truth_file_names_the_errors(tmp_path: Path) -> None:
    said = headless_said(tmp_path, PLANTED)
    assert "answers from the quiz's truth file, not a model" in said


async def test_the_tui_says_it_when_it_opens_and_keeps_it_on_the_header(tmp_path: Path) -> None:
    from quiztui.tui.widgets.header import RunHeader

    quiz_path = _keyed_only(tmp_path)
    config = load_config()

    def open_app():  # type: ignore[no-untyped-def]
        store = Store(config.db_path())
        quiz = load_quiz(quiz_path)
        return build_vet_app(config, store, quiz, vet_runs(config, quiz, store, None)), store

    app, store = await asyncio.to_thread(open_app)
    try:
        async with app.run_test(size=(80, 24)) as pilot:

            def said() -> str:
                return " ".join(n.message for n in app._notifications)

            await wait_until(pilot, lambda: "SIMULATED" in said(), what="the SIMULATED note")
            assert "cannot find this quiz's errors" in said()
            assert "API key" in said() and "quiztui lint bio.json" in said()
            tooltip = app.vet_screen.query_one(RunHeader).tooltip
            assert isinstance(tooltip, str) and "cannot find this quiz's errors" in tooltip
    finally:
        store.close()


def test_the_simulated_judges_own_error_is_not_worded_as_the_rates_it_is_scored_with() -> None:
    # Today: "SIMULATED judge (TPR 0.95, …)" beside "TPR 0.90 · TNR 0.90 · uncalibrated".
    config = load_config()
    provider = build_provider(config, load_quiz(PLANTED))
    label = provider.label
    scored = judge_rates_text(0.9, 0.9, None, None, "uncalibrated")
    assert "TPR" not in label and "TNR" not in label
    assert "wrong on 5% of true and 5% of false assertions by design" in label
    assert scored.startswith("TPR 0.90 · TNR 0.90")
