"""The Grade and Benchmark screens: real grade runs (simulated judge, real SQLite store, the
loopback fake server for faults) and hand-made event streams, driven with Pilot."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_data
from rich.text import Text
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Select, Static
from tui_helpers import (
    constant_clock,
    make_quiz,
    paste,
    run_palette_command,
    stream_factory,
    wait_until,
)

from quiztui import cli
from quiztui.assemble.grade import benchmark_events, grade_events
from quiztui.config import load_config
from quiztui.core.grading import GradeItem
from quiztui.formats.answers import load_answers
from quiztui.formats.benchmarks import Benchmark, load_benchmark
from quiztui.pipeline.grade import (
    GradeRun,
    GradeSettings,
    GradeStarted,
    GradeTextReceived,
    ItemGraded,
)
from quiztui.report.grades import benchmark_rows, summary_lines
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.grade_app import GradeApp
from quiztui.tui.screens.benchmark import BenchmarkScreen
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.grade import UNAVAILABLE, GradeScreen
from quiztui.tui.screens.grade_detail import GradeDetailScreen, fact_cells
from quiztui.tui.screens.vet import VetScreen
from quiztui.tui.services import AppServices, GradeService

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_quizzes" / "answers_sample.csv"
SIZE = (120, 40)
Start = Any


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "grade.sqlite") as s:
        yield s


def real_start(store: Store) -> Start:
    """What ``quiztui grade --tui`` passes: the configured (simulated, zero-latency) judge."""
    config = load_config()

    def start(items: list[GradeItem], grader: str) -> AsyncIterator[Any]:
        return grade_events(config, store, items, "answers_sample.csv", grader)

    return start


def grade_app(
    start: Start, grader: str = "rubric10", items: list[GradeItem] | None = None, **kwargs: Any
) -> GradeApp:
    items = load_answers(SAMPLE) if items is None else items
    screen = GradeScreen(
        items, start, grader=grader, source="answers_sample.csv", flush_interval=0.02, **kwargs
    )
    return GradeApp(screen)


def plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def painted(widget: Widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def table_rows(screen: GradeScreen) -> list[dict[str, str]]:
    table = screen.table
    columns = [c.key.value for c in table.ordered_columns]
    return [
        dict(zip(columns, (plain(c) for c in table.get_row_at(i)), strict=True))
        for i in range(table.row_count)
    ]


async def settled(pilot: Pilot[None], screen: GradeScreen | BenchmarkScreen) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen.flush()
    await pilot.pause()


def header(screen: GradeScreen) -> str:
    return plain(screen.query_one("#grade-header", Static).content)


# -- the file run ---------------------------------------------------------------------------------


async def test_rows_appear_with_scores_a_header_and_the_summary(store: Store) -> None:
    app = grade_app(real_start(store), "rubric10")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, GradeScreen)
        await settled(pilot, screen)
        assert screen.progress.status == "finished"
        rows = table_rows(screen)
        assert [r["id"] for r in rows] == [f"a{i}" for i in range(1, 11)]  # file order at the end
        for row in rows:
            outcome = screen.records[f"item-{int(row['id'][1:]) - 1}"].outcome
            assert outcome is not None and outcome.raw is not None
            assert row["score"] == f"{outcome.raw:.3g}"
            assert row["label"] == f"{outcome.raw:g}/10"
        top = header(screen)
        assert "SIMULATED" in top and "rubric10" in top and "graded 10/10" in top
        assert "unscored 0" in top
        summary = screen.progress.summary
        assert summary is not None and summary.scored == 10
        shown = plain(screen.query_one("#grade-summary", Static).content)
        assert shown == "\n".join(summary_lines(summary))


async def test_streamed_reply_text_is_buffered_and_flushed_on_the_timer() -> None:
    """200 streamed pieces before a flush: no row yet; one flush shows the tail, once."""
    item = GradeItem("s1", "Why?", "Because the reference says so.", "Because.")
    release = asyncio.Event()

    async def stream(items: list[GradeItem], grader: str) -> AsyncIterator[Any]:
        yield GradeStarted(None, grader, 1, "SIMULATED grader", True, None)
        for i in range(200):
            yield GradeTextReceived(0, "s1", f"w{i} ")
        await release.wait()

    screen = GradeScreen([item], stream, grader="rubric10", flush_interval=60)
    async with GradeApp(screen).run_test(size=SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: (
                "item-0" in screen.records and screen.records["item-0"].streamed.endswith("w199 ")
            ),
            what="the 200 pieces to be recorded",
        )
        assert screen.table.row_count == 0  # buffered, not one table call per token
        calls: list[object] = []
        original = screen.table.update_cell

        def counting(*args: Any, **kwargs: Any) -> None:
            calls.append(args)
            original(*args, **kwargs)

        screen.table.update_cell = counting  # type: ignore[method-assign]
        screen.flush()
        rows = table_rows(screen)
        assert rows[0]["label"] == "grading…"
        assert rows[0]["reasoning"].endswith("w198 w199") and rows[0]["reasoning"][0] == "…"
        for piece in ("more ", "words"):
            screen._apply(
                GradeTextReceived(0, "s1", piece),
                "rubric10",
                screen.items,
                lambda s: ("item-0", (0, 0)),
            )
        screen.flush()
        assert len(calls) == 1  # two pieces, one flush: one cell update
        assert table_rows(screen)[0]["reasoning"].endswith("more words")
        release.set()
        await settled(pilot, screen)
        assert table_rows(screen)[0]["label"] == "not graded"  # the stream ended without a grade


async def test_an_unparseable_reply_is_an_unscored_row_with_the_reason() -> None:
    """The fake server garbles both tries (max_reasks 1): unscored, reason shown, never a 0."""
    from quiztui.providers.openai_compat import OpenAICompatProvider
    from quiztui.providers.retry import RetryPolicy

    items = load_answers(SAMPLE)[:2]
    with FakeOpenAI({}) as server:
        server.inject("malformed", times=2)

        async def start(batch: list[GradeItem], grader: str) -> AsyncIterator[Any]:
            provider = OpenAICompatProvider(
                base_url=server.base_url, model="fake-judge", retry=RetryPolicy(max_retries=0)
            )
            settings = GradeSettings(grader=grader, concurrency=1, max_reasks=1)
            try:
                async for event in GradeRun(batch, settings, provider=provider).events():
                    yield event
            finally:
                await provider.aclose()

        app = grade_app(start, "pass3", items)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.home
            assert isinstance(screen, GradeScreen)
            await settled(pilot, screen)
            rows = table_rows(screen)
            unscored = [r for r in rows if r["label"] == "unscored"]
            assert len(unscored) == 1 and unscored[0]["score"] == "–"
            assert "no final_verdict in the reply" in unscored[0]["reasoning"]
            key = next(k for k, r in screen.records.items() if r.outcome and not r.outcome.scored)
            cell = screen.table.get_cell(key, "label")
            assert "magenta" in str(cell.style)  # a distinct style, beside the word
            assert "unscored 1" in header(screen)
            scored = [r for r in rows if r["label"] != "unscored"]
            assert len(scored) == 1 and scored[0]["score"] != "–"

            screen.table.move_cursor(row=screen.table.get_row_index(key))
            screen.table.focus()
            await pilot.press("enter")
            await pilot.pause()
            detail = app.screen
            assert isinstance(detail, GradeDetailScreen)
            head = painted(detail.query_one("#grade-detail-head"))
            assert "UNSCORED" in head and "no final_verdict in the reply" in head
            tail = plain(detail.query_one("#grade-detail-tail", Static).content)
            assert "Hard to say" in tail and "attempts 2" in tail  # the raw reply, both tries


async def test_the_one_answer_form_adds_a_row(store: Store) -> None:
    app = grade_app(real_start(store), "lexical", items=[])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, GradeScreen)
        assert screen.query_one("#grade-form").has_class("-open")  # empty: the form is open
        assert app.focused is screen.query_one("#grade-question", Input)
        await paste(pilot, "Capital of France?")
        await pilot.press("tab")
        await paste(pilot, "Paris")
        await pilot.press("tab")
        await paste(pilot, "paris")
        await pilot.press("enter")
        await settled(pilot, screen)
        rows = table_rows(screen)
        assert rows == [
            {
                "id": "ans-1",
                "score": "1",
                "label": "EM",
                "candidate": "paris",
                "reasoning": "exact match after normalisation",
            }
        ]
        assert screen.query_one("#grade-candidate", Input).value == ""
        assert screen.records["one-1"].item.question == "Capital of France?"
        assert screen.query_one("#grade-reference", Input).value == "Paris"  # kept for the next
        assert "offline" in header(screen)
        await pilot.press("escape")  # closes the form; the app's only screen stays
        await pilot.pause()
        assert not screen.query_one("#grade-form").has_class("-open")
        assert app.screen is screen


async def test_a_single_answer_streams_into_its_own_row() -> None:
    release = asyncio.Event()

    async def stream(items: list[GradeItem], grader: str) -> AsyncIterator[Any]:
        yield GradeStarted(None, grader, 1, "SIMULATED grader", True, None)
        yield GradeTextReceived(0, items[0].id, '{"rating": 8, "explanation": "close enough')
        await release.wait()

    screen = GradeScreen([], stream, grader="rubric10", flush_interval=0.02)
    async with GradeApp(screen).run_test(size=SIZE) as pilot:
        screen.grade_one(GradeItem("ans-1", "", "Paris", "paris, France"))
        await wait_until(
            pilot,
            lambda: "one-1" in screen.records and screen.records["one-1"].streamed,
            what="the streamed reply",
        )
        screen.flush()
        assert screen.running and "[running]" in header(screen)
        rows = table_rows(screen)
        assert rows[0]["id"] == "ans-1" and rows[0]["label"] == "grading…"
        assert rows[0]["reasoning"].endswith("close enough")
        release.set()
        await settled(pilot, screen)
        assert table_rows(screen)[0]["label"] == "not graded" and not screen.running


async def test_the_form_needs_a_reference_and_a_candidate(store: Store) -> None:
    app = grade_app(real_start(store), "lexical", items=[])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, GradeScreen)
        screen.query_one("#grade-reference", Input).value = "Paris"
        screen.query_one("#grade-candidate", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is screen.query_one("#grade-candidate", Input)
        assert not app.workers and screen.table.row_count == 0


async def test_facts_detail_lists_every_fact_with_its_weight(store: Store) -> None:
    app = grade_app(real_start(store), "facts")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, GradeScreen)
        await settled(pilot, screen)
        screen.table.focus()
        await pilot.press("g", "j", "enter")  # a2: its reference has two facts
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, GradeDetailScreen)
        outcome = detail.record.outcome
        assert detail.record.item.id == "a2" and outcome is not None and len(outcome.facts) == 2
        facts = painted(detail.query_one("#grade-detail-facts"))
        for heading in ("fact", "said", "weight", "P(1)", "value"):
            assert heading in facts
        for fact in outcome.facts:
            text, said, weight, p_one, value = fact_cells(fact)
            assert fact.weight is not None and weight == f"{fact.weight:.2f}"
            line = next(ln for ln in facts.splitlines() if ln.startswith(text[:30]))
            assert line.split()[-4:] == [said, weight, p_one, value]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_markup_in_a_candidate_shows_literally(store: Store) -> None:
    app = grade_app(real_start(store), "lexical")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, GradeScreen)
        await settled(pilot, screen)
        assert "[bold]Because[/] the sea" in painted(screen.table)
        screen.table.focus()
        await pilot.press("G", "enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, GradeDetailScreen)
        assert "[bold]Because[/] the sea reflects" in painted(
            detail.query_one("#grade-detail-head")
        )


# -- grader choice, re-runs, errors ---------------------------------------------------------------


async def test_s_cycles_the_grader_and_r_grades_the_file_again(store: Store) -> None:
    app = grade_app(real_start(store), "facts")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, GradeScreen)
        await settled(pilot, screen)
        screen.table.focus()
        await pilot.press("s")
        assert screen.grader == "lexical"
        assert screen.query_one("#grade-grader", Select).value == "lexical"
        await pilot.press("r")
        await settled(pilot, screen)
        rows = table_rows(screen)
        assert len(rows) == 10 and rows[0]["label"].startswith(("EM", "F1"))
        assert all(r.grader == "lexical" for r in screen.records.values())
        assert "lexical" in header(screen) and "graded 10/10" in header(screen)


async def test_a_missing_embedding_extra_is_an_error_notification(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quiztui.embed import minilm

    def missing() -> Any:
        raise minilm.EmbedExtraMissing("onnxruntime is not installed")

    monkeypatch.setattr("quiztui.embed.load_embedder", missing)
    monkeypatch.setattr(
        "quiztui.embed.extra_missing",
        lambda: minilm.EmbedExtraMissing("onnxruntime ..."),
        raising=False,
    )
    app = grade_app(real_start(store), "embedding")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, GradeScreen)
        await settled(pilot, screen)
        assert screen.progress.status != "running"  # refused: no run started
        errors = [n for n in app._notifications if n.severity == "error"]
        assert errors and "embed extra" in errors[-1].message
        await pilot.press("s", "r")  # rubric10 (the cycle wraps): the screen still works
        await settled(pilot, screen)
        assert screen.progress.status == "finished" and screen.table.row_count == 10
        # The embedding grader again: refused before the last results are cleared.
        await pilot.press("s", "s", "s", "s")
        assert screen.grader == "embedding"
        before = len(app._notifications)
        await pilot.press("r")
        await settled(pilot, screen)
        assert screen.table.row_count == 10 and screen.progress.status == "finished"
        assert len(screen.records) == 10
        assert [n.severity for n in list(app._notifications)[before:]] == ["error"]


async def test_quit_asks_while_grading() -> None:
    gate = asyncio.Event()

    async def slow(items: list[GradeItem], grader: str) -> AsyncIterator[Any]:
        yield GradeStarted(None, grader, len(items), "SIMULATED grader", True, None)
        await gate.wait()

    app = grade_app(slow)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.home.running
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        await pilot.press("n")
        await pilot.press("x")  # cancel
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.home.running and app.home.progress.status == "cancelled"


# -- from the vet app --------------------------------------------------------------------------------


def vet_app(start_grading: Start | None) -> QuiztuiApp:
    quiz = make_quiz()
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz),
            judge_label="SIMULATED judge",
            simulated=True,
            grade=GradeService(start=start_grading),
        ),
        autorun=False,
        clock=constant_clock(),
        flush_interval=0.02,
    )


async def test_a_and_the_palette_open_the_grade_screen_from_the_vet_app(store: Store) -> None:
    app = vet_app(real_start(store))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, GradeScreen) and not screen.items
        assert screen.query_one("#grade-form").has_class("-open")
        screen.query_one("#grade-reference", Input).value = "light is faster than sound"
        screen.query_one("#grade-candidate", Input).value = "sound is slower than light"
        screen.query_one("#grade-candidate", Input).focus()
        await pilot.press("enter")
        await settled(pilot, screen)
        assert screen.table.row_count == 1
        await pilot.press("escape", "escape")  # the form, then the screen
        await pilot.pause()
        assert isinstance(app.screen, VetScreen)

        await run_palette_command(pilot, "grade an answer")
        assert app.screen is screen and screen.table.row_count == 1  # kept, with its rows


async def test_without_a_grader_runner_the_screen_says_so() -> None:
    app = vet_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, GradeScreen)
        assert any(n.message == UNAVAILABLE for n in app._notifications)


# -- the CLI's --tui ------------------------------------------------------------------------------


def test_grade_tui_opens_the_grade_screen_over_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[GradeApp] = []
    monkeypatch.setattr(GradeApp, "run", lambda self, *a, **k: opened.append(self))
    assert cli.main(["grade", str(SAMPLE), "--grader", "pass3", "--tui"]) == 0
    home = opened[0].home
    assert isinstance(home, GradeScreen)
    assert home.grader == "pass3" and len(home.items) == 10 and home.source == str(SAMPLE)


def test_grade_benchmark_tui_opens_the_benchmark_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    data = shared_data("grading")
    opened: list[GradeApp] = []
    monkeypatch.setattr(GradeApp, "run", lambda self, *a, **k: opened.append(self))
    argv = ["grade", "--benchmark", "msrpar", "--grader", "lexical", "--limit", "10"]
    assert cli.main([*argv, "--data", str(data), "--tui"]) == 0
    home = opened[0].home
    assert isinstance(home, BenchmarkScreen)
    assert (home.dataset, home.grader, home.train, home.test) == ("msrpar", "lexical", 10, 10)


# -- the Benchmark screen ---------------------------------------------------------------------------


def synthetic_benchmark(n: int = 40) -> Benchmark:
    """Pairs whose candidate keeps a share of the reference's words; human = 5 × that share."""
    words = "the river carries cold water from the high mountains down to the quiet sea".split()

    def item(split: str, i: int) -> GradeItem:
        keep = (i * 7) % (len(words) + 1)
        candidate = " ".join(words[:keep]) or "nothing"
        human = round(5 * keep / len(words) * (0.5 + ((i * 3) % 5) / 4), 2)
        return GradeItem(f"{split}:{i}", "", " ".join(words), candidate, human=min(human, 5.0))

    return Benchmark(
        "synthetic",
        "word-share pairs",
        tuple(item("train", i) for i in range(n)),
        tuple(item("test", i) for i in range(n, 2 * n)),
    )


