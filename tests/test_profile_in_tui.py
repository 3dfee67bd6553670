"""B4: calibrate against the fake server, then a vet run in the TUI shows the judge profile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from conftest import REPO
from tui_helpers import constant_clock, settled

from quiztui.assemble.vet import judge_accuracy
from quiztui.core.calibration import JudgeProfile
from quiztui.core.figures import judge_rates_text
from quiztui.core.quiz import Quiz
from quiztui.formats import load_quiz
from quiztui.pipeline.calibrate import CalibrationRun, ProfileMeasured, load_gold
from quiztui.pipeline.events import VetEvent
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.simulate.vet import truth_table
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.services import AppServices

SnapCompare = Callable[..., bool]
GOLD = REPO / "sample_quizzes" / "opentdb_sample.json"
QUIZ = REPO / "sample_quizzes" / "planted_errors.json"


class LoopbackProvider(OpenAICompatProvider):
    """The real provider over real HTTP; only its label hides the random loopback port."""

    @property
    def label(self) -> str:
        return f"{self.model} @ loopback fake server"


PROMPT = load_prompt("judge_assertions")
SETTINGS = VetSettings(concurrency=1, logprobs=False)


def provider(server: FakeOpenAI) -> LoopbackProvider:
    return LoopbackProvider(base_url=server.base_url, model="fake-judge", concurrency=1)


async def calibrate(server: FakeOpenAI, store: Store) -> JudgeProfile:
    run = CalibrationRun(load_gold(GOLD), provider(server), store, PROMPT, SETTINGS)
    return [e async for e in run.events() if isinstance(e, ProfileMeasured)][0].profile


def calibrated_app(
    server: FakeOpenAI, store: Store, recorded: list[VetEvent] | None = None
) -> QuiztuiApp:
    """The app as `quiztui QUIZ` builds it, after a calibration of the same judge set-up.

    With ``recorded``, the app replays those events (a real pipeline run against the fake server,
    recorded first) instead of a live run, so a snapshot does not depend on network timing.
    """
    prompt, settings = PROMPT, SETTINGS
    quiz: Quiz = load_quiz(QUIZ)
    judge = provider(server)

    async def replay() -> AsyncIterator[VetEvent]:
        for event in recorded or ():
            yield event

    def start_run() -> AsyncIterator[VetEvent]:
        if recorded is not None:
            return replay()
        accuracy = judge_accuracy(store, judge, prompt, settings)
        return VetRun(quiz, judge, store, prompt, settings, accuracy).events()

    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=start_run,
            judge_label=judge.label,
            simulated=False,
            profiles=store.profiles.list(),
        ),
        clock=constant_clock(),
        flush_interval=0.02,
    )


@pytest.fixture
def server() -> FakeOpenAI:
    truth = load_gold(GOLD).truth_by_text() | truth_table(load_quiz(QUIZ))
    with FakeOpenAI(truth, tpr=0.9, tnr=0.85, seed=3) as fake:
        yield fake


async def test_header_shows_the_profile_rates_and_intervals(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    store = Store(tmp_path / "q.db")
    try:
        profile = await calibrate(server, store)
        app = calibrated_app(server, store)
        async with app.run_test(size=(160, 40)) as pilot:
            await settled(pilot)
            screen = app.vet_screen
            header = screen.query_one("RunHeader")
            shown = str(header.render())
            # The rates the run scores with (the profile's Beta posterior means), the profile's
            # intervals and its source, in the one wording of core/figures.
            acc = profile.accuracy()
            figure = judge_rates_text(acc.tpr, acc.tnr, acc.tpr_ci, acc.tnr_ci, acc.label)
            assert f"profile #{profile.id} measured 20" in figure
            assert figure in shown
            assert "uncalibrated" not in shown
            # Every scored question carries a confidence interval from the profile's counts.
            scores = [r.score for r in screen.state.questions.values()]
            assert scores and all(s is not None and s.interval is not None for s in scores)
    finally:
        store.close()


def test_snapshot_vet_screen_with_a_profile(
    snap_compare: SnapCompare, server: FakeOpenAI, tmp_path: Path
) -> None:
    store = Store(tmp_path / "q.db")

    async def record() -> list[VetEvent]:
        await calibrate(server, store)
        judge = provider(server)
        accuracy = judge_accuracy(store, judge, PROMPT, SETTINGS)
        assert accuracy.calibrated
        run = VetRun(load_quiz(QUIZ), judge, store, PROMPT, SETTINGS, accuracy)
        return [e async for e in run.events()]

    try:
        app = calibrated_app(server, store, asyncio.run(record()))
        assert snap_compare(app, terminal_size=(120, 40), run_before=settled)
    finally:
        store.close()
