"""Question detail: every option with its keyed label, the judge's verdict, P(true) and reason.

P(true) per option comes from the judge's token logprobs (— when it sent none); the graded score
is the pipeline's P(key is the answer) from those P(true), beside the verdict-based confidence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from quiztui.core.wrong_keys import worth_text
from quiztui.tui.help import dialog_help
from quiztui.tui.state import QuestionRecord
from quiztui.tui.widgets.cells import (
    BADGE_STYLES,
    confidence_text,
    one_line,
    option_letter,
    printable,
)
from quiztui.tui.widgets.tables import LINT_STYLES


def fitted(items: list[Text], width: int | None, indent: str = "") -> Text:
    """``items`` joined by `` · ``, a line broken between two items (never between a label and
    its value) when ``width`` cells are full; every line starts after ``indent`` (the first
    one's is the caller's)."""
    out = Text(end="")
    column = len(indent)
    for i, item in enumerate(items):
        if i:
            if width is not None and column + 3 + item.cell_len > width:
                out.append("\n" + indent)
                column = len(indent)
            else:
                out.append(" · ", style="dim")
                column += 3
        out.append_text(item)
        column += item.cell_len
    return out


def labelled(label: str, *value: str | tuple[str, str]) -> Text:
    """``label value``: a dim label and its value, kept together on one line."""
    return Text.assemble((f"{label} ", "dim"), *value, end="")


def summary_text(record: QuestionRecord, total: int, width: int | None = None) -> Text:
    q = record.question
    text = Text(end="")
    text.append(f"Question {record.number} of {total}", style="bold")
    text.append(f"  id {one_line(q.id)}", style="dim")
    if q.category:
        text.append(f"  · {one_line(q.category)}", style="dim")
    for name, value in q.metadata:  # a spreadsheet's or dataset's other columns (id, notes, ...)
        text.append(f"  · {one_line(name)}: {one_line(value)}", style="dim")
    text.append("\n")
    text.append(printable(q.text))  # literal: quiz text is untrusted
    text.append("\n\n")
    for finding in record.lint:
        text.append("lint ", style="dim")
        text.append(f"{finding.code} {finding.severity}", style=LINT_STYLES.get(finding.severity))
        text.append(f": {one_line(finding.message)}\n")
    if record.lint:
        text.append("\n")
    if (decision := record.decision) is not None:  # the review desk's (y / o / t / d)
        text.append("review ", style="dim")
        text.append(decision.label, style="bold")
        if decision.note:
            text.append(f": {one_line(decision.note)}")
        text.append("\n\n")
    score = record.score
    if score is None:
        judged = len(record.options)
        text.append("badge ", style="dim")
        text.append("pending", style=BADGE_STYLES["pending"])
        text.append(f" · {judged}/{q.n} options judged so far", style="dim")
        return text
    confidence = confidence_text(score.confidence)
    if score.interval is not None:
        lo, hi = score.interval
        confidence += f" [{lo:.2f}–{hi:.2f}]"
    items = [
        labelled("k", f"{score.k}/{score.n}"),
        labelled("badge", (str(score.badge), BADGE_STYLES.get(score.badge, ""))),
        labelled("confidence", confidence),
        labelled("judged", (f"{score.judged}/{score.n}", "dim")),
        labelled("graded", confidence_text(score.graded)),
    ]
    text.append_text(fitted(items, width))
    text.append("\n")
    if score.suggested_option is not None and 0 <= score.suggested_option < q.n:
        idx = score.suggested_option
        p = f", {score.suggested_p:.2f}" if score.suggested_p is not None else ""
        text.append("judge thinks ", style="bold")
        text.append(f"{option_letter(idx)}: {one_line(q.options[idx])}", style="bold")
        text.append(f" is the answer{p}", style="bold")
    else:
        text.append("posterior agrees with the key", style="dim")
    # what the figure is worth, in words (core/wrong_keys.worth_text): the same P(key wrong)
    # the table sorts by (s) and the header sums
    text.append("\n")
    worth = worth_text(1.0 - score.confidence, disagree=score.k < score.judged)
    text.append(worth, style="bold" if worth.endswith(("check it", "fix it")) else "dim")
    return text


def option_text(record: QuestionRecord, index: int, width: int | None = None) -> Text:
    q = record.question
    keyed = index == q.key
    text = Text(end="")
    text.append(f"{option_letter(index)}  ", style="bold")
    text.append(one_line(q.options[index]), style="bold" if keyed else "")
    if keyed:
        text.append("  ← key", style="bold")
    text.append("\n   ")
    items = [labelled("keyed", "true" if keyed else "false")]
    assertion = record.options.get(index)
    if assertion is None:
        items.append(labelled("verdict", ("not judged yet", "dim")))
        text.append_text(fitted(items, width, "   "))
        return text
    if assertion.verdict is None:
        items.append(labelled("verdict", ("unjudged", "bold magenta")))
    else:
        agrees = assertion.verdict == keyed
        items += [
            labelled("verdict", "TRUE" if assertion.verdict else "FALSE"),
            labelled("P(true)", confidence_text(assertion.p_true)),
            labelled("agrees", ("yes" if agrees else "no", "" if agrees else "bold red")),
        ]
    items.append(labelled("seq", (str(assertion.seq), "dim")))
    if assertion.cached:
        items.append(Text("cached", style="dim", end=""))
    text.append_text(fitted(items, width, "   "))
    text.append("\n   reason: ", style="dim")
    text.append(printable(assertion.reason) or "(none)")  # the judge's raw text, literally
    return text


class QuestionDetailScreen(ModalScreen[None]):
    """One question's record; the vet screen updates it live (``show_record``) during a run."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="detail.close"),
        Binding("j,down", "scroll_down", "Scroll down", id="detail.down", show=False),
        Binding("k,up", "scroll_up", "Scroll up", id="detail.up", show=False),
        Binding("e", "edit", "Edit and re-judge", id="detail.edit"),
        dialog_help("detail"),
    ]

    def __init__(
        self,
        record: QuestionRecord,
        total: int,
        *,
        edit: Callable[[QuestionRecord], None] | None = None,
    ) -> None:
        super().__init__()
        self.record = record
        self.total = total
        self.edit = edit  # opens the editor on this question (None: not editable here)
        self.width: int | None = None  # the text's width once laid out (lines break there)

    def compose(self) -> ComposeResult:
        with Vertical(id="detail-dialog"):
            with VerticalScroll(id="detail-scroll"):
                yield Static(summary_text(self.record, self.total), id="detail-summary")
                for index in range(self.record.question.n):
                    yield Static(
                        option_text(self.record, index),
                        classes="detail-option",
                        id=f"detail-option-{index}",
                    )
            hint = "esc close · j/k scroll" + (" · e edit and re-judge" if self.edit else "")
            yield Static(Text(hint, style="dim"), id="detail-hint")
        yield Footer()

    def show_record(self, record: QuestionRecord) -> None:
        """The question's newer state: the vet screen passes it on while verdicts arrive."""
        self.record = record
        if not self.is_mounted:
            return
        width = self.width
        self.query_one("#detail-summary", Static).update(summary_text(record, self.total, width))
        for index in range(record.question.n):
            for option in self.query(f"#detail-option-{index}").results(Static):
                option.update(option_text(record, index, width))

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Break the label · value lines at the text's width, between items."""
        width = self.query_one("#detail-summary", Static).content_region.width
        if width > 0 and width != self.width:
            self.width = width
            self.show_record(self.record)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "edit":
            return self.edit is not None  # not editable here (a stored run): not in the footer
        return True

    def action_close(self) -> None:
        self.dismiss(None)

    def action_edit(self) -> None:
        if self.edit is not None:
            self.dismiss(None)
            self.edit(self.record)

    def action_scroll_down(self) -> None:
        self.query_one("#detail-scroll", VerticalScroll).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one("#detail-scroll", VerticalScroll).scroll_up(animate=False)
