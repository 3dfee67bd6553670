"""Issue 21 item 4 (T4): one figure, one name.

The judge's TPR/TNR with their intervals and source, and a partial run's "incomplete · not run: N"
wording, come from ``core/figures``; these tests render every face that shows them — the TUI
header, the metrics screen, the Runs screen, ``quiztui runs``, ``runs show`` and the Markdown,
HTML and JSON reports — from one real run in a real SQLite store, and compare the strings.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from xml.etree import ElementTree

import pytest
from report_helpers import walk
from runs_helpers import listed_runs
from textual.widgets import Static
from tui_helpers import constant_clock, settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli import main
from quiztui.cli.vet import build_vet_app
from quiztui.config import Config, load_config
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.figures import (
    is_partial,
    judge_rates_text,
    run_state_text,
)
from quiztui.formats import load_quiz
from quiztui.pipeline.events import VetEvent
from quiztui.pipeline.history import load_run
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import ChatRequest, ChatResult
from quiztui.providers.simulated import SimulatedProvider
from quiztui.report import render_report
from quiztui.store import Store
from quiztui.testing.fake_openai import truth_from_quiz
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.metrics import MetricsScreen
from quiztui.tui.screens.runs import listing_text, run_header
from quiztui.tui.services import AppServices
from quiztui.tui.widgets.header import RunHeader

QUESTIONS = [
    ("Which gas do plants take in for photosynthesis?", ["Oxygen", "Carbon dioxide", "Helium"], 1),
    ("What is the boiling point of water at sea level in °C?", ["90", "100", "110", "120"], 1),
    ("Who wrote 'Pride and Prejudice'?", ["Jane Austen", "Mary Shelley", "Emily Brontë"], 0),
    ("Which is the largest ocean?", ["Atlantic", "Indian", "Pacific", "Arctic"], 2),
    ("How many minutes are in two hours?", ["100", "120", "140", "60"], 1),
    ("What is the chemical symbol for gold?", ["Ag", "Au", "Gd", "Go"], 1),
]
WIDE = (220, 50)  # the one-line header drops its details first when narrow: show them all


def write_quiz(tmp_path: Path) -> Path:
    """A Quizaic JSON file as people write them: question, responses, the correct text."""
    rows = [
        {"question": q, "responses": options, "correct": options[key], "category": "General"}
        for q, options, key in QUESTIONS
    ]
    path = tmp_path / "general.json"
    path.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def simulated_config() -> Config:
    config = load_config()
    return config.model_copy(
        update={
            "judge": config.judge.model_copy(update={"provider": "simulated", "logprobs": "off"}),
            "simulated": config.simulated.model_copy(update={"latency": 0.0, "line_delay": 0.0}),
        }
    )


async def cli(argv: list[str]) -> int:
    """``quiztui ARGV`` in-process; in a thread, as the CLI runs its own event loop."""
    return await asyncio.to_thread(main, argv)


def header_text(app: QuiztuiApp) -> str:
    return str(app.vet_screen.query_one(RunHeader).render())


async def metrics_caption(app: QuiztuiApp, pilot: object, widget_id: str) -> str:
    await pilot.press("m")  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: isinstance(app.screen, MetricsScreen), what="metrics")
    content = app.screen.query_one(widget_id, Static).content
    return getattr(content, "plain", str(content))


def html_text(page: str) -> str:
    return " ".join(walk(page).text)


def markdown_plain(md: str) -> str:
    """Markdown as it reads: the cell escapes (``\\[``, ``\\#``) removed."""
    return re.sub(r"\\(.)", r"\1", md)


async def test_judge_rates_read_the_same_in_header_metrics_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZTUI_SIMULATED_LINE_DELAY", "0")
    db = tmp_path / "runs.db"
    calibrate = ["calibrate", "--judge", "simulated", "--sim-latency", "0", "--db", str(db)]
    assert await cli(calibrate) == 0
    capsys.readouterr()
    config = simulated_config()
    quiz = load_quiz(write_quiz(tmp_path))
    with Store(db) as store:
        runs = vet_runs(config, quiz, store, None)
        acc = runs.accuracy
        assert acc.calibrated, "the vet run did not pick up the calibration's profile"
        figure = judge_rates_text(acc.tpr, acc.tnr, acc.tpr_ci, acc.tnr_ci, acc.label)
        rate = r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]"
        profile = r"profile #\d+ measured \d{4}-\d\d-\d\d"
        assert re.fullmatch(f"TPR {rate} · TNR {rate} · {profile}", figure), figure
        app = build_vet_app(config, store, quiz, runs)
        async with app.run_test(size=WIDE) as pilot:
            await settled(pilot)
            summary = app.vet_screen.state.summary
            assert summary is not None and summary.status == "finished"
            assert figure in header_text(app)
            assert figure in await metrics_caption(app, pilot, "#bayes-caption")
        loaded = load_run(store, summary.run_id)
        assert figure in run_header(loaded).plain  # the Runs screen's view of the stored run

    assert figure in html_text(render_report(summary, "html"))
    assert figure in markdown_plain(render_report(summary, "md"))
    assert json.loads(render_report(summary, "json"))["judge_rates"] == figure
    junit = ElementTree.fromstring(render_report(summary, "junit"))
    properties = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert properties["judge_rates"] == figure
    assert await cli(["runs", "show", str(summary.run_id), "--db", str(db)]) == 0
    assert figure in markdown_plain(capsys.readouterr().out)


def test_an_uncalibrated_judge_says_so_with_its_default_rates() -> None:
    acc = JudgeAccuracy()
    text = judge_rates_text(acc.tpr, acc.tnr, acc.tpr_ci, acc.tnr_ci, acc.label)
    assert text == "TPR 0.90 · TNR 0.90 · uncalibrated defaults (not measured)"
    # A label stored before this wording carried its own copy of the rates: shown once.
    old = "profile #3: TPR 0.85 [0.83, 0.87] · TNR 0.92 [0.91, 0.93]"
    text = judge_rates_text(0.851, 0.919, (0.83, 0.87), (0.91, 0.93), old)
    assert text == "TPR 0.85 [0.83, 0.87] · TNR 0.92 [0.91, 0.93] · profile #3"


class HangingJudge(SimulatedProvider):
    """The simulated judge, except that from request ``answered + 1`` on it never replies (a
    server that stopped answering): the run can only be cancelled."""

    def __init__(self, *args: object, answered: int, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.answered = answered
        self.calls = 0

    async def complete(self, request: ChatRequest, **kwargs: object) -> ChatResult:  # type: ignore[override]
        self.calls += 1
        if self.calls > self.answered:
            await asyncio.Event().wait()
        return await super().complete(request, **kwargs)  # type: ignore[arg-type]


async def test_a_cancelled_run_reads_incomplete_the_same_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = load_quiz(write_quiz(tmp_path))
    total = sum(q.n for q in quiz.questions)  # 22 assertions
    judge = HangingJudge(truth_from_quiz(quiz), seed=5, concurrency=1, answered=2)
    settings = VetSettings(batch_size=4, concurrency=1, logprobs=False)
    db = tmp_path / "runs.db"
    with Store(db) as store:

        def start_run() -> AsyncIterator[VetEvent]:
            prompt = load_prompt("judge_assertions")
            return VetRun(quiz, judge, store, prompt, settings, JudgeAccuracy()).events()

        services = AppServices(start_run=start_run, judge_label=judge.label, simulated=True)
        app = QuiztuiApp(quiz, services, clock=constant_clock(), flush_interval=0.02)
        async with app.run_test(size=WIDE) as pilot:
            screen = app.vet_screen
            await wait_until(pilot, lambda: screen.state.done == 8, what="two batches judged")
            await wait_until(pilot, lambda: judge.calls == 3, what="the third request sent")
            await pilot.press("x")
            await wait_until(pilot, lambda: screen.state.status == "cancelled", what="cancel")
            await app.workers.wait_for_complete()
            wording = run_state_text("cancelled", total - 8)
            assert wording == "incomplete (cancelled) · not run: 14 · k/confidence partial"
            stats = screen.query_one("#stats-line", Static).content
            assert str(stats).startswith(wording + " · ")  # the vet screen's stats line
            assert f"Run {wording}" in await metrics_caption(app, pilot, "#run-caption")

        (listing,) = store.run_listings()
        assert listing.status == "cancelled" and listing.not_run == total - 8
        assert wording in listing_text(listing).plain  # the Runs screen's panel
        loaded = load_run(store, listing.id)
        assert wording in run_header(loaded).plain
        assert is_partial(loaded.summary.status, loaded.summary.not_run)

    assert await cli(["runs", "--db", str(db)]) == 0
    (run,) = [x for x in listed_runs(capsys.readouterr().out) if x.lstrip().startswith("1 ")]
    assert run.endswith("  " + wording)  # the run's last line, under its quiz and judge
    assert await cli(["runs", "show", str(listing.id), "--db", str(db)]) == 0
    md = capsys.readouterr().out
    assert f"({wording})" in md and "| k (partial) |" in md and "| confidence (partial) |" in md
    page = render_report(loaded.summary, "html")
    assert f"Run {wording}." in html_text(page) and "k/n (partial)" in html_text(page)
    assert json.loads(render_report(loaded.summary, "json"))["run_state"] == wording
    junit = ElementTree.fromstring(render_report(loaded.summary, "junit"))
    properties = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert properties["run_state"] == wording


async def test_help_and_reports_tell_the_verdicts_p_true_from_the_questions_confidence(
    tmp_path: Path,
) -> None:
    from quiztui.core.figures import CONFIDENCE_HELP, P_TRUE_HELP
    from quiztui.tui.help import HelpScreen

    quiz = load_quiz(write_quiz(tmp_path))
    judge = SimulatedProvider(truth_from_quiz(quiz), seed=5)
    with Store(tmp_path / "runs.db") as store:

        def start_run() -> AsyncIterator[VetEvent]:
            prompt = load_prompt("judge_assertions")
            settings = VetSettings(logprobs=False)
            return VetRun(quiz, judge, store, prompt, settings, JudgeAccuracy()).events()

        services = AppServices(start_run=start_run, judge_label=judge.label, simulated=True)
        app = QuiztuiApp(quiz, services, clock=constant_clock(), flush_interval=0.02)
        async with app.run_test(size=WIDE) as pilot:
            await settled(pilot)
            summary = app.vet_screen.state.summary
            await pilot.press("f1")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
            body = app.screen.query_one("#help-body", Static).content
            shown = " ".join(getattr(body, "plain", str(body)).split())
    assert summary is not None
    assert "confidence: the question's posterior" in CONFIDENCE_HELP
    assert "P(true): one verdict's probability" in P_TRUE_HELP
    for line in (CONFIDENCE_HELP, P_TRUE_HELP):
        assert line in shown
        assert line in markdown_plain(render_report(summary, "md"))
    page = render_report(summary, "html")
    assert f'title="{html.escape(CONFIDENCE_HELP)}"' in page  # the confidence column's header