def bench_app(start: Any, bench: Benchmark, grader: str = "lexical") -> GradeApp:
    return GradeApp(
        BenchmarkScreen(
            start,
            dataset=bench.name,
            grader=grader,
            calibration="isotonic",
            train=len(bench.train),
            test=len(bench.test),
            flush_interval=0.02,
        )
    )


async def test_benchmark_screen_shows_the_cli_numbers(store: Store) -> None:
    """lexical on a 40-pair sample of MSRpar: the screen's AAD and bracket accuracy are the
    numbers `quiztui grade --benchmark msrpar --grader lexical --limit 40` prints."""
    data = shared_data("grading")
    argv = ["grade", "--benchmark", "msrpar", "--grader", "lexical", "--limit", "40"]
    done = subprocess.run(
        [sys.executable, "-m", "quiztui", *argv, "--data", str(data), "--format", "json"],
        capture_output=True,
        text=True,
        env=os.environ,
        check=True,
        cwd=REPO,
    )
    cli_test = json.loads(done.stdout)["test"]
    aad, accuracy = f"{cli_test['aad']:.3f}", f"{cli_test['bracket_accuracy'] * 100:.2f}%"

    config = load_config()
    bench = load_benchmark("msrpar", data, limit=40)
    app = bench_app(lambda: benchmark_events(config, store, bench, "lexical", "isotonic"), bench)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, BenchmarkScreen)
        await settled(pilot, screen)
        assert screen.result is not None
        first = benchmark_rows(screen.result)[0]
        assert (first["AAD"], first["bracket acc"]) == (aad, accuracy)
        table = painted(screen.query_one("#bench-comparison"))
        line = next(ln for ln in table.splitlines() if ln.strip().startswith("lexical (isotonic)"))
        assert line.split()[2:4] == [aad, accuracy]
        assert "Queryloop paper, fact scoring (facts)" in table and "1.167" in table
        confusion = painted(screen.query_one("#bench-confusion"))
        for human, row in zip(("0-2", "2-4", "4-5"), cli_test["confusion"], strict=True):
            cells = next(ln for ln in confusion.splitlines() if ln.startswith(human)).split()
            assert cells[1:] == [str(v) for v in row]
        assert "train 40/40 · test 40/40" in painted(screen.query_one("#bench-count"))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_benchmark_screen_fits_small_and_large_terminals(size: tuple[int, int]) -> None:
    bench = synthetic_benchmark()

    async def start() -> AsyncIterator[Any]:
        from quiztui.pipeline.grade import BenchmarkRun

        async for event in BenchmarkRun(bench, GradeSettings(grader="lexical")).events():
            yield event

    app = bench_app(start, bench)
    async with app.run_test(size=size) as pilot:
        screen = app.home
        assert isinstance(screen, BenchmarkScreen)
        await settled(pilot, screen)
        result = screen.result
        assert result is not None and screen.progress.status == "finished"
        for selector in ("#bench-comparison", "#bench-confusion", "#bench-plot"):
            region = screen.query_one(selector).region
            assert region.right <= size[0] and region.bottom <= size[1] - 1  # above the footer
            assert region.height >= 4
        table = painted(screen.query_one("#bench-comparison"))
        assert "lexical (isotonic)" in table and "constant mean (train)" in table
        assert "Queryloop" not in table  # the paper's figures are MSRpar's only
        plot = screen.query_one("#bench-plot")
        spec = plot.spec  # type: ignore[attr-defined]
        points = spec.series[-1]
        assert points.kind == "scatter" and points.x == result.predicted
        assert points.y == result.human


