"""The Review screen (R5, review half): real review runs (simulated judges, real SQLite store,
loopback fake servers for scripted judges) and hand-made event streams, driven with Pilot."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from test_review import A, B, Judge, scripted
from textual.app import App
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static
from tui_helpers import wait_until

from quiztui.assemble.review import review_starter
from quiztui.config import load_config
from quiztui.core.quiz import Question, Quiz
from quiztui.core.review import Iteration
from quiztui.formats import load_quiz
from quiztui.pipeline.review import (
    IterationDone,
    ReviewRun,
    ReviewSettings,
    ReviewStarted,
    ReviewTextReceived,
)
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI
from quiztui.tui.review_app import ReviewApp
from quiztui.tui.screens.review import UNAVAILABLE, ReviewScreen

REPO = Path(__file__).resolve().parents[1]
PLANTED = REPO / "sample_quizzes" / "planted_errors.json"
SIZE = (120, 40)
MARKUP = "Which tag is [bold]x[/] and [link=x]y, not [/bold]?"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "review.sqlite") as s:
        yield s


def plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def painted(widget: Widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def rows(screen: ReviewScreen) -> list[dict[str, str]]:
    table = screen.table
    columns = [str(c.key.value) for c in table.ordered_columns]
    return [
        dict(zip(columns, (plain(c) for c in table.get_row_at(i)), strict=True))
        for i in range(table.row_count)
    ]


def header(screen: ReviewScreen) -> str:
    return plain(screen.query_one("#review-header", Static).content)


def pane(screen: ReviewScreen) -> str:
    return painted(screen.query_one("#review-pane-body"))


def body_text(screen: ReviewScreen) -> str:
    """The whole trajectory pane (not just what is scrolled into view), as plain text."""
    from rich.console import Console

    console = Console(width=116, record=True, file=io.StringIO())
    console.print(screen.query_one("#review-pane-body", Static).content)
    return console.export_text()


async def settled(pilot: Any, screen: ReviewScreen) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen.flush()
    await pilot.pause()


def review_app(start: Any, quiz: Quiz | None = None, **kwargs: Any) -> ReviewApp:
    screen = ReviewScreen(quiz or load_quiz(PLANTED), start, flush_interval=0.02, **kwargs)
    return ReviewApp(screen)


async def test_rows_fill_with_ratings_convergence_and_the_rewrite_flag(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZTUI_REVIEW_LOW_SCORE", "3")
    app = review_app(review_starter(load_config(), store), low_score=3)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        await settled(pilot, screen)
        assert screen.progress.status == "finished"
        shown = rows(screen)
        assert [r["num"] for r in shown] == [str(i) for i in range(1, 13)]
        for row, record in zip(shown, screen.records.values(), strict=True):
            o = record.outcome
            assert o is not None and o.scores is not None
            assert [row[k] for k in ("gram", "appr", "rel", "nov", "cplx")] == list(
                map(str, o.scores)
            )
            expected = f"yes @{o.converged_at}" if o.converged else f"no ({len(o.iterations)})"
            assert row["converged"] == expected
            assert (row["rewrite"] == "REWRITE") == (min(o.scores[:3]) <= 3)
        low = next(k for k, r in screen.records.items() if r.rewrite)
        assert "red" in str(screen.table.get_cell(low, "rewrite").style)
        top = header(screen)
        summary = screen.progress.summary
        assert summary is not None
        assert "SIMULATED" in top and "mode feedback" in top and "rated 12/12" in top
        assert f"converged {summary.converged} · not converged {summary.not_converged}" in top
        # The stored run matches the screen.
        run = store.reviews.list_runs()[0]
        stored = {o.question_id: o for _, _, o, _ in store.reviews.outcomes(run.id)}
        assert {k: r.outcome for k, r in screen.records.items()} == stored


async def test_the_trajectory_follows_the_cursor_and_enter_reads_it(store: Store) -> None:
    app = review_app(review_starter(load_config(), store))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        await settled(pilot, screen)
        first = pane(screen)
        assert "1. What is the capital of Australia?" in first
        assert "J1" in first and "J2" in first and "strengths" in first and "flaws" in first
        await pilot.press("j")
        await pilot.pause()
        record = screen.records["q2"]
        text = pane(screen)
        assert "2. What is the chemical symbol for sodium?" in text
        assert record.outcome is not None
        lines = [ln for ln in text.splitlines() if ln.strip().startswith(("1 ", "2 ", "3 "))]
        assert len(lines) >= 3  # one row per iteration
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is screen.query_one("#review-pane")
        assert "raw reply" not in body_text(screen)
        await pilot.press("v")  # raw replies
        await pilot.pause()
        assert "raw replies shown" in plain(screen.query_one("#review-pane-title", Static).content)
        raw = body_text(screen)
        assert "raw reply, iteration 1 (J1" in raw and "Grammaticality:" in raw
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is screen.table and app.screen is screen
        await pilot.press("s")
        await pilot.pause()
        summary = pane(screen)
        assert "mean final scores" in summary and "No human ratings" in summary


async def test_mode_switches_for_the_next_run(store: Store) -> None:
    app = review_app(review_starter(load_config(), store, limit=3), limit=3)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        await settled(pilot, screen)
        assert len(rows(screen)) == 3
        await pilot.press("m")
        await pilot.pause()
        assert "→ direct next run" in header(screen)
        await pilot.press("r")
        await settled(pilot, screen)
        assert "mode direct" in header(screen) and "→" not in header(screen)
        assert {r["converged"] for r in rows(screen)} == {"—"}
        assert all(len(r.iterations) == 1 for r in screen.records.values())
        assert [r.mode for r in store.reviews.list_runs()] == ["direct", "feedback"]


async def test_an_unparsed_iteration_shows_its_reason_and_the_loop_goes_on() -> None:
    """Over HTTP: J2's first reply never parses; the trajectory says so, the row still converges."""
    quiz = Quiz(title="t", questions=(Question(id="q1", text="Q?", options=("a", "b"), key=0),))
    with (
        FakeOpenAI(responder=Judge(scripted(A))) as s1,
        FakeOpenAI(responder=Judge("No scores from me.", "Still none.", scripted(A))) as s2,
    ):

        async def start(q: Quiz, mode: str) -> AsyncIterator[Any]:
            retry = RetryPolicy(max_retries=0)
            p1 = OpenAICompatProvider(base_url=s1.base_url, model="j1", retry=retry)
            p2 = OpenAICompatProvider(base_url=s2.base_url, model="j2", retry=retry)
            try:
                run = ReviewRun(q, ReviewSettings(mode=mode), p1, provider2=p2)
                async for event in run.events():
                    yield event
            finally:
                await p1.aclose()
                await p2.aclose()

        app = review_app(start, quiz)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.home
            await settled(pilot, screen)
            assert rows(screen)[0]["converged"] == "yes @5"
            text = pane(screen)
            assert "UNPARSED: no scores in the reply" in " ".join(text.split())
            assert "retries and re-asks 1" in header(screen)


