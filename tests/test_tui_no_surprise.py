"""Nothing lost, nothing paid by surprise (issue 20 item 4, K4).

Real components: the vet app built as ``quiztui QUIZ`` builds it (``cli/vet.build_vet_app``)
against the loopback fake OpenAI server, a real SQLite store and a real quiz file. Quitting with
an unsaved edit asks save / discard / cancel, during a run too; a paid judge's run does not start
until ``r`` (``--autostart`` / ``[ui] autostart`` skip the wait); opening review twice sends
nothing the second time.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_edit_rejudge import PLANTED, edit_option
from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli.vet import build_vet_app
from quiztui.config import Config, load_config
from quiztui.formats import load_quiz
from quiztui.simulate.vet import truth_table
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.confirm import SaveQuitScreen
from quiztui.tui.widgets.header import RunHeader

SIZE = (120, 40)


@pytest.fixture
def quiz_path(tmp_path: Path) -> Path:
    path = tmp_path / "planted.json"
    shutil.copy(PLANTED, path)
    return path


@pytest.fixture
def server(quiz_path: Path) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(truth_table(load_quiz(quiz_path))) as fake:
        yield fake


def paid_config(server: FakeOpenAI, *, cache: bool = True, **ui: object) -> Config:
    config = load_config(environ={})
    config = config.model_copy(update={"vet": config.vet.model_copy(update={"cache": cache})})
    judge = config.judge.model_copy(
        update={
            "provider": "openai-compat",
            "base_url": server.base_url,
            "model": "fake-judge",
            "concurrency": 1,
            "logprobs": "off",
        }
    )
    return config.model_copy(update={"judge": judge, "ui": config.ui.model_copy(update=ui)})


def paid_app(
    quiz_path: Path,
    server: FakeOpenAI,
    store: Store,
    *,
    flag: bool = False,
    cache: bool = True,
    **ui: object,
) -> QuiztuiApp:
    """``flag``: --autostart; ``cache``: [vet] cache; ``ui``: the [ui] table's values."""
    config = paid_config(server, cache=cache, **ui)
    quiz = load_quiz(quiz_path)
    runs = vet_runs(config, quiz, store, None)
    app = build_vet_app(config, store, quiz, runs, autostart=flag)
    assert isinstance(app, QuiztuiApp)
    return app


def chats(server: FakeOpenAI) -> list[str]:
    """The chat requests the server got (what a paid judge bills); the provider's probes of
    ``/models`` and ``/tokenize`` are not judging."""
    return [r.path for r in server.requests if r.path.endswith("/chat/completions")]


def header_text(app: QuiztuiApp) -> str:
    return str(app.vet_screen.query_one(RunHeader).render())


async def idle(pilot: Pilot[None]) -> None:
    """Let the app settle: its workers (lint) done, a few frames drawn."""
    await pilot.app.workers.wait_for_complete()
    for _ in range(3):
        await pilot.pause()


# -- a paid judge waits for r ---------------------------------------------------------------------


