"""Edit one question: its stem, its options and its key. ``ctrl+s`` re-judges it, ``esc`` cancels.

The form returns an :class:`Edit` (or None when cancelled); the vet screen re-judges the edited
question and records the edit for ``ctrl+s`` on the vet screen, which writes the file back.
A true/false question keeps its two options; only its stem and key change. An empty option
field is dropped, so clearing a field removes that option and the blank last field adds one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, Static

from quiztui.core.question_mode import LETTERS
from quiztui.core.quiz import Question
from quiztui.tui.help import dialog_help
from quiztui.tui.widgets.cells import printable


@dataclass(frozen=True)
class Edit:
    text: str
    options: tuple[str, ...]
    key: int


def check_edit(text: str, options: list[str], key_letter: str, boolean: bool) -> Edit | str:
    """The edit, or what is wrong with it (one line)."""
    text = " ".join(text.split())
    if not text:
        return "the question text is empty"
    kept = [" ".join(o.split()) for o in options]
    letters = [LETTERS[i] for i, o in enumerate(kept) if o]
    kept_options = [o for o in kept if o]
    if len(kept_options) < 2:
        return "a question needs at least two options"
    folded = [o.casefold() for o in kept_options]
    for i, option in enumerate(folded):
        if option in folded[:i]:
            return f"option {kept_options[i]!r} appears twice"
    letter = key_letter.strip().upper()
    if boolean:
        if letter in ("T", "TRUE"):
            letter = "A"
        elif letter in ("F", "FALSE"):
            letter = "B"
    if letter not in letters:
        shown = ", ".join(letters) if not boolean else "T or F"
        return f"the key must be one of {shown}"
    return Edit(text, tuple(kept_options), letters.index(letter))


class EditQuestionScreen(ModalScreen[Edit | None]):
    """The editor of one question."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Re-judge", id="edit.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
        # One key to the key field, from any field (it was the last of several tabs away).
        Binding("ctrl+k", "focus_key", "Key field", id="edit.key", priority=True),
        dialog_help("edit"),
    ]

    def __init__(self, question: Question, number: int) -> None:
        super().__init__()
        self.question = question
        self.number = number
        self.boolean = question.kind == "boolean"

    def compose(self) -> ComposeResult:
        q = self.question
        with Vertical(id="edit-dialog"):
            title = Text(f"Edit question {self.number}", style="bold")
            title.append(f"  id {q.id}", style="dim")
            yield Static(title, id="edit-title")
            with VerticalScroll(id="edit-scroll"):
                yield Label("Question")
                yield Input(value=q.text, id="edit-text", select_on_focus=False)
                if self.boolean:
                    yield Static(Text("Options: True / False", style="dim"))
                else:
                    for i, option in enumerate((*q.options, "")):
                        with Horizontal(classes="edit-option"):
                            yield Label(f"{LETTERS[i]})", classes="edit-letter")
                            yield Input(
                                value=option,
                                id=f"edit-option-{i}",
                                placeholder="(empty: no option)" if option else "add an option",
                                select_on_focus=False,
                            )
                with Horizontal(classes="edit-option"):
                    yield Label("Key", classes="edit-letter")
                    key = ("T" if q.key == 0 else "F") if self.boolean else LETTERS[q.key]
                    yield Input(
                        value=key,
                        id="edit-key",
                        max_length=5 if self.boolean else 1,
                        placeholder="T or F" if self.boolean else "letter",
                    )
            yield Static("", id="edit-error", markup=False)
            hint = Text(
                "ctrl+s re-judge · ctrl+k key field · tab next field · esc cancel", style="dim"
            )
            yield Static(hint, id="edit-hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#edit-text", Input).focus()

    def _options(self) -> list[str]:
        if self.boolean:
            return ["True", "False"]
        count = self.question.n + 1
        return [self.query_one(f"#edit-option-{i}", Input).value for i in range(count)]

    def action_save(self) -> None:
        result = check_edit(
            self.query_one("#edit-text", Input).value,
            self._options(),
            self.query_one("#edit-key", Input).value,
            self.boolean,
        )
        if isinstance(result, str):
            self.query_one("#edit-error", Static).update(Text(printable(result), style="bold red"))
            return
        q = self.question
        if (result.text, result.options, result.key) == (q.text, q.options, q.key):
            self.dismiss(None)
            self.notify("No change", timeout=3)
            return
        self.dismiss(result)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_focus_key(self) -> None:
        key = self.query_one("#edit-key", Input)
        key.focus()
        key.action_select_all()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.focus_next()
