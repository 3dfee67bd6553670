"""Asks a yes/no question before something that cannot be undone (quit, cancel a run)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from quiztui.tui.help import dialog_help


class ConfirmQuitScreen(ModalScreen[bool]):
    """``y`` answers yes, ``n``/``escape`` no. The defaults ask before quitting during a run."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
        dialog_help("confirm"),
    ]

    def __init__(
        self,
        question: str = "A run is in progress. Quit anyway?",
        *,
        yes: str = "Quit",
        no: str = "Stay",
        safe_default: bool = False,
    ) -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no
        # The no button has the focus: enter (pressed out of habit) does nothing harmful.
        self.safe_default = safe_default

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Text(self.question), id="confirm-text")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", variant="error", id="confirm-yes")
                yield Button(f"{self.no} (n)", variant="primary", id="confirm-no")
        yield Footer()

    def on_mount(self) -> None:
        if self.safe_default:
            self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class SaveQuitScreen(ModalScreen[str]):
    """Quitting with edits not written to the quiz file: ``s`` save and quit, ``d`` quit without
    saving, ``c``/``escape`` stay. Dismisses with "save", "discard" or "cancel"."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "answer('save')", "Save and quit", id="savequit.save"),
        Binding("d", "answer('discard')", "Discard and quit", id="savequit.discard"),
        Binding("c,escape", "answer('cancel')", "Cancel", id="savequit.cancel"),
        dialog_help("savequit"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="save-quit"):
            yield Static(Text(self.question), id="confirm-text")
            with Horizontal(id="confirm-buttons"):
                yield Button("Save (s)", variant="primary", id="savequit-save")
                yield Button("Discard (d)", variant="error", id="savequit-discard")
                yield Button("Cancel (c)", id="savequit-cancel")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id).removeprefix("savequit-"))

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)
