"""The Textual UI on a synthetic event stream: live tables, cancel, detail, filter, help, markup."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.text import Text
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import (
    MARKUP_OPTION,
    MARKUP_QUESTION,
    Gate,
    constant_clock,
    make_quiz,
    run_palette_command,
    shown_toasts,
    stream_factory,
    synthetic_events,
    vet_flushed,
    wait_until,
)

from quiztui.core.quiz import Quiz
from quiztui.pipeline.events import (
    QuestionScored,
    RunFinished,
    RunStarted,
    VerdictReceived,
    VetEvent,
)
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.commands import QuiztuiCommands
from quiztui.tui.help import HelpScreen
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.screens.vet import MAX_ROWS_PER_FLUSH, VetScreen
from quiztui.tui.services import AppServices
from quiztui.tui.widgets.tables import NavTable, QuestionsTable
from quiztui.tui.widgets.verdict_window import VerdictsTable

SIZE = (120, 40)


def make_app(quiz: Quiz | None = None, *, autorun: bool = True, **stream: object) -> QuiztuiApp:
    quiz = quiz or make_quiz()
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz, **stream),
            judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
            simulated=True,
        ),
        autorun=autorun,
        clock=constant_clock(),
        flush_interval=0.02,
    )


async def expected_scores(quiz: Quiz, **stream: object) -> dict[str, QuestionScored]:
    out: dict[str, QuestionScored] = {}
    async for event in synthetic_events(quiz, **stream):  # type: ignore[arg-type]
        if isinstance(event, QuestionScored):
            out[event.question_id] = event
    return out


async def drained(pilot: Pilot[None]) -> VetScreen:
    """Wait until every buffered event has reached the widgets."""
    app = pilot.app
    assert isinstance(app, QuiztuiApp)
    await wait_until(pilot, lambda: vet_flushed(app), what="the vet tables to be flushed")
    await pilot.pause()
    return app.vet_screen


async def finished(pilot: Pilot[None]) -> VetScreen:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return await drained(pilot)


def plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def column(table: NavTable | VerdictsTable, key: str) -> list[str]:
    return [plain(table.get_cell(row_key, key)) for row_key in table.rows]


def rendered_lines(table: NavTable | VerdictsTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


async def toast_texts(pilot: Pilot[None]) -> list[str]:
    """Toasts are mounted a few messages after notify(); wait for the first."""
    await wait_until(pilot, lambda: shown_toasts(pilot), what="a toast")
    return shown_toasts(pilot)


def screen_text(screen: object) -> str:
    from textual.screen import Screen

    assert isinstance(screen, Screen)
    return "\n".join(plain(s.content) for s in screen.query(Static))


# -- the live run ---------------------------------------------------------------------------------


async def test_run_fills_both_tables_with_scores_from_events() -> None:
    quiz = make_quiz()
    expected = await expected_scores(quiz)
    app = make_app(quiz)
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        assert screen.state.status == "finished"
        questions = screen.questions_table
        assert [str(k.value) for k in questions.rows] == [q.id for q in quiz.questions]
        for q in quiz.questions:
            score = expected[q.id]
            assert plain(questions.get_cell(q.id, "badge")) == str(score.badge)
            assert plain(questions.get_cell(q.id, "k")) == f"{score.k}/{score.n}"
            assert plain(questions.get_cell(q.id, "confidence")) == f"{score.confidence:.2f}"
            suggested = plain(questions.get_cell(q.id, "suggested"))
            if score.suggested_option is None:
                assert suggested == ""
            else:
                letter = "ABCD"[score.suggested_option]
                assert suggested == (
                    f"{letter}: {q.options[score.suggested_option]} ({score.suggested_p:.2f})"
                )
        assert {"good", "questionable", "poor"} <= set(column(questions, "badge"))
        verdicts = screen.verdicts_table
        total = sum(q.n for q in quiz.questions)
        assert verdicts.row_count == total
        assert sorted(int(s) for s in column(verdicts, "seq")) == list(range(total))
        assert set(column(verdicts, "verdict")) <= {"TRUE", "FALSE"}
        header = plain(app.screen.query_one("#header", Static).content)
        assert "SIMULATED" in header and "uncalibrated" in header and "finished" in header
        assert "48/48" in plain(app.screen.query_one("#progress-count", Static).content)


async def test_agrees_column_compares_verdict_with_keyed_label() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        table = screen.verdicts_table
        for row_key in table.rows:
            keyed, verdict, agrees = (
                plain(table.get_cell(row_key, c)) for c in ("keyed", "verdict", "agrees")
            )
            assert agrees == ("yes" if (keyed == "true") == (verdict == "TRUE") else "no")


async def test_cancel_keeps_rows_already_shown() -> None:
    gate = Gate(pause_after=20)
    app = make_app(gate=gate)
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached.wait()
        screen = await drained(pilot)
        assert screen.running
        assert screen.verdicts_table.row_count == 20
        await pilot.press("x")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.state.status == "cancelled"
        assert screen.verdicts_table.row_count == 20
        assert "cancelled" in plain(screen.query_one("#header", Static).content)
        assert "20/48" in plain(screen.query_one("#progress-count", Static).content)


async def test_restart_replaces_rows_instead_of_appending() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        assert screen.verdicts_table.row_count == 48
        await pilot.press("r")
        screen = await finished(pilot)
        assert screen.state.status == "finished"
        assert screen.verdicts_table.row_count == 48


async def test_unjudged_assertions_show_as_incomplete() -> None:
    app = make_app(unjudged=frozenset({"q2#0"}))
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        assert plain(screen.questions_table.get_cell("q2", "badge")) == "incomplete"
        assert "unjudged" in column(screen.verdicts_table, "verdict")
        assert "unjudged 1" in plain(screen.query_one("#stats-line", Static).content)


async def test_repeated_verdict_updates_its_row() -> None:
    quiz = make_quiz(2, markup=False)

    async def stream() -> AsyncIterator[VetEvent]:
        yield VerdictReceived(seq=0, question_id="q1", option_index=0, verdict=True, reason="first")
        yield VerdictReceived(seq=0, question_id="q1", option_index=0, verdict=False, reason="2nd")

    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream, judge_label="x", simulated=False),
        clock=constant_clock(),
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        table = screen.verdicts_table
        assert table.row_count == 1
        assert column(table, "reason") == ["2nd"]
        assert column(table, "verdict") == ["FALSE"]


# -- batching -------------------------------------------------------------------------------------


async def test_verdicts_reach_the_table_in_few_capped_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    original_rows = VerdictsTable.add_rows

    def counting(self: VerdictsTable, rows):  # type: ignore[no-untyped-def]
        calls.append(len(rows))
        return original_rows(self, rows)

    # The windowed table has no add_row: every verdict goes through a flush's add_rows.
    monkeypatch.setattr(VerdictsTable, "add_rows", counting)
    quiz = make_quiz(300, markup=False)  # 1,200 verdicts
    app = make_app(quiz, batch_size=20)
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        assert screen.verdicts_table.row_count == 1200
    assert sum(calls) == 1200
    assert len(calls) <= 1200 // 20  # far fewer table calls than verdicts
    assert max(calls) <= MAX_ROWS_PER_FLUSH


async def test_questions_table_is_updated_in_place_by_key(monkeypatch: pytest.MonkeyPatch) -> None:
    rebuilds: list[int] = []
    original = QuestionsTable.show

    def counting(self: QuestionsTable, records, unjudged=()):  # type: ignore[no-untyped-def]
        rebuilds.append(1)
        return original(self, records, unjudged)

    monkeypatch.setattr(QuestionsTable, "show", counting)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        # One build at mount; the first run starts on those rows (nothing was judged yet: a
        # 25,000-row rebuild froze the screen for seconds); scores arrive through update_cell.
        assert len(rebuilds) == 1
        await pilot.press("r")  # a second run starts from pending rows: one rebuild
        screen = await finished(pilot)
        assert len(rebuilds) == 2
        assert "pending" not in column(screen.questions_table, "badge")


# -- detail, filter, help -------------------------------------------------------------------------


async def test_enter_opens_detail_with_every_option_and_esc_closes() -> None:
    quiz = make_quiz()
    expected = await expected_scores(quiz)
    app = make_app(quiz)
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        screen.questions_table.focus()
        await pilot.press("j")  # row 2 (q2)
        await pilot.press("enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, QuestionDetailScreen)
        text = screen_text(detail)
        q = quiz.questions[1]
        for option in q.options:
            assert option in text
        assert f"k {expected[q.id].k}/4" in text
        assert f"badge {expected[q.id].badge}" in text
        assert "keyed true" in text and "keyed false" in text
        assert "fits the question" in text or "does not answer it" in text
        assert len(detail.query(".detail-option")) == q.n
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_enter_on_a_verdict_row_opens_its_question() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        table = screen.verdicts_table
        table.focus()
        await pilot.press("g", "enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, QuestionDetailScreen)
        first_question = plain(table.get_cell(next(iter(table.rows)), "question"))
        assert detail.record.number == int(first_question.split(".")[0])


async def test_filter_cycles_through_badges_and_shows_only_matches() -> None:
    quiz = make_quiz()
    expected = await expected_scores(quiz)
    app = make_app(quiz)
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        table = screen.questions_table
        for badge in ("poor", "questionable", "incomplete", "good"):
            await pilot.press("f")
            await pilot.pause()
            assert screen.badge_filter == badge
            ids = sorted(str(k.value) for k in table.rows)
            assert ids == sorted(qid for qid, s in expected.items() if s.badge == badge)
            label = plain(screen.query_one("#questions-label", Static).content)
            assert f"filter: {badge}" in label
            assert f"{len(ids)}/12 shown" in label
        await pilot.press("escape")
        await pilot.pause()
        assert screen.badge_filter == "all" and table.row_count == 12


async def test_filter_applies_to_scores_arriving_later() -> None:
    gate = Gate(pause_after=0)
    app = make_app(gate=gate)
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached.wait()
        screen = app.vet_screen
        screen.set_badge_filter("poor")
        await pilot.pause()
        assert screen.questions_table.row_count == 0
        gate.release.set()
        screen = await finished(pilot)
        shown = [
            plain(screen.questions_table.get_cell(k, "badge")) for k in screen.questions_table.rows
        ]
        assert shown and set(shown) == {"poor"}


async def test_slash_searches_question_text() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        await pilot.press("slash")
        await pilot.press(*"capital")
        await pilot.pause()
        assert [str(k.value) for k in screen.questions_table.rows] == ["q1"]
        await pilot.press("enter")
        await pilot.pause()
        assert screen.questions_table.has_focus
        assert "text: 'capital'" in plain(screen.query_one("#questions-label", Static).content)
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert screen.questions_table.row_count == 12


async def test_typing_q_in_the_search_box_does_not_quit(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    exits: list[object] = []
    monkeypatch.setattr(app, "exit", lambda *a, **k: exits.append(a))
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        await pilot.press("slash", "q", "question_mark")
        await pilot.pause()
        assert not exits
        assert screen.text_filter == "q?"
        assert not isinstance(app.screen, HelpScreen)


async def test_f1_and_question_mark_open_context_aware_help() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app.screen)
        assert "Focused: QuestionsTable" in text
        for binding_id in (
            "run.start",
            "run.cancel",
            "view.filter_cycle",
            "app.quit",
            "table.down",
        ):
            assert binding_id in text
        await pilot.press("escape")
        await pilot.pause()
        screen.verdicts_table.focus()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "Focused: VerdictsTable" in screen_text(app.screen)


async def test_vi_keys_move_the_cursor() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        table = screen.questions_table
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        await pilot.press("G")
        assert table.cursor_row == 11
        await pilot.press("g")
        assert table.cursor_row == 0


async def test_command_palette_runs_a_view_command() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        await run_palette_command(pilot, "filter poor")
        assert screen.badge_filter == "poor"


async def test_palette_lists_run_view_and_theme_commands() -> None:
    app = make_app(autorun=False)
    async with app.run_test(size=SIZE):
        provider = QuiztuiCommands(app.screen)
        titles = [title for title, _, _ in provider._commands()]
        for title in ("Run: start", "Run: cancel", "View: filter poor", "Theme: quiztui-light"):
            assert title in titles


# -- quitting, errors -----------------------------------------------------------------------------


async def test_quit_asks_while_a_run_is_active(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = Gate(pause_after=5)
    app = make_app(gate=gate)
    exits: list[object] = []
    monkeypatch.setattr(app, "exit", lambda *a, **k: exits.append(a))
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached.wait()
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        await pilot.press("n")
        await pilot.pause()
        assert not exits and isinstance(app.screen, VetScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert exits


async def test_quit_is_immediate_when_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(autorun=False)
    exits: list[object] = []
    monkeypatch.setattr(app, "exit", lambda *a, **k: exits.append(a))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
        assert exits


async def test_stream_error_becomes_a_literal_toast_not_a_traceback() -> None:
    app = make_app(fail_with=RuntimeError("[bold]boom[/] [link=x]y"), fail_after=10)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await finished(pilot)
        await pilot.pause()
        assert screen.state.status == "failed"
        assert screen.verdicts_table.row_count == 10
        toasts = await toast_texts(pilot)
        assert any("RuntimeError: [bold]boom[/] [link=x]y" in t for t in toasts), toasts
        assert app.return_code is None  # still running


async def test_failed_summary_is_reported() -> None:
    quiz = make_quiz(2, markup=False)

    async def stream() -> AsyncIterator[VetEvent]:
        async for event in synthetic_events(quiz):
            if isinstance(event, RunFinished):
                from dataclasses import replace

                yield RunFinished(replace(event.summary, status="failed", error="HTTP 500 [/]"))
            else:
                yield event

    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream, judge_label="x", simulated=False),
        clock=constant_clock(),
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await finished(pilot)
        assert screen.state.status == "failed"
        toasts = await toast_texts(pilot)
        assert any("HTTP 500 [/]" in t for t in toasts), toasts


# -- markup safety --------------------------------------------------------------------------------


async def test_markup_in_quiz_text_is_shown_literally_everywhere() -> None:
    quiz = make_quiz()
    app = make_app(quiz)
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        questions = screen.questions_table
        assert plain(questions.get_cell("q3", "question")) == MARKUP_QUESTION
        # The cell is ellipsised to the column width; its start is drawn character for character.
        assert any("Which tag is [bold]x[/] and" in line for line in rendered_lines(questions))
        assert plain(questions.get_cell("q3", "key")) == f"B: {MARKUP_OPTION}"
        verdicts = screen.verdicts_table
        assert f"B: {MARKUP_OPTION}" in column(verdicts, "option")
        assert f"{MARKUP_OPTION} fits the question" in column(verdicts, "reason") or (
            f"{MARKUP_OPTION} does not answer it" in column(verdicts, "reason")
        )
        questions.focus()
        await pilot.press("j", "j", "enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, QuestionDetailScreen)
        text = screen_text(detail)
        assert MARKUP_QUESTION in text
        assert MARKUP_OPTION in text


async def test_control_characters_never_reach_the_terminal() -> None:
    quiz = make_quiz(2, markup=False)
    evil = quiz.questions[0].model_copy(
        update={"text": "Red\x1b[31m alert\u202e\nnext line", "options": ("a\x07", "b", "c", "d")}
    )
    quiz = quiz.model_copy(update={"questions": (evil, quiz.questions[1])})
    app = make_app(quiz)
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        cells = [plain(c) for c in screen.questions_table.get_row("q1")]
        cells += [
            plain(c)
            for row in screen.verdicts_table.rows
            for c in screen.verdicts_table.get_row(row)
        ]
        for value in cells:
            assert value.isprintable(), repr(value)
        assert plain(screen.questions_table.get_cell("q1", "question")) == (
            "Red\ufffd[31m alert\ufffd next line"
        )
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app.screen)
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text


async def test_markup_in_title_and_judge_label_is_literal() -> None:
    quiz = make_quiz(2, markup=False).model_copy(update={"title": "[b]Quiz[/b] [/]"})

    async def stream() -> AsyncIterator[VetEvent]:
        yield RunStarted(
            run_id=1,
            quiz_title=quiz.title,
            quiz_path=None,
            questions=2,
            assertions=8,
            batches=1,
            already_judged=0,
            judge_label="model [red]x[/red]",
            simulated=False,
            seed=1,
            batch_size=20,
            concurrency=1,
            calibration="[/bold]",
        )

    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream, judge_label="?", simulated=False),
        clock=constant_clock(),
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await finished(pilot)
        header = plain(screen.query_one("#header", Static).content)
        assert "[b]Quiz[/b] [/]" in header
        assert "model [red]x[/red]" in header and "[/bold]" in header
        assert "SIMULATED" not in header


# -- themes, sizes, bindings ----------------------------------------------------------------------


async def test_default_theme_comes_from_the_themes_directory() -> None:
    app = make_app(autorun=False)
    async with app.run_test(size=SIZE):
        assert app.theme == "quiztui-dark"
        assert {"quiztui-dark", "quiztui-light"} <= set(app.available_themes)
        assert not app.available_themes["quiztui-light"].dark


async def test_theme_name_selects_a_registered_theme() -> None:
    quiz = make_quiz(2)
    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream_factory(quiz), judge_label="x", simulated=False),
        autorun=False,
        theme_name="quiztui-light",
    )
    async with app.run_test(size=SIZE):
        assert app.theme == "quiztui-light"


async def test_missing_or_broken_themes_fall_back(tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text('primary = "not a colour"\n')
    (tmp_path / "extra.toml").write_text('primary = "#112233"\nshiny = true\n')
    quiz = make_quiz(2)
    app = QuiztuiApp(
        quiz,
        AppServices(start_run=stream_factory(quiz), judge_label="x", simulated=False),
        autorun=False,
        theme_name="nope",
        themes_dir=tmp_path,
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        assert app.theme == "textual-dark"
        assert len(app.theme_problems) == 2
        assert any("shiny" in p for p in app.theme_problems)
        toasts = " ".join(await toast_texts(pilot))
        assert "unknown theme 'nope'" in toasts


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_layout_fits_small_and_large_terminals(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = await finished(pilot)
        for table in (screen.questions_table, screen.verdicts_table):
            assert table.size.height >= 4
            assert table.virtual_size.width <= table.size.width  # no horizontal scrolling
        assert "SIMULATED" in plain(screen.query_one("#header", Static).content)


def test_every_binding_has_an_id() -> None:
    from quiztui.tui.screens.detail import QuestionDetailScreen as Detail

    classes = (QuiztuiApp, VetScreen, NavTable, Detail, HelpScreen, ConfirmQuitScreen)
    ids = []
    for cls in classes:
        for binding in cls.BINDINGS:
            assert isinstance(binding, Binding)
            assert binding.id, f"{cls.__name__}: {binding.key} has no id"
            ids.append(binding.id)
    assert len(ids) == len(set(ids))


async def test_events_after_cancel_do_not_leak_into_a_new_run() -> None:
    release = asyncio.Event()
    gate = Gate(pause_after=10, release=release)
    app = make_app(gate=gate)
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached.wait()
        await pilot.press("x")
        await pilot.app.workers.wait_for_complete()
        release.set()
        await pilot.press("r")
        screen = await finished(pilot)
        assert screen.state.status == "finished"
        assert screen.verdicts_table.row_count == 48


async def test_the_real_pipeline_with_the_simulated_judge_fills_the_tables(tmp_path: Path) -> None:
    from quiztui.pipeline.prompts import load_prompt
    from quiztui.pipeline.vet import VetRun, VetSettings
    from quiztui.providers.simulated import SimulatedProvider
    from quiztui.simulate.vet import truth_table
    from quiztui.store import Store

    quiz = make_quiz()
    provider = SimulatedProvider(truth_table(quiz))
    store = Store(tmp_path / "runs.db")
    prompt = load_prompt("judge_assertions")

    def start_run() -> AsyncIterator[VetEvent]:
        return VetRun(quiz, provider, store, prompt, VetSettings(batch_size=8)).events()

    app = QuiztuiApp(
        quiz,
        AppServices(start_run=start_run, judge_label=provider.label, simulated=True),
        clock=constant_clock(),
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = await finished(pilot)
            assert screen.state.status == "finished"
            assert screen.verdicts_table.row_count == 48
            badges = column(screen.questions_table, "badge")
            assert "pending" not in badges and {"good", "poor"} <= set(badges)
            assert plain(screen.questions_table.get_cell("q3", "question")) == MARKUP_QUESTION
    finally:
        store.close()
