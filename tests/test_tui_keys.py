"""Keys (issue 20 item 2, K2): F1 and ? open help everywhere, dialogs included; the command
palette lists every screen and action once and reaches every screen; ``[keys]`` in the config
remaps any action by its binding id, and help shows the keys in effect."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runs_helpers import vet_twice
from textual.command import CommandInput, CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Footer
from tui_helpers import (
    Gate,
    constant_clock,
    make_quiz,
    run_palette_command,
    settled,
    stream_factory,
    wait_until,
)

from quiztui.config import load_config
from quiztui.core.quiz import Quiz
from quiztui.pipeline.history import StoreHistory
from quiztui.tui.app import QuiztuiApp, known_binding_ids
from quiztui.tui.commands import SCREENS
from quiztui.tui.help import HelpScreen, sections_text
from quiztui.tui.services import AppServices

SIZE = (100, 30)


@pytest.fixture
def runs_db(tmp_path: Path) -> Path:
    """Two vet runs of the planted quiz by two simulated judges, in a real store."""
    db = tmp_path / "runs.db"
    vet_twice(db)
    return db


def make_app(
    *,
    quiz: Quiz | None = None,
    autorun: bool = True,
    gate: Gate | None = None,
    runs: Path | None = None,
    keymap: dict[str, str] | None = None,
) -> QuiztuiApp:
    quiz = quiz or make_quiz()
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz, gate=gate),
            judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
            simulated=True,
            runs=StoreHistory(runs) if runs is not None else None,
        ),
        autorun=autorun,
        clock=constant_clock(),
        flush_interval=0.02,
        keymap=keymap,
    )


def on_top(app: QuiztuiApp, name: str) -> bool:
    return type(app.screen).__name__ == name


async def open_help_with(pilot: Pilot[None], key: str, under: str) -> str:
    """Press ``key`` on the ``under`` dialog: help opens over it; its text; then close it."""
    app = pilot.app
    assert isinstance(app, QuiztuiApp) and on_top(app, under)
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what=f"{key} → help")
    help_screen = app.screen
    assert isinstance(help_screen, HelpScreen)
    text = sections_text(help_screen.sections).plain
    await pilot.press("escape")
    await wait_until(pilot, lambda: on_top(app, under), what=f"back to the {under}")
    return text


# -- F1 and ? in every dialog ---------------------------------------------------------------------


async def test_f1_and_question_mark_open_help_in_each_dialog_of_the_vet_app() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: on_top(app, "QuestionDetailScreen"))
        assert "(detail.close)" in await open_help_with(pilot, "f1", "QuestionDetailScreen")
        assert "(detail.close)" in await open_help_with(
            pilot, "question_mark", "QuestionDetailScreen"
        )
        await pilot.press("escape", "e")
        await wait_until(pilot, lambda: on_top(app, "EditQuestionScreen"))
        # The stem input has the focus: ? types a question mark there; F1 still opens help.
        assert "(edit.save)" in await open_help_with(pilot, "f1", "EditQuestionScreen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: on_top(app, "VetScreen"))
        # F1 on the help screen closes it again.
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("f1")
        await wait_until(pilot, lambda: on_top(app, "VetScreen"), what="F1 closes help")


async def test_f1_opens_help_in_the_quit_confirmation_during_a_run() -> None:
    gate = Gate(pause_after=10)
    app = make_app(gate=gate)
    async with app.run_test(size=SIZE) as pilot:
        await gate.reached.wait()
        await pilot.press("q")
        await wait_until(pilot, lambda: on_top(app, "ConfirmQuitScreen"))
        assert "(confirm.yes)" in await open_help_with(pilot, "f1", "ConfirmQuitScreen")
        assert "(confirm.no)" in await open_help_with(pilot, "question_mark", "ConfirmQuitScreen")
        await pilot.press("n")
        gate.release.set()


async def test_f1_opens_help_in_the_compare_detail_dialog(runs_db: Path) -> None:
    app = make_app(runs=runs_db)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await run_palette_command(pilot, "compare two runs")
        await wait_until(pilot, lambda: on_top(app, "CompareScreen"), what="the comparison")
        await pilot.press("enter")
        await wait_until(pilot, lambda: on_top(app, "CompareDetailScreen"))
        assert "(compare.detail.close)" in await open_help_with(pilot, "f1", "CompareDetailScreen")


# -- the command palette ------------------------------------------------------------------------


async def palette_titles(pilot: Pilot[None]) -> list[str]:
    """Every command the palette lists for an empty query, as shown."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
    palette = app.screen
    palette.query_one(CommandInput).value = ""

    def listed() -> bool:
        busy = any(w.node is palette and w.is_running for w in app.workers)
        return not busy and palette.query_one(CommandList).option_count > 0

    await wait_until(pilot, listed, what="the palette's commands")
    await pilot.pause()
    commands = palette.query_one(CommandList)
    titles = []
    for index in range(commands.option_count):
        hit: Any = getattr(commands.get_option_at_index(index), "hit", None)
        if hit is not None:
            titles.append(str(hit.text))
    await pilot.press("escape")
    return titles


