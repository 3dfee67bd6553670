"""The comparison of two runs of one quiz: agreement, Cohen's κ, counts, the disagreements.

Everything shown comes from :func:`quiztui.core.compare.compare_runs` (through
``pipeline.history.compare_stored``); the screen computes nothing. The table lists the questions
on which the runs differ — a verdict on some option, the badge or the suggested option — with
each run's verdicts per option (T/F, ? unjudged, · never sent; options on which they differ in
bold red). ``enter`` opens a question with both sides' verdicts and reasons; ``escape`` goes
back. Quiz text and judge reasons are untrusted and shown as ``Text`` only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Static

from quiztui.core.compare import Comparison, QuestionDiff
from quiztui.tui.help import dialog_help
from quiztui.tui.widgets.cells import (
    BADGE_STYLES,
    DASH,
    Cell,
    badge_cell,
    cell,
    confidence_text,
    judge_text,
    one_line,
    option_letter,
    printable,
)
from quiztui.tui.widgets.tables import ColumnSpec, NavTable

if TYPE_CHECKING:
    from quiztui.pipeline.events import QuestionSummary
    from quiztui.pipeline.history import LoadedRun, RunComparison


def ratio(value: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _judge_line(text: Text, name: str, loaded: LoadedRun) -> None:
    r = loaded.record
    text.append(f"\n{name} ", style="bold")
    text.append(f"run {r.id} ")
    judge_text(text, r.simulated, r.judge_label)
    if loaded.note:
        text.append(f" ({r.status}: rebuilt from its verdicts)", style="italic")


def comparison_header(result: RunComparison) -> Text:
    c = result.comparison
    text = Text(end="")
    text.append(f"Run {c.run_a} vs run {c.run_b}", style="bold")
    text.append(" · ")
    text.append(one_line(result.a.record.quiz_title), style="bold")
    text.append(f" · {c.questions} questions · {c.assertions} assertions", style="dim")
    _judge_line(text, "A", result.a)
    _judge_line(text, "B", result.b)
    text.append("\nverdict agreement ")
    text.append(ratio(c.agreement), style="bold")
    text.append(f" ({c.agreed}/{c.both_judged} judged by both) · Cohen's κ ")
    text.append(ratio(c.kappa), style="bold")
    names = ("good", "questionable", "poor", "incomplete")
    text.append(f"\n{'verdicts':<9}{'B TRUE':>7}{'B FALSE':>8}   {'badges':<7}")
    for name in names:
        text.append(f"{name[:5]:>6}", style=BADGE_STYLES.get(name, ""))
    text.append(" · same ")
    text.append(f"{c.badges_agreed}/{c.questions}", style="bold")
    rows = (
        ("A TRUE", c.tt, c.tf, "A", c.badge_counts_a),
        ("A FALSE", c.ft, c.ff, "B", c.badge_counts_b),
    )
    for label, left, right, name_of_run, badges in rows:
        text.append(f"\n{label:<9}{left:>7}{right:>8}   {name_of_run:<7}")
        for name in names:
            text.append(f"{badges.get(name, 0):>6}")
    if c.unjudged_pairs:
        text.append(f" · {c.unjudged_pairs} assertion(s) unjudged by a run: left out", style="dim")
    if c.only_in_a or c.only_in_b:
        text.append(
            f"\nnot compared: {len(c.only_in_a)} question(s) only in A, {len(c.only_in_b)} only in B",
            style="bold yellow",
        )
    return text


def verdict_letters(verdicts: Sequence[bool | None], differing: Sequence[int]) -> Cell:
    out = cell("")
    for i, v in enumerate(verdicts):
        letter = "?" if v is None else "T" if v else "F"
        out.append(letter, style="bold red" if i in differing else "")
    return out


def suggestion_text(index: int | None) -> str:
    return DASH if index is None else option_letter(index)


class DiffTable(NavTable):
    """One row per disagreeing question: both badges, suggestions and verdicts per option."""

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        ColumnSpec("question", "question", 12, flex=1),
        ColumnSpec("key", "key", 3),
        ColumnSpec("badge_a", "badge A", 12),
        ColumnSpec("badge_b", "badge B", 12),
        ColumnSpec("suggested", "sug A/B", 7),
        ColumnSpec("verdicts_a", "A says", 6),
        ColumnSpec("verdicts_b", "B says", 6),
    )

    @staticmethod
    def row_cells(number: int, d: QuestionDiff) -> list[Cell]:
        suggested = cell(f"{suggestion_text(d.suggested_a)} / {suggestion_text(d.suggested_b)}")
        if d.suggestion_differs:
            suggested.stylize("bold")
        return [
            cell(f"{number}. {d.text}"),
            cell(option_letter(d.key)),
            badge_cell(d.badge_a),
            badge_cell(d.badge_b),
            suggested,
            verdict_letters(d.verdicts_a, d.differing_options),
            verdict_letters(d.verdicts_b, d.differing_options),
        ]


class CompareScreen(Screen[None]):
    """Two runs compared; ``enter`` on a disagreement shows the question with both sides."""

    DEFAULT_CSS = """
    CompareScreen { layout: vertical; }
    #compare-header {
        height: auto; background: $panel; padding: 0 1;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    #compare-bar { height: 1; background: $boost; padding: 0 1; }
    #compare-table { height: 1fr; min-height: 3; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="compare.close"),
    ]

    def __init__(self, result: RunComparison) -> None:
        super().__init__()
        self.result = result
        qs = result.a.summary.questions
        self.numbers = {q.question_id: i for i, q in enumerate(qs, start=1)}

    @property
    def comparison(self) -> Comparison:
        return self.result.comparison

    def compose(self) -> ComposeResult:
        yield Static(comparison_header(self.result), id="compare-header")
        n = len(self.comparison.disagreements)
        bar = Text(f"Disagreements · {n} question(s)", style="bold")
        bar.append(" · enter: both sides · red: judged differently", style="dim")
        yield Static(bar, id="compare-bar")
        yield DiffTable(id="compare-table")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#compare-table", DiffTable)
        for d in self.comparison.disagreements:
            number = self.numbers.get(d.question_id, 0)
            table.add_row(*DiffTable.row_cells(number, d), key=d.question_id)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        diff = next(
            (d for d in self.comparison.disagreements if d.question_id == event.row_key.value),
            None,
        )
        if diff is not None:
            self.app.push_screen(CompareDetailScreen(self.result, diff))

    def action_close(self) -> None:
        self.app.pop_screen()