async def test_text_is_buffered_and_markup_shows_literally() -> None:
    """50 streamed pieces and an iteration: nothing on screen until a flush; then one update per
    changed cell. Quiz text and reply text with markup are shown as typed."""
    quiz = Quiz(
        title="[red]t[/red]",
        questions=(Question(id="q1", text=MARKUP, options=("[b]a[/b]", "b"), key=0),),
    )
    release = asyncio.Event()

    async def stream(q: Quiz, mode: str) -> AsyncIterator[Any]:
        yield ReviewStarted(None, mode, 1, "judge [bold]one[/]", "judge two", False, None, 5)
        for i in range(50):
            yield ReviewTextReceived("q1", 1, 1, f"w{i} ")
        scores_text = "[/bold] sneaky"
        yield IterationDone("q1", Iteration(1, 1, "m", B, (scores_text,), ("[link=x]flaw",)))
        yield ReviewTextReceived("q1", 2, 2, "J2 says [i]")
        await release.wait()

    screen = ReviewScreen(quiz, stream, flush_interval=60)
    async with ReviewApp(screen).run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen.records["q1"].live == (2, 2), what="J2's reply")
        record = screen.records["q1"]
        assert len(record.iterations) == 1 and record.live == (2, 2)
        assert rows(screen)[0]["converged"] == "waiting"  # recorded, not yet shown
        calls: list[object] = []
        original = screen.table.update_cell

        def counting(*args: Any, **kwargs: Any) -> None:
            calls.append(args)
            original(*args, **kwargs)

        screen.table.update_cell = counting  # type: ignore[method-assign]
        screen.flush()
        assert rows(screen)[0]["converged"] == "J2 #2/5"
        assert len(calls) == 1  # only the converged cell changed
        await pilot.pause()
        assert MARKUP in painted(screen.table)
        text = " ".join(pane(screen).split())
        assert "[/bold] sneaky" in text and "[link=x]flaw" in text
        assert "J2 writing iteration 2: J2 says [i]" in text
        assert "judge [bold]one[/]" in header(screen)
        release.set()
        await settled(pilot, screen)
        assert rows(screen)[0]["converged"] == "not run"


