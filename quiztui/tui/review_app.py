"""``quiztui review QUIZ --tui``: a small app whose home screen is the Review screen.

Themes, F1 help, the command palette and the quit confirmation work as in the vet app. The vet app
can show the same screen by pushing ``ReviewScreen(quiz, start, ...)`` (see its docstring).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen

from quiztui.tui.app import APP_BINDINGS
from quiztui.tui.commands import Command, CommandList, app_commands
from quiztui.tui.help import HelpScreen, collect_sections
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.review import ReviewScreen
from quiztui.tui.themes import DEFAULT_THEME, FALLBACK_THEME, THEMES_DIR, load_themes


class ReviewCommands(CommandList):
    """The Review screen's commands, then help, themes and quit."""

    def _commands(self) -> Iterator[Command]:
        app: ReviewApp = self.app  # type: ignore[assignment]
        yield from app.home.palette_commands()
        yield from app_commands(app, "Quit (asks while reviewing)")


class ReviewApp(App[None]):
    """Shows ``home`` (a :class:`ReviewScreen`) as its only screen."""

    CSS_PATH = "app.tcss"
    TITLE = "quiztui review"
    COMMANDS = App.COMMANDS | {ReviewCommands}
    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)

    def __init__(
        self,
        home: ReviewScreen,
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

        self.push_screen(ConfirmQuitScreen("A review is running. Quit anyway?"), callback=answered)


__all__ = ["ReviewApp", "ReviewCommands"]
