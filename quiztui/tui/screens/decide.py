"""The review desk's dialog: record a decision about one question, with an optional note.

The vet screen opens it with the action its key names (accept, fix, rewrite, drop). For a fix
the right option is chosen from the question's options, the judge's suggested option already
highlighted. ``enter`` records (on the options as in the note), as does ``ctrl+s``; ``tab``
reaches the note, ``esc`` cancels, F1 shows the keys. Where decisions are kept is the :class:`DecisionBook` the app was given.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from quiztui.core.decisions import (
    ACCEPT,
    CLEAR,
    DROP,
    FIX,
    REVIEW_FILTERS,
    REWRITE,
    Decision,
    carried,
    make_decision,
    matches_review_filter,
    option_letter,
    pending_fixes,
)
from quiztui.errors import QuiztuiError
from quiztui.tui.help import dialog_help
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.widgets.cells import printable

if TYPE_CHECKING:
    from quiztui.core.quiz import Question, Quiz
    from quiztui.tui.screens.vet import VetScreen
    from quiztui.tui.state import QuestionRecord

WHAT = {
    ACCEPT: "Accept: the key is right",
    FIX: "Fix: another option is right",
    REWRITE: "Rewrite: the wording needs work",
    DROP: "Drop: take the question out",
}


class DecisionBook(Protocol):
    """Where the review desk keeps decisions (the run store; ``assemble/review_desk.py``)."""

    def load(self, quiz: Quiz) -> dict[str, Decision]:
        """Question id → the decision carried over to the quiz as it is now."""
        ...

    def record(self, decision: Decision, quiz: Quiz) -> Decision:
        """Keep ``decision``; returns it as stored (with its time)."""
        ...

    def last_run_id(self, quiz: Quiz) -> int | None:
        """The newest vet run of this quiz (a decision made before any run refers to it)."""
        ...


@dataclass(frozen=True)
class DecisionRequest:
    """What the dialog returns: the action, a fix's chosen option, the note."""

    action: str
    option: int | None
    note: str


def default_fix_option(question: Question, suggested: int | None) -> int:
    """The judge's suggested option when it is another than the key, else the first other one."""
    if suggested is not None and 0 <= suggested < question.n and suggested != question.key:
        return suggested
    return next(i for i in range(question.n) if i != question.key)