async def test_each_palette_entry_is_listed_once_and_names_every_screen() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        titles = await palette_titles(pilot)
    folded = [t.casefold() for t in titles]
    assert len(folded) == len(set(folded)), sorted(
        t for t in titles if folded.count(t.casefold()) > 1
    )
    # Textual's own Theme / Quit / Keys are not listed beside quiztui's theme, quit and help.
    assert not {"theme", "quit", "keys"} & set(folded)
    for wanted in (
        "View: vet (home)",
        "View: quality ratings",
        "View: paraphrase robustness",
        "View: calibrate the judge",
        "View: grade an answer",
        "View: metrics",
        "View: run history",
        "View: compare two runs",
        "Edit: question",
        "Edit: save to the quiz file",
        "Export: report as md",
        "Run: start",
        "Help: keys",
        "App: quit",
    ):
        assert wanted in titles, wanted


SCREEN_CLASSES = {
    "metrics": "MetricsScreen",
    "calibrate": "CalibrateScreen",
    "grade": "GradeScreen",
    "review": "ReviewScreen",
    "robustness": "RobustnessScreen",
    "runs": "RunsScreen",
    "compare": "CompareScreen",
}


async def test_every_screen_is_reachable_from_the_palette_from_anywhere(runs_db: Path) -> None:
    app = make_app(runs=runs_db)
    assert {name for name, _, _ in SCREENS} == set(SCREEN_CLASSES)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        for name, title, _ in SCREENS:
            # From the screen opened last (not only from home): the command goes home first.
            await run_palette_command(pilot, title.removeprefix("View: "))
            wanted = SCREEN_CLASSES[name]
            await wait_until(
                pilot,
                lambda wanted=wanted: on_top(app, wanted) and bool(app.screen.query(Footer)),
                what=f"{title} → {wanted}, composed",
            )
            await pilot.pause()
        await run_palette_command(pilot, "vet (home)")
        await wait_until(pilot, lambda: app.screen is app.vet_screen, what="back home")
        await run_palette_command(pilot, "Edit: question")
        await wait_until(pilot, lambda: on_top(app, "EditQuestionScreen"), what="the editor")


async def test_export_from_the_palette_writes_the_report_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not beside the quiz: that may be the repository's tracked sample_quizzes/ (issue 27).
    quizzes, work = tmp_path / "quizzes", tmp_path / "work"
    quizzes.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    quiz = make_quiz().model_copy(update={"source_path": str(quizzes / "planted.json")})
    app = make_app(quiz=quiz)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await run_palette_command(pilot, "report as md")
        report = work / "planted.run1.md"
        await wait_until(pilot, report.exists, what="the Markdown report")
    assert list(quizzes.iterdir()) == []
    text = report.read_text(encoding="utf-8")
    assert "Planted errors" in text and "poor" in text


# -- [keys] ------------------------------------------------------------------------------------------


def keys_config(tmp_path: Path, body: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(body, encoding="utf-8")
    return load_config(path, environ={}).keys.keymap()


async def test_a_keys_table_remaps_an_action_and_help_shows_the_key_in_effect(
    tmp_path: Path,
) -> None:
    keymap = keys_config(
        tmp_path,
        '# my keys\n[keys]\n"run.start" = "ctrl+r"\n"app.help" = "f2"\n',
    )
    assert keymap == {"run.start": "ctrl+r", "app.help": "f2"}
    app = make_app(autorun=False, keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("r")  # no longer the run key
        await pilot.pause()
        assert app.vet_screen.run_status == "idle"
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="f2 → help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        lines = sections_text(help_screen.sections).plain.splitlines()
        run_line = next(line for line in lines if "(run.start)" in line)
        assert run_line.split()[0] == "^r", run_line
        help_line = next(line for line in lines if "app.help)" in line)  # with app.help_alt's ?
        assert "f2" in help_line.split("Help")[0] and "f1" not in help_line, help_line
        await pilot.press("escape", "ctrl+r")
        await wait_until(pilot, lambda: app.vet_screen.run_status != "idle", what="ctrl+r runs")
        await settled(pilot)


async def test_an_unknown_binding_id_in_keys_is_named_in_a_warning(tmp_path: Path) -> None:
    keymap = keys_config(tmp_path, '[keys]\n"run.strat" = "ctrl+r"\n')
    app = make_app(autorun=False, keymap=keymap)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        from tui_helpers import shown_toasts

        await wait_until(pilot, lambda: any("run.strat" in t for t in shown_toasts(pilot)))
    assert "run.start" in known_binding_ids() and "run.strat" not in known_binding_ids()


@pytest.mark.parametrize(
    ("body", "field"),
    [('[keys]\n"run.start" = 3\n', "run.start"), ('[keys]\n"run.start" = ""\n', "run.start")],
)
def test_a_bad_key_in_the_config_is_a_one_line_error_naming_it(
    tmp_path: Path, body: str, field: str
) -> None:
    from quiztui.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        keys_config(tmp_path, body)
    message = str(caught.value)
    assert "\n" not in message and "config.toml" in message and field in message