async def test_a_paid_judge_shows_the_estimate_and_sends_nothing_until_r(
    quiz_path: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    with Store(tmp_path / "runs.db") as store:
        app = paid_app(quiz_path, server, store)
        async with app.run_test(size=SIZE) as pilot:
            await idle(pilot)
            assert chats(server) == [] and app.vet_screen.run_status == "idle"
            # 48 assertions in batches of 20; estimated in a worker thread, nothing sent.
            await wait_until(pilot, lambda: "estimate: 3 requests" in header_text(app))
            header = header_text(app)
            assert "fake-judge" in header and "[idle] r starts" in header and "cost" in header
            assert chats(server) == []
            await pilot.press("r")
            await settled(pilot)
            assert app.vet_screen.run_status == "finished"
    assert len(chats(server)) >= 3


@pytest.mark.parametrize("how", ["--autostart", "[ui] autostart"])
async def test_autostart_starts_a_paid_run_at_once(
    quiz_path: Path, server: FakeOpenAI, tmp_path: Path, how: str
) -> None:
    with Store(tmp_path / "runs.db") as store:
        if how == "--autostart":
            app = paid_app(quiz_path, server, store, flag=True)
        else:
            app = paid_app(quiz_path, server, store, autostart=True)
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            assert app.vet_screen.run_status == "finished"
    assert chats(server)


# -- quitting with unsaved edits -----------------------------------------------------------------


@pytest.mark.parametrize("answer", ["c", "escape", "s", "d"])
async def test_quitting_with_an_unsaved_edit_asks_save_discard_or_cancel(
    quiz_path: Path, server: FakeOpenAI, tmp_path: Path, answer: str
) -> None:
    original = quiz_path.read_text(encoding="utf-8")
    with Store(tmp_path / "runs.db") as store:
        app = paid_app(quiz_path, server, store, flag=True)
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            await edit_option(pilot, 0, 0, "Sydney Harbour")
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, SaveQuitScreen), what="ask")
            text = str(app.screen.query_one("#confirm-text").render())
            assert "1 edited question(s) not written to planted.json" in text
            await pilot.press(answer)
            await pilot.pause()
            stayed = app.is_running and app.screen is app.vet_screen
            unsaved = app.vet_screen.unsaved
    if answer in ("c", "escape"):
        assert stayed and unsaved == 1
        assert quiz_path.read_text(encoding="utf-8") == original
    elif answer == "s":
        assert not stayed and "Sydney Harbour" in quiz_path.read_text(encoding="utf-8")
        assert (tmp_path / "planted.json.bak").read_text(encoding="utf-8") == original
    else:
        assert not stayed and quiz_path.read_text(encoding="utf-8") == original


async def test_quitting_during_a_run_with_an_unsaved_edit_asks_too(
    quiz_path: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    with Store(tmp_path / "runs.db") as store:
        # No verdict cache: the second run asks the server again (and so is still running).
        app = paid_app(quiz_path, server, store, flag=True, cache=False)
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            await edit_option(pilot, 0, 0, "Sydney Harbour")
            server.latency = 0.5  # the next run's requests wait: it is still running at q
            await pilot.press("r")
            await wait_until(pilot, lambda: app.vet_screen.running, what="the second run")
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, SaveQuitScreen), what="ask")
            text = str(app.screen.query_one("#confirm-text").render())
            assert text.startswith("A run is in progress. 1 edited question(s) not written")
            await pilot.press("s")
            await pilot.pause()
            assert not app.is_running
    assert "Sydney Harbour" in quiz_path.read_text(encoding="utf-8")


# -- review and robustness: nothing sent on opening; r asks with what it will send -------------


@pytest.mark.parametrize(
    ("key", "screen", "asked"),
    [
        ("v", "ReviewScreen", "Quality ratings of 12 questions"),
        ("p", "RobustnessScreen", "Robustness"),
    ],
)
async def test_a_paid_tool_asks_before_it_runs_and_opening_it_again_sends_nothing(
    quiz_path: Path, server: FakeOpenAI, tmp_path: Path, key: str, screen: str, asked: str
) -> None:
    from quiztui.tui.screens.confirm import ConfirmQuitScreen

    with Store(tmp_path / "runs.db") as store:
        app = paid_app(quiz_path, server, store, flag=True)
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            vetted = len(chats(server))
            await pilot.press(key)
            await wait_until(pilot, lambda: type(app.screen).__name__ == screen, what=screen)
            await idle(pilot)
            assert len(chats(server)) == vetted  # opening sends nothing
            tool = app.screen
            await pilot.press("r")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmQuitScreen), what="ask")
            question = str(app.screen.query_one("#confirm-text").render())
            assert question.startswith(asked) and "fake-judge" in question and "paid" in question
            await pilot.press("y")
            await wait_until(pilot, lambda: app.screen is tool, what="back to the tool")
            await wait_until(pilot, lambda: tool.run_status == "finished", what="the tool's run")
            ran = len(chats(server))
            assert ran > vetted
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.vet_screen, what="home")
            await pilot.press(key)
            await wait_until(pilot, lambda: app.screen is tool, what="the same screen again")
            await idle(pilot)
            assert tool.run_status == "finished"  # its results are still there
    assert len(chats(server)) == ran  # opening it again sent nothing