def _question(loaded: LoadedRun, question_id: str) -> QuestionSummary | None:
    return next((q for q in loaded.summary.questions if q.question_id == question_id), None)


def _side_text(text: Text, name: str, verdict: bool | None, reason: str, differs: bool) -> None:
    text.append(f"\n   {name} ", style="bold")
    if verdict is None:
        text.append("unjudged", style="bold magenta")
    else:
        text.append("TRUE " if verdict else "FALSE", style="bold red" if differs else "")
    text.append("  ")
    text.append(printable(reason) or "(no reason)", style="dim" if not reason else "")


def diff_text(result: RunComparison, d: QuestionDiff) -> tuple[Text, list[Text]]:
    """The question's summary line and one block per option, both sides' verdicts and reasons."""
    qa, qb = _question(result.a, d.question_id), _question(result.b, d.question_id)
    head = Text(end="")
    head.append(f"Question {one_line(d.question_id)}", style="bold")
    head.append(
        f"  · A run {result.comparison.run_a} · B run {result.comparison.run_b}", style="dim"
    )
    head.append("\n")
    head.append(printable(d.text))
    for name, badge, conf, sug in (
        ("A", d.badge_a, d.confidence_a, d.suggested_a),
        ("B", d.badge_b, d.confidence_b, d.suggested_b),
    ):
        head.append(f"\n{name} ", style="bold")
        head.append(badge, style=BADGE_STYLES.get(badge, ""))
        head.append(f" · confidence {confidence_text(conf)} · suggests ")
        head.append(DASH if sug is None else f"{option_letter(sug)}: {one_line(d.options[sug])}")
    blocks = []
    for i, option in enumerate(d.options):
        block = Text(end="")
        block.append(f"{option_letter(i)}  ", style="bold")
        block.append(one_line(option), style="bold" if i == d.key else "")
        if i == d.key:
            block.append("  ← key", style="bold")
        differs = i in d.differing_options
        if differs:
            block.append("  ≠ judged differently", style="bold red")
        for name, q, verdicts in (("A", qa, d.verdicts_a), ("B", qb, d.verdicts_b)):
            reason = q.reasons[i] if q is not None and i < len(q.reasons) else ""
            _side_text(block, name, verdicts[i], reason, differs)
        blocks.append(block)
    return head, blocks


class CompareDetailScreen(ModalScreen[None]):
    """One disagreeing question: each option with run A's and run B's verdict and reason."""

    DEFAULT_CSS = """
    CompareDetailScreen { align: center middle; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="compare.detail.close"),
        Binding("j,down", "scroll_down", "Scroll down", id="compare.detail.down", show=False),
        Binding("k,up", "scroll_up", "Scroll up", id="compare.detail.up", show=False),
        dialog_help("compare.detail"),
    ]

    def __init__(self, result: RunComparison, diff: QuestionDiff) -> None:
        super().__init__()
        self.result = result
        self.diff = diff

    def compose(self) -> ComposeResult:
        head, blocks = diff_text(self.result, self.diff)
        with Vertical(id="detail-dialog"):
            with VerticalScroll(id="detail-scroll"):
                yield Static(head, id="detail-summary")
                for i, block in enumerate(blocks):
                    yield Static(block, classes="detail-option", id=f"compare-option-{i}")
            yield Static(Text("esc close · j/k scroll", style="dim"), id="detail-hint")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll_down(self) -> None:
        self.query_one("#detail-scroll", VerticalScroll).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one("#detail-scroll", VerticalScroll).scroll_up(animate=False)


__all__ = ["CompareDetailScreen", "CompareScreen", "DiffTable", "comparison_header"]