async def test_benchmark_errors_are_shown_not_raised() -> None:
    async def broken() -> AsyncIterator[Any]:
        raise ValueError("no scored items in the training or the test split")
        yield  # pragma: no cover

    bench = synthetic_benchmark(4)
    app = bench_app(broken, bench)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.home
        assert isinstance(screen, BenchmarkScreen)
        await settled(pilot, screen)
        assert screen.progress.status == "failed"
        assert "no scored items" in painted(screen.query_one("#bench-error"))
        assert not screen.query_one("#bench-results").display


def test_item_graded_events_are_what_the_benchmark_counts() -> None:
    from quiztui.tui.screens.benchmark import BenchmarkProgress

    progress = BenchmarkProgress()
    item = GradeItem("x", "", "a b", "a b", human=5)
    from quiztui.pipeline.grade import lexical_outcome

    for split in ("train", "test", "test"):
        progress.apply(ItemGraded(0, item, lexical_outcome(item), split))
    assert (progress.done, progress.done_train, progress.done_test) == (3, 1, 2)


def test_grade_bindings_have_ids_unlike_any_other() -> None:
    from textual.binding import Binding

    from quiztui.tui.screens.calibrate import CalibrateScreen
    from quiztui.tui.screens.metrics import MetricsScreen

    others = (QuiztuiApp, VetScreen, ConfirmQuitScreen, CalibrateScreen, MetricsScreen)
    ids = [b.id for cls in others for b in cls.BINDINGS]  # type: ignore[union-attr]
    ours = [
        b
        for cls in (GradeScreen, GradeDetailScreen, BenchmarkScreen)
        for b in cls.BINDINGS  # type: ignore[attr-defined]
    ]
    for binding in ours:
        assert isinstance(binding, Binding) and binding.id and binding.id not in ids
    assert len({b.id for b in ours}) == len(ours)  # type: ignore[union-attr]
    assert {b.id for b in GradeApp.BINDINGS} <= set(ids)  # type: ignore[union-attr]
