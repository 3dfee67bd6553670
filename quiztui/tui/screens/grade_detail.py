"""One graded answer in full: question, reference, candidate, score (and, with a saved
calibration, the calibrated score and which calibration mapped it), reasoning, facts, raw reply.

For the ``facts`` grader a table lists each reference fact with what the judge said (0, 1 or
unscored), the weight (probability of the token it wrote), P(1) from the logprobs and the value
that went into the mean. Everything from the answer file or the model is shown as ``Text``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from quiztui.core.grading import LLM_GRADERS, FactScore, GradeOutcome
from quiztui.tui.help import dialog_help
from quiztui.tui.widgets.cells import DASH, UNSCORED_STYLE, one_line, printable, score_text

if TYPE_CHECKING:
    from quiztui.tui.screens.grade import GradeRecord


def _num(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def fact_cells(fact: FactScore) -> tuple[str, str, str, str, str]:
    """(fact, said, weight, P(1), value) as the detail table shows them."""
    said = "unscored" if fact.score is None else str(fact.score)
    return (fact.fact, said, _num(fact.weight), _num(fact.p_one), _num(fact.value))


def facts_table(outcome: GradeOutcome) -> Table:
    table = Table(box=box.SIMPLE_HEAD, expand=True, pad_edge=False, show_edge=False)
    table.add_column(Text("fact"), ratio=1, overflow="fold")
    for name in ("said", "weight", "P(1)", "value"):
        table.add_column(Text(name), justify="right", no_wrap=True)
    for fact in outcome.facts:
        text, said, weight, p_one, value = fact_cells(fact)
        fact_text = Text(printable(text))
        if fact.score is None and fact.reason:
            fact_text.append(f"\n{printable(fact.reason)}", style="magenta")
        table.add_row(
            fact_text,
            Text(said, style=UNSCORED_STYLE if fact.score is None else "bold"),
            Text(weight),
            Text(p_one),
            Text(value),
        )
    return table


def _section(text: Text, title: str, body: str, empty: str = "(empty)") -> None:
    text.append(f"\n{title}\n", style="bold underline")
    text.append(printable(body) if body else empty, style="" if body else "dim")
    text.append("\n")


def head_text(record: GradeRecord) -> Text:
    item, o = record.item, record.outcome
    text = Text(end="")
    text.append(f"Answer {one_line(item.id)}", style="bold")
    text.append(f"  grader {record.grader}", style="dim")
    if record.split:
        text.append(f" · {record.split} split", style="dim")
    if item.human is not None:
        text.append(f" · human score {item.human:g}", style="dim")
    text.append("\n")
    if o is None:
        state = "not graded (the run stopped)" if record.stopped else "being graded…"
        text.append(state, style="bold dim")
    elif not o.scored:
        text.append("UNSCORED", style=UNSCORED_STYLE)
        text.append(" · reason: ", style="dim")
        text.append(printable(o.unscored or "no reason given"), style="magenta")
    else:
        text.append("score ", style="dim")
        text.append(score_text(o), style="bold")
        text.append(" · label ", style="dim")
        text.append(one_line(o.label), style="bold")
        if o.normalised is not None:
            text.append(f" · {o.normalised:.2f} on 0-1", style="dim")
    cal = record.calibration
    if cal is not None:
        text.append("\n")
        text.append(f"calibrated ({cal.scale}) ", style="dim")
        text.append(DASH if record.calibrated is None else f"{record.calibrated:.2f}", style="bold")
        text.append(f" · {one_line(cal.label)}", style="dim")
    text.append("\n")
    _section(text, "Question", item.question)
    _section(text, "Reference", item.reference)
    for alias in item.aliases:
        text.append("also accepted: ", style="dim")
        text.append(printable(alias))
        text.append("\n")
    _section(text, "Candidate", item.candidate)
    if o is not None:
        _section(text, "Reasoning", o.reasoning)
    text.rstrip()
    return text


def tail_text(record: GradeRecord) -> Text:
    o = record.outcome
    text = Text(end="")
    if o is None:
        _section(text, "Reply so far", record.streamed)
        return text
    if o.grader not in LLM_GRADERS:
        text.append("\nAn offline grader: no model was asked.", style="dim")
        return text
    _section(text, "Raw reply", o.reply, "(none recorded for this answer)")
    text.append("\n")
    text.append(f"attempts {o.attempts}", style="dim")
    text.append(f" · tokens {o.tokens_in:,} in / {o.tokens_out:,} out", style="dim")
    text.append(f" · retries and re-asks seen {record.retries}", style="dim")
    return text


class GradeDetailScreen(ModalScreen[None]):
    """A snapshot of one answer's record at the moment it was opened."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="grade_detail.close"),
        Binding("j,down", "scroll_down", "Scroll down", id="grade_detail.down", show=False),
        Binding("k,up", "scroll_up", "Scroll up", id="grade_detail.up", show=False),
        dialog_help("grade_detail"),
    ]

    def __init__(self, record: GradeRecord) -> None:
        super().__init__()
        self.record = record

    def compose(self) -> ComposeResult:
        o = self.record.outcome
        with Vertical(id="grade-detail-dialog"):
            with VerticalScroll(id="grade-detail-scroll"):
                yield Static(head_text(self.record), id="grade-detail-head")
                if o is not None and o.facts:
                    covered = sum(1 for f in o.facts if f.score == 1)
                    title = Text(
                        f"Facts ({covered} of {len(o.facts)} covered; value = P(1) when the"
                        " judge's logprobs came back, else the 0/1 it said)",
                        style="bold",
                    )
                    yield Static(title, id="grade-detail-facts-title")
                    yield Static(facts_table(o), id="grade-detail-facts")
                yield Static(tail_text(self.record), id="grade-detail-tail")
            yield Static(Text("esc close · j/k scroll", style="dim"), id="grade-detail-hint")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll_down(self) -> None:
        self.query_one("#grade-detail-scroll", VerticalScroll).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one("#grade-detail-scroll", VerticalScroll).scroll_up(animate=False)


__all__ = ["GradeDetailScreen", "fact_cells", "facts_table"]