class DecideScreen(ModalScreen[DecisionRequest | None]):
    """One decision about one question."""

    DEFAULT_CSS = """
    DecideScreen {
        align: center middle;
    }
    #decide-dialog {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 95%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    #decide-title, #decide-question, #decide-hint, #decide-error {
        height: auto;
    }
    #decide-question {
        max-height: 4;
        overflow: hidden;
    }
    #decide-options {
        height: auto;
        max-height: 8;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Record", id="decide.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="decide.cancel"),
        dialog_help("decide"),  # `?` (F1 is the app's, everywhere)
    ]

    def __init__(
        self,
        question: Question,
        number: int,
        action: str,
        *,
        suggested: int | None = None,
        current: Decision | None = None,
    ) -> None:
        super().__init__()
        self.question = question
        self.number = number
        self.action = action
        self.suggested = suggested
        self.current = current

    def compose(self) -> ComposeResult:
        q = self.question
        with Vertical(id="decide-dialog"):
            title = Text(f"Question {self.number}: ", style="bold")
            title.append(WHAT[self.action], style="bold")
            if self.current is not None:
                title.append(f"  (was: {self.current.label})", style="dim")
            yield Static(title, id="decide-title")
            stem = Text(printable(q.text))
            stem.append(f"\nkey {option_letter(q.key)}: ", style="dim")
            stem.append(printable(q.options[q.key]) if 0 <= q.key < q.n else "?", style="dim")
            yield Static(stem, id="decide-question")
            if self.action == FIX:
                yield Label("The right option (↑/↓)")
                yield OptionList(*self._option_rows(), id="decide-options")
            yield Label("Note (optional)")
            note = self.current.note if self.current is not None else ""
            yield Input(value=note, id="decide-note", placeholder="why, for whoever comes next")
            yield Static("", id="decide-error", markup=False)
            hint = "enter record · esc cancel · F1 keys"
            if self.action == FIX:
                hint = "↑/↓ option · enter record · tab note · esc cancel · F1 keys"
            yield Static(Text(hint, style="dim"), id="decide-hint")
        yield Footer()  # the dialog's own keys, not the vet screen's

    def _option_rows(self) -> list[Option]:
        q = self.question
        rows = []
        for i, option in enumerate(q.options):
            label = Text(f"{option_letter(i)}) {printable(option)}")
            if i == q.key:
                label.append("  (key now)", style="dim")
            if i == self.suggested:
                label.append("  (judge's suggestion)", style="bold")
            rows.append(Option(label, id=f"option-{i}", disabled=i == q.key))
        return rows

    def on_mount(self) -> None:
        if self.action == FIX:
            options = self.query_one("#decide-options", OptionList)
            chosen = default_fix_option(self.question, self.suggested)
            if self.current is not None and self.current.option is not None:
                chosen = default_fix_option(self.question, self.current.option)
            options.highlighted = chosen
            options.focus()
        else:
            self.query_one("#decide-note", Input).focus()

    @property
    def chosen_option(self) -> int | None:
        if self.action != FIX:
            return None
        return self.query_one("#decide-options", OptionList).highlighted

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """enter on an option records it, as the hint says (tab reaches the note first)."""
        self.action_save()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_save()

    def action_save(self) -> None:
        option = self.chosen_option
        if self.action == FIX and (option is None or option == self.question.key):
            self.query_one("#decide-error", Static).update(
                Text("choose the option that is right (not the key)", style="bold red")
            )
            return
        note = self.query_one("#decide-note", Input).value
        self.dismiss(DecisionRequest(self.action, option, note))

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReviewDesk:
    """The vet screen's review desk: its decisions, the review filter, "apply fixes".

    Decisions are loaded from the book when the screen is made and recorded as they are made;
    ``apply`` puts them on the run state's question records (the review column reads them)."""

    def __init__(self, book: DecisionBook | None, quiz: Quiz) -> None:
        self.book = book
        self.decisions: dict[str, Decision] = dict(book.load(quiz)) if book is not None else {}
        self.filter = "all"

    def apply(self, records: Iterable[QuestionRecord]) -> None:
        for record in records:
            decision = self.decisions.get(record.question.id)
            record.decision = carried(decision, record.question) if decision else None

    def matches(self, record: QuestionRecord) -> bool:
        return matches_review_filter(self.filter, record.decision)

    def cycle_filter(self) -> str:
        self.filter = REVIEW_FILTERS[(REVIEW_FILTERS.index(self.filter) + 1) % len(REVIEW_FILTERS)]
        return self.filter

    def open(self, screen: VetScreen, action: str) -> None:
        """The dialog for ``action`` on the question under the cursor."""
        record = screen.cursor_record()
        if record is None:
            return
        if self.book is None:
            screen.notify("No run store here: decisions cannot be kept", severity="warning")
            return
        question = record.question
        if action == FIX and question.n < 2:
            return
        score = record.score
        suggested = score.suggested_option if score is not None else None
        qid = question.id
        screen.app.push_screen(
            DecideScreen(
                question, record.number, action, suggested=suggested, current=record.decision
            ),
            callback=lambda request: self._decided(screen, qid, request),
        )

    def _decided(self, screen: VetScreen, qid: str, request: DecisionRequest | None) -> None:
        record = screen.state.questions.get(qid)
        if request is None or record is None or self.book is None:
            return
        started = screen.state.started
        run_id = started.run_id if started is not None else self.book.last_run_id(screen.quiz)
        try:
            decision = make_decision(
                record.question,
                request.action,
                option=request.option,
                note=request.note,
                run_id=run_id,
            )
            stored = self.book.record(decision, screen.quiz)
        except (QuiztuiError, OSError) as exc:
            screen.notify(printable(str(exc)), title="Not recorded", severity="error", markup=False)
            return
        self.decisions[qid] = stored
        record.decision = stored
        self._decided_toast(screen, record, f"{stored.label} recorded")
        screen.show_desk_keys()

    def _decided_toast(self, screen: VetScreen, record: QuestionRecord, what: str) -> None:
        """Redraw the question; the cursor stays on it. When the review filter now hides it, the
        rows are filtered at once and the toast says which question the cursor is on."""
        screen.state.dirty_questions.add(record.question.id)  # the flush redraws it
        where = ""
        if not self.matches(record):
            screen.refilter()  # the next question moves up under the cursor
            now = screen.cursor_record()
            shown = f"now on question {now.number}" if now is not None else "no question left"
            where = f" · the {self.filter!r} filter hides it: {shown}"
        screen.notify(
            f"Question {record.number}: {what}{where}",
            title="Review desk",
            markup=False,
            timeout=5,
        )

    def clear(self, screen: VetScreen) -> None:
        """Take back the decision about the question under the cursor (kept in the history)."""
        record = screen.cursor_record()
        if record is None or record.decision is None or self.book is None:
            return
        qid = record.question.id
        try:
            self.book.record(make_decision(record.question, CLEAR), screen.quiz)
        except (QuiztuiError, OSError) as exc:
            screen.notify(printable(str(exc)), title="Not cleared", severity="error", markup=False)
            return
        self.decisions.pop(qid, None)
        record.decision = None
        self._decided_toast(screen, record, "decision cleared")
        screen.show_desk_keys()

    def apply_fixes(self, screen: VetScreen) -> None:
        """Ask, then write every pending fix's key into the quiz file (a .bak beside it)."""
        if screen.running or screen.rejudging:
            screen.notify("Wait for the run to finish (or x to cancel it) first", timeout=5)
            return
        if screen.edits:
            screen.notify("Save (ctrl+s) the edited questions first", timeout=5)
            return
        bank = screen.bank
        if bank is None or bank.source_path is None:
            screen.notify("This quiz did not come from a file I can write", severity="error")
            return
        fixes = pending_fixes(screen.quiz, self.decisions)
        if not fixes:
            screen.notify("No fix to apply: mark a question o (fix) first", timeout=5)
            return
        name = Path(bank.source_path).name
        numbers = {q.id: i + 1 for i, q in enumerate(screen.quiz.questions)}
        changes = [
            f"  question {numbers[q.id]}: key {option_letter(q.key)} → {option_letter(option)}"
            f" {printable(q.options[option])[:40]}"
            for q, option in fixes[:5]
        ] + (["  …"] if len(fixes) > 5 else [])
        question = "\n".join(
            [
                f"Write {len(fixes)} fixed key(s) into {name}?",
                *changes,
                f"The file as it is now is kept as {name}.bak. y writes, n or enter cancels.",
            ]
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._write_fixes(screen)

        screen.app.push_screen(
            ConfirmQuitScreen(question, yes="Write", no="Cancel", safe_default=True),
            callback=answered,
        )

    def _write_fixes(self, screen: VetScreen) -> None:
        from quiztui.assemble.review_desk import apply_fixes
        from quiztui.formats.bank_io import load_bank

        bank = screen.bank
        assert bank is not None
        try:
            applied = apply_fixes(bank, screen.quiz, self.decisions)
        except (QuiztuiError, OSError) as exc:
            screen.notify(printable(str(exc)), title="Not written", severity="error", markup=False)
            return
        if applied is None:
            return
        screen.rekeyed({q.id: q.model_copy(update={"key": key}) for q, key in applied.fixed})
        try:
            screen.bank = load_bank(applied.path, bank.format, strict=False, columns=bank.columns)
        except QuiztuiError as exc:
            screen.bank = None
            screen.notify(printable(str(exc)), title="Written, but re-reading failed", markup=False)
            return
        screen.notify(
            f"Wrote {len(applied.fixed)} fixed key(s) to {applied.path.name} (backup:"
            f" {applied.backup.name}); r re-scores them"
            + ("" if screen.simulated else " (verdicts come from the cache)"),
            title="Fixes applied",
            markup=False,
            timeout=8,
        )


__all__ = [
    "ACCEPT",
    "DROP",
    "FIX",
    "REWRITE",
    "DecideScreen",
    "DecisionBook",
    "DecisionRequest",
    "ReviewDesk",
    "default_fix_option",
]