@pytest.mark.parametrize(("key", "screen"), [("p", "RobustnessScreen"), ("v", "ReviewScreen")])
async def test_a_stored_run_is_shown_on_the_next_launch_and_costs_nothing(
    quiz_path: Path, server: FakeOpenAI, tmp_path: Path, key: str, screen: str
) -> None:
    # Item 4: "Review and robustness results are shown from the store when they exist".
    from quiztui.tui.screens.confirm import ConfirmQuitScreen

    def shown(app: QuiztuiApp) -> bool:
        return type(app.screen).__name__ == screen

    def results(tool: object) -> dict[str, object]:
        records = tool.records  # type: ignore[attr-defined]
        return {
            qid: getattr(r, "result", None) or getattr(r, "outcome", None)
            for qid, r in records.items()
        }

    with Store(tmp_path / "runs.db") as store:
        app = paid_app(quiz_path, server, store, flag=True)
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            await pilot.press(key)
            await wait_until(pilot, lambda: shown(app), what=screen)
            tool = app.screen
            assert tool.stored_run is None  # nothing stored yet
            await pilot.press("r")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmQuitScreen), what="ask")
            await pilot.press("y")
            await wait_until(pilot, lambda: tool.run_status == "finished", what="run")
            measured = results(tool)
        ran = len(chats(server))
        first = (store.robustness.runs() if key == "p" else store.reviews.list_runs())[0]
        # The next launch, same quiz, same judge: the stored run fills the screen, nothing sent.
        app = paid_app(quiz_path, server, store, flag=False)
        async with app.run_test(size=SIZE) as pilot:
            await idle(pilot)
            await pilot.press(key)
            await wait_until(pilot, lambda: shown(app), what=screen)
            await idle(pilot)
            tool = app.screen
            assert tool.stored_run == first.id
            assert tool.run_status == "finished"
            assert results(tool) == measured and all(measured.values())
            assert tool.progress.summary is not None
            header = next(
                str(w.render()) for w in tool.query(Static) if (w.id or "").endswith("header")
            )
            assert f"stored run #{first.id} · r runs it again" in header
    assert len(chats(server)) == ran


async def test_a_cancelled_run_resumes_where_it_stopped_and_pays_for_the_rest_only(
    quiz_path: Path, tmp_path: Path
) -> None:
    # Item 4: "A cancelled run resumes from where it stopped." r after x asks only for the
    # assertions the cancelled run did not record; the recorded ones come from the verdict cache.
    quiz = load_quiz(quiz_path)
    total = sum(q.n for q in quiz.questions)
    with FakeOpenAI(truth_table(quiz), latency=0.05) as slow, Store(tmp_path / "runs.db") as store:
        config = paid_config(slow)
        config = config.model_copy(update={"vet": config.vet.model_copy(update={"batch_size": 4})})
        runs = vet_runs(config, quiz, store, None)
        app = build_vet_app(config, store, quiz, runs, autostart=True)
        assert isinstance(app, QuiztuiApp)
        async with app.run_test(size=SIZE) as pilot:
            state = app.vet_screen.state
            await wait_until(pilot, lambda: len(chats(slow)) >= 3, what="three requests")
            await pilot.press("x")
            await wait_until(pilot, lambda: state.status == "cancelled", what="cancelled")
            recorded = {
                (a.question_id, a.option_index)
                for a in state.assertions.values()
                if a.verdict is not None
            }
            assert 0 < len(recorded) < total
            asked_before = sum(slow.asked_texts().values())
            await pilot.press("r")
            await wait_until(
                pilot, lambda: app.vet_screen.state.status == "finished", what="the second run"
            )
            state = app.vet_screen.state  # r starts a fresh view of the run
            asked_again = sum(slow.asked_texts().values()) - asked_before
            cached = sum(a.cached for a in state.assertions.values())
            judged = sum(a.verdict is not None for a in state.assertions.values())
    assert judged == total
    assert cached >= len(recorded)  # every verdict the cancelled run recorded is reused
    assert asked_again == total - cached  # and only the rest is paid for
