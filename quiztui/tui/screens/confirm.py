"""Asks before quitting while a run is active."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmQuitScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Quit", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "Stay", id="confirm.no"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(
                Text("A run is in progress. Quit anyway?"),
                id="confirm-text",
            )
            with Horizontal(id="confirm-buttons"):
                yield Button("Quit (y)", variant="error", id="confirm-yes")
                yield Button("Stay (n)", variant="primary", id="confirm-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, quit_app: bool) -> None:
        self.dismiss(quit_app)