async def test_cancel_keeps_what_was_reviewed_and_errors_are_notified() -> None:
    release = asyncio.Event()

    async def stream(q: Quiz, mode: str) -> AsyncIterator[Any]:
        yield ReviewStarted(None, mode, 2, "judge", None, True, None, 1)
        await release.wait()
        yield ReviewTextReceived("q1", 1, 1, "x")

    quiz = load_quiz(PLANTED)
    screen = ReviewScreen(quiz, stream, flush_interval=0.02, limit=2, mode="direct")
    async with ReviewApp(screen).run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen.judge_labels[0], what="ReviewStarted")
        assert screen.running and "[running]" in header(screen)
        await pilot.press("x")
        await settled(pilot, screen)
        assert screen.progress.status == "cancelled"
        assert {r["converged"] for r in rows(screen)} == {"not run"}

    async def broken(q: Quiz, mode: str) -> AsyncIterator[Any]:
        yield ReviewStarted(None, mode, 1, "judge", None, True, None, 1)
        raise RuntimeError("boom")

    screen = ReviewScreen(quiz, broken, flush_interval=0.02)
    async with ReviewApp(screen).run_test(size=SIZE) as pilot:
        await settled(pilot, screen)
        assert screen.progress.status == "failed" and screen.progress.error == "RuntimeError: boom"
        assert any("boom" in n.message for n in pilot.app._notifications)

    screen = ReviewScreen(quiz, None)
    async with ReviewApp(screen).run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any(n.message == UNAVAILABLE for n in pilot.app._notifications)
        assert not screen.running


async def test_quit_asks_while_a_review_runs() -> None:
    from quiztui.tui.screens.confirm import ConfirmQuitScreen

    release = asyncio.Event()

    async def stream(q: Quiz, mode: str) -> AsyncIterator[Any]:
        yield ReviewStarted(None, mode, 1, "judge", None, True, None, 1)
        await release.wait()

    app = review_app(stream)
    async with app.run_test(size=SIZE) as pilot:
        home = app.home
        assert isinstance(home, ReviewScreen)
        await wait_until(pilot, lambda: home.judge_labels[0], what="ReviewStarted")
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        release.set()


async def test_the_screen_can_be_pushed_over_another_app_and_esc_goes_back(store: Store) -> None:
    """How the vet app opens it: push ``ReviewScreen(quiz, start, ...)``; esc dismisses it."""
    quiz = load_quiz(PLANTED)

    class Host(App[None]):
        def on_mount(self) -> None:
            start = review_starter(load_config(), store, limit=2)
            self.push_screen(ReviewScreen(quiz, start, limit=2, flush_interval=0.02))

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await settled(pilot, screen)
        assert screen.progress.status == "finished" and len(rows(screen)) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ReviewScreen)


def test_review_bindings_have_ids_unlike_any_other() -> None:
    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.screens.calibrate import CalibrateScreen
    from quiztui.tui.screens.confirm import ConfirmQuitScreen
    from quiztui.tui.screens.grade import GradeScreen
    from quiztui.tui.screens.metrics import MetricsScreen
    from quiztui.tui.screens.vet import VetScreen
    from quiztui.tui.widgets.tables import NavTable

    others = (QuiztuiApp, VetScreen, ConfirmQuitScreen, CalibrateScreen, MetricsScreen)
    others += (GradeScreen, NavTable)  # type: ignore[assignment]
    ids = [b.id for cls in others for b in cls.BINDINGS]  # type: ignore[union-attr]
    ours = ReviewScreen.BINDINGS
    for binding in ours:
        assert isinstance(binding, Binding) and binding.id and binding.id not in ids
    assert len({b.id for b in ours}) == len(ours)  # type: ignore[union-attr]
    assert {b.id for b in ReviewApp.BINDINGS} <= set(ids)  # type: ignore[union-attr]
