"""A small app with one home screen, for the tools' ``--tui``: ``quiztui grade`` (the Grade or
the Benchmark screen) and ``quiztui robustness`` (the Robustness screen).

Themes, F1 help, the command palette and the quit confirmation work as in the vet app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar, Protocol

from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen

from quiztui.tui.app import APP_BINDINGS
from quiztui.tui.commands import Command, CommandList, app_commands
from quiztui.tui.help import HelpScreen, collect_sections
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.themes import DEFAULT_THEME, FALLBACK_THEME, THEMES_DIR, load_themes


class HomeScreen(Protocol):
    """What the app needs from its home screen (a Textual Screen)."""

    @property
    def running(self) -> bool: ...

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]: ...


class GradeCommands(CommandList):
    """The home screen's commands, then help, themes and quit."""

    def _commands(self) -> Iterator[Command]:
        app: GradeApp = self.app  # type: ignore[assignment]
        home: HomeScreen = app.home  # type: ignore[assignment]
        yield from home.palette_commands()
        yield from app_commands(app, "Quit (asks while grading)")


class GradeApp(App[None]):
    """Shows ``home`` (a screen with ``running`` and ``palette_commands()``, e.g.
    :class:`GradeScreen`) as its only screen."""

    CSS_PATH = "app.tcss"
    TITLE = "quiztui grade"
    COMMANDS = App.COMMANDS | {GradeCommands}
    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)

    def __init__(
        self,
        home: Screen[None],
        *,
        theme_name: str | None = None,
        themes_dir: Path | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__()
        self.home = home
        if title:
            self.title = title
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
        home: HomeScreen = self.home  # type: ignore[assignment]
        if not home.running or isinstance(self.screen, ConfirmQuitScreen):
            self.exit()
            return

        def answered(quit_app: bool | None) -> None:
            if quit_app:
                self.exit()

        what = getattr(self.home, "BUSY_LABEL", "A run")
        self.push_screen(ConfirmQuitScreen(f"{what} is running. Quit anyway?"), callback=answered)


__all__ = ["GradeApp", "GradeCommands"]
