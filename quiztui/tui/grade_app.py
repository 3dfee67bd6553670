"""``quiztui grade --tui``: a small app whose home screen is the Grade or the Benchmark screen.

Themes, F1 help, the command palette and the quit confirmation work as in the vet app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from quiztui.tui.help import HelpScreen, collect_sections
from quiztui.tui.screens.benchmark import BenchmarkScreen
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.grade import GradeScreen
from quiztui.tui.themes import DEFAULT_THEME, FALLBACK_THEME, THEMES_DIR, load_themes

Command = tuple[str, str, Callable[[], object]]


class GradeCommands(Provider):
    """The home screen's commands, then help, themes and quit."""

    def _commands(self) -> Iterator[Command]:
        app: GradeApp = self.app  # type: ignore[assignment]
        yield from app.home.palette_commands()
        yield (
            "Help: keys",
            "Show the keys of the focused widget and the app (F1)",
            app.action_help,
        )
        for name in sorted(app.available_themes):
            yield (f"Theme: {name}", f"Switch to the {name} theme", partial(app.set_theme, name))
        yield ("App: quit", "Quit (asks while grading)", app.action_quit)

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)


class GradeApp(App[None]):
    """Shows ``home`` (a :class:`GradeScreen` or :class:`BenchmarkScreen`) as its only screen."""

    CSS_PATH = "app.tcss"
    TITLE = "quiztui grade"
    COMMANDS = App.COMMANDS | {GradeCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("q", "quit", "Quit", id="app.quit_q"),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("question_mark", "help", "Help", id="app.help_alt", show=False),
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            id="app.command_palette",
            show=False,
            priority=True,
            tooltip="Open the command palette",
        ),
    ]

    def __init__(
        self,
        home: GradeScreen | BenchmarkScreen,
        *,
        theme_name: str | None = None,
        themes_dir: Path | None = None,
    ) -> None:
        super().__init__()
        self.home = home
        self.requested_theme = theme_name
        loaded = load_themes(themes_dir if themes_dir is not None else THEMES_DIR)
        self.theme_problems = loaded.problems
        for theme in loaded.themes:
            self.register_theme(theme)
        available = self.available_themes
        if theme_name and theme_name in available:
            self.theme = theme_name
        else:
            self.theme = DEFAULT_THEME if DEFAULT_THEME in available else FALLBACK_THEME

    def get_default_screen(self) -> Screen[None]:
        return self.home

    def on_mount(self) -> None:
        if self.requested_theme and self.requested_theme not in self.available_themes:
            self.notify(
                f"unknown theme {self.requested_theme!r}; using {self.theme}",
                severity="warning",
                markup=False,
            )
        for problem in self.theme_problems:
            self.notify(f"theme skipped: {problem}", severity="warning", markup=False)

    def set_theme(self, name: str) -> None:
        self.theme = name

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(collect_sections(self.screen)))

    async def action_quit(self) -> None:
        if not self.home.running or isinstance(self.screen, ConfirmQuitScreen):
            self.exit()
            return

        def answered(quit_app: bool | None) -> None:
            if quit_app:
                self.exit()

        what = "Grading" if isinstance(self.home, GradeScreen) else "A benchmark"
        self.push_screen(ConfirmQuitScreen(f"{what} is running. Quit anyway?"), callback=answered)


__all__ = ["GradeApp", "GradeCommands"]
