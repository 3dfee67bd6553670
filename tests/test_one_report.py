"""Issue 27 item 2: one report. The TUI's export, ``quiztui report N`` and ``quiztui runs show N``
are one code path (report/stored.stored_report): the same text, with the review desk's
decisions and the quiz's lint in each."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from test_review_desk_tui import QUIZ, decide
from tui_helpers import settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli import main
from quiztui.cli.vet import build_vet_app
from quiztui.config import Config, load_config
from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.vet import VetScreen
from quiztui.tui.state import IDLE


def _simulated() -> Config:
    config = load_config()
    judge = config.judge.model_copy(update={"provider": "simulated"})
    return config.model_copy(update={"judge": judge})


def _open(config: Config, quiz_path: Path) -> tuple[QuiztuiApp, Store]:
    store = Store(config.db_path())
    quiz = load_quiz(quiz_path)
    runs = vet_runs(config, quiz, store, None)
    return build_vet_app(config, store, quiz, runs, autostart=True), store


async def test_the_tui_export_is_the_report_that_report_n_and_runs_show_n_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the export lands in the current directory: not the checkout
    quiz_path = tmp_path / "space.json"
    quiz_path.write_text(QUIZ, encoding="utf-8")
    config = _simulated()
    app, store = await asyncio.to_thread(_open, config, quiz_path)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.vet_screen
            await settled(pilot)
            if screen.state.status == IDLE:
                await pilot.press("r")
            await wait_until(pilot, lambda: screen.state.summary is not None, what="the run")
            await settled(pilot)
            summary = screen.state.summary
            assert summary is not None
            run_id = summary.run_id
            await decide(pilot, 0, "y", "checked against the textbook")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, VetScreen), what="vet")
            await settled(pilot)
            app.export_report("json")

            def toasts() -> str:
                return " ".join(n.message for n in app._notifications)

            await wait_until(pilot, lambda: "Report written" in toasts(), what="the toast")
            written = toasts()
    finally:
        store.close()
    found = re.search(r"Report written to (\S+\.json)", written)
    assert found, written
    exported = Path(found.group(1)).read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["report", str(run_id), "--format", "json"]) == 0
    reported = capsys.readouterr().out
    assert main(["runs", "show", str(run_id), "--format", "json"]) == 0
    shown = capsys.readouterr().out
    assert exported == reported == shown
    data = json.loads(exported)
    assert [r["decision"] for r in data["review"] if r["decision"]] == ["accept"]
    assert "lint" in data
    # Markdown too: report N and runs show N print the same text, decisions and lint in it.
    assert main(["report", str(run_id)]) == 0
    md = capsys.readouterr().out
    assert main(["runs", "show", str(run_id)]) == 0
    assert capsys.readouterr().out == md
    assert "checked against the textbook" in md


def test_report_of_a_run_that_stored_no_summary_is_rebuilt_as_runs_show_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from quiztui.core.quiz import Question, Quiz

    quiz = Quiz(title="t", questions=(Question(id="q1", text="1 + 1?", options=("2", "3"), key=0),))
    config = load_config()
    with Store(config.db_path()) as store:
        unfinished = store.create_run(
            quiz=quiz, provider="simulated", model="m", base_url="", judge_label="j",
            simulated=True, judge_key="k", prompt_hash="h", seed=1, batch_size=20, params={},
            order=(),
        )  # fmt: skip
    assert main(["report", str(unfinished)]) == 0
    reported = capsys.readouterr()
    assert main(["runs", "show", str(unfinished)]) == 0
    shown = capsys.readouterr()
    assert reported.out == shown.out and reported.err == shown.err
    assert "rebuilt from the verdicts stored so far" in reported.err
