"""The Quality ratings screen (``v``): every question rated 1–5 on five criteria (seed 004,
MIRROR), live. Not the review desk (the vet screen's y / o / t / d decisions): the TUI names
this screen "Quality ratings" everywhere.

``start(quiz, mode)`` (``assemble.review.review_starter`` behind a closure) yields a review run's events.
The table has one row per question from the start — its five final ratings, whether the two judges
converged (and at which iteration), and a ``REWRITE`` flag when a grammaticality, appropriateness
or relevance rating is at or below ``low_score``. Below it, the trajectory of the highlighted question: every iteration's judge,
scores, strengths and flaws (``v`` adds the raw replies), or the reply being written. ``s``
swaps in the run summary, with the agreement against human ratings beside the paper's figures.

The worker only records events in :class:`ReviewRecord` and :class:`ReviewProgress`; a timer
flushes what changed at most every ``flush_interval`` seconds. Nothing is computed here: scores,
convergence and agreement arrive in the events. Quiz text and replies are ``Text``, never markup.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Static

from quiztui.core.quiz import Question, Quiz
from quiztui.core.review import CRITERIA, MODES, SHORT, Iteration, ReviewOutcome
from quiztui.pipeline.review import (
    AGREEMENT_NOTES,
    IterationDone,
    QuestionReviewed,
    ReviewFinished,
    ReviewRetried,
    ReviewStarted,
    ReviewSummary,
    ReviewTextReceived,
    agreement_rows,
    converged_text,
    summary_lines,
)
from quiztui.tui.screens.run_screen import LiveRunScreen
from quiztui.tui.state import FAILED, FINISHED, IDLE, RUNNING
from quiztui.tui.widgets.cells import DASH, UNSCORED_STYLE, Cell, cell, one_line, printable
from quiztui.tui.widgets.header import STATUS_STYLES
from quiztui.tui.widgets.statics import show_text
from quiztui.tui.widgets.tables import ColumnSpec, NavTable

StartReview = Callable[[Quiz, str], AsyncIterator[Any]]

STREAM_KEEP = 3000  # characters of a reply being written kept for the trajectory pane
LOW_STYLE = "bold red"
UNAVAILABLE = (
    "Quality ratings are unavailable here: this screen was opened without a ratings runner."
    " Run the ratings command with --tui in a shell instead (quiztui --help lists it)."
)


# -- what the worker records --------------------------------------------------------------------


@dataclass
class ReviewRecord:
    """One question on the screen: its iterations as they come, then its outcome."""

    number: int  # 1-based position in the quiz
    question: Question
    iterations: list[Iteration] = field(default_factory=list)
    outcome: ReviewOutcome | None = None
    rewrite: bool = False
    streamed: str = ""  # the reply being written (cleared when its iteration is done)
    live: tuple[int, int] | None = None  # (iteration, judge) being written
    retries: int = 0
    stopped: bool = False  # the run ended before this question was reviewed

    @property
    def key(self) -> str:
        return self.question.id


@dataclass
class ReviewProgress:
    """The run, as its events told it."""

    status: str = IDLE
    mode: str = ""
    total: int = 0
    done: int = 0
    unscored: int = 0
    converged: int = 0
    not_converged: int = 0
    rewrite: int = 0
    retries: int = 0
    max_iterations: int = 0
    summary: ReviewSummary | None = None
    error: str | None = None


# -- cells --------------------------------------------------------------------------------------


def score_cell(value: int | None, low_score: int) -> Cell:
    if value is None:
        return cell(DASH, "dim")
    return cell(str(value), LOW_STYLE if value <= low_score else "")


def row_cells(record: ReviewRecord, low_score: int, max_iterations: int) -> dict[str, Cell]:
    o = record.outcome
    cells = {"num": cell(str(record.number)), "question": cell(record.question.text)}
    if o is None:
        for c in CRITERIA:
            cells[SHORT[c]] = cell("·", "dim")
        if record.stopped:
            state = "not run"
        elif record.live is not None:
            state = f"J{record.live[1]} #{record.live[0]}"
            state += f"/{max_iterations}" if max_iterations > 1 else ""
        elif record.iterations:
            state = f"#{len(record.iterations)} done"
        else:
            state = "waiting"
        cells["converged"] = cell(state, "dim italic")
        cells["rewrite"] = cell("")
        return cells
    for i, c in enumerate(CRITERIA):
        value = None if o.scores is None else o.scores[i]
        cells[SHORT[c]] = score_cell(value, low_score)
    if o.scores is None:
        cells["converged"] = cell("unscored", UNSCORED_STYLE)
    else:
        style = "" if o.converged is not False else "yellow"
        cells["converged"] = cell(converged_text(o), style)
    cells["rewrite"] = cell("REWRITE", LOW_STYLE) if record.rewrite else cell("")
    return cells


class ReviewTable(NavTable):
    """One row per question; the five ratings, convergence and the rewrite flag."""

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        ColumnSpec("num", "#", 3),
        ColumnSpec("question", "question", 12, flex=1),
        *(ColumnSpec(SHORT[c], SHORT[c], 4) for c in CRITERIA),
        ColumnSpec("converged", "converged", 9),
        ColumnSpec("rewrite", "rewrite?", 8),
    )


def _t(text: str, style: str = "") -> Text:
    return Text(printable(text), style=style)


def trajectory_renderable(
    record: ReviewRecord, low_score: int, max_iterations: int, raw: bool = False
) -> RenderableType:
    """The question, its context, and per iteration the judge, its five scores and, beneath,
    its strengths (+) and flaws (−); an unparsed iteration shows why (``raw``: the replies too)."""
    q, o = record.question, record.outcome
    head = Text()
    head.append(f"{record.number}. ", style="bold")
    head.append(printable(q.text), style="bold")
    head.append("\n")
    if q.context:
        head.append("context: ", style="dim")
        head.append(printable(q.context), style="italic")
        head.append("\n")
    if o is None:
        state = "not reviewed (the run stopped)" if record.stopped else "being reviewed…"
        head.append(state, style="dim")
    elif o.scores is None:
        head.append("UNSCORED", style=UNSCORED_STYLE)
        head.append(" · ", style="dim")
        head.append(printable(o.unscored or "no reason given"), style="magenta")
    elif o.converged is None:
        head.append("direct: one judge, one pass", style="dim")
    elif o.converged:
        head.append(
            f"converged at iteration {o.converged_at}: three ratings in a row with identical scores",
            style="green",
        )
    else:
        head.append(
            f"not converged after {len(o.iterations)} iterations; final scores are the latest given",
            style="yellow",
        )
    lines = Text()
    lines.append(" it  judge " + "".join(f"{SHORT[c]:>6}" for c in CRITERIA), style="bold")
    lines.append("    + strengths  − flaws", style="dim")
    for it in record.iterations:
        lines.append(f"\n{it.number:>3}  J{it.judge}    ")
        if it.scores is None:
            lines.append("".join(f"{DASH:>6}" for _ in CRITERIA), style=UNSCORED_STYLE)
            lines.append("\n       ")
            lines.append("FAILED" if it.failed else "UNPARSED", style=UNSCORED_STYLE)
            lines.append(f": {printable(it.unparsed or '')}", style="magenta")
            continue
        for v in it.scores:
            lines.append(f"{v:>6}", style=LOW_STYLE if v <= low_score else "")
        for sign, points, style in (("+", it.strengths, "green"), ("−", it.flaws, "yellow")):
            for point in points:
                lines.append(f"\n       {sign} ", style=style)
                lines.append(printable(point))
        if not it.strengths and not it.flaws:
            lines.append("\n       (no strengths or flaws listed)", style="dim")
    parts: list[RenderableType] = [head, lines]
    if record.live is not None and o is None:
        live = Text(f"J{record.live[1]} writing iteration {record.live[0]}: ", style="dim italic")
        tail = " ".join(record.streamed.split())
        live.append(printable(tail[-600:]) if tail else "…", style="italic")
        parts.append(live)
    if raw:
        for it in record.iterations:
            title = Text(
                f"\nraw reply, iteration {it.number} (J{it.judge}, {it.model})", style="bold"
            )
            title.append(f" · attempts {it.attempts}", style="dim")
            parts.extend([title, _t(it.reply or "(no reply recorded)")])
    return Group(*parts)


def summary_renderable(progress: ReviewProgress) -> RenderableType:
    """The run summary and, when human ratings were given, the agreement table."""
    s = progress.summary
    if s is None:
        text = Text("The summary appears when the run ends.", style="dim")
        if progress.error:
            text.append("\nfailed: ", style="bold red")
            text.append(printable(progress.error))
        return text
    parts: list[RenderableType] = [Text("\n".join(summary_lines(s)))]
    a = s.agreement
    if a is None:
        parts.append(
            Text(
                "\nNo human ratings: `quiztui review QUIZ --humans FILE` compares the judge with"
                " them (Pearson r, exact match, Fleiss' κ).",
                style="dim",
            )
        )
        return Group(*parts)
    title = Text(f"\nagreement with human ratings ({a.raters} raters, {a.questions} questions; ")
    title.append(printable(str(s.humans_source)), style="italic")
    title.append(")")
    rows = agreement_rows(a)
    table = Table(box=box.SIMPLE_HEAD, expand=True, pad_edge=False, show_edge=False)
    for i, name in enumerate(rows[0]):
        if i == 0:
            table.add_column(Text(name), no_wrap=True, min_width=len("appropriateness"))
        else:
            table.add_column(Text(name), justify="right", overflow="fold")
    for row in rows:
        values = list(row.values())
        table.add_row(*(Text(v, style="dim" if k >= 7 else "") for k, v in enumerate(values)))
    parts += [title, table, Text("\n".join(AGREEMENT_NOTES), style="dim")]
    return Group(*parts)


# -- the screen -----------------------------------------------------------------------------------


class ReviewScreen(LiveRunScreen):
    """Reviews a quiz (``r``); ``m`` switches direct/feedback for the next run."""

    BUSY_LABEL = (
        "A quality ratings run"  # the quit confirmation: "<label> is running. Quit anyway?"
    )
    RUN_GROUP = "review-run"
    FLUSH_TIMER = "review-flush"
    FAILED_TITLE = "Quality ratings failed"

    DEFAULT_CSS = """
    ReviewScreen { layout: vertical; }
    ReviewScreen #review-header {
        height: auto; background: $panel; text-wrap: nowrap; text-overflow: ellipsis;
    }
    ReviewScreen #review-table { height: 1fr; min-height: 4; }
    ReviewScreen #review-pane-title { height: 1; background: $boost; padding: 0 1; }
    ReviewScreen #review-pane { height: 1fr; min-height: 4; padding: 0 1; }
    ReviewScreen #review-pane:focus { background: $boost; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "start_run", "Run", id="ratings.run", tooltip="Rate every question"),
        Binding("x", "cancel_run", "Cancel", id="ratings.cancel"),
        Binding(
            "m", "next_mode", "Mode", id="ratings.mode", tooltip="direct / feedback (next run)"
        ),
        Binding("s", "toggle_summary", "Summary", id="ratings.summary"),
        Binding("v", "toggle_raw", "Raw replies", id="ratings.raw", show=False),
        Binding("escape", "close", "Back", id="ratings.close"),
        Binding("j", "scroll_pane(1)", "Scroll down", id="ratings.pane_down", show=False),
        Binding("k", "scroll_pane(-1)", "Scroll up", id="ratings.pane_up", show=False),
    ]

    def __init__(
        self,
        quiz: Quiz,
        start: StartReview | None,
        *,
        mode: str = "feedback",
        low_score: int = 2,
        limit: int | None = None,
        stored: Callable[[str], tuple[int, list[object]] | None] | None = None,
        autorun: bool = True,
        flush_interval: float = 0.1,
    ) -> None:
        super().__init__(id="review", flush_interval=flush_interval)
        self.quiz = quiz
        self.start = start
        self.stored = stored
        self.stored_run: int | None = None  # the stored review on show, until r runs a new one
        self.mode = mode if mode in MODES else MODES[-1]
        self.low_score = low_score
        self.questions = list(quiz.questions[:limit] if limit is not None else quiz.questions)
        self.autorun = autorun
        self.progress = ReviewProgress(mode=self.mode, total=len(self.questions))
        self.records: dict[str, ReviewRecord] = {}
        self.judge_labels: tuple[str, str | None] = ("", None)
        self.simulated = False
        self.show_summary = False
        self.show_raw = False
        self._dirty: set[str] = set()
        self._rows_stale = True
        self._header_dirty = True
        self._pane_dirty = True
        self._pane_key: str | None = None
        self._shown: dict[str, object] = {}
        self._reset_records()

    @property
    def run_status(self) -> str:
        return self.progress.status

    def compose(self) -> ComposeResult:
        yield Static("", id="review-header")
        yield ReviewTable(id="review-table")
        yield Static("", id="review-pane-title")
        with VerticalScroll(id="review-pane"):
            yield Static("", id="review-pane-body")
        yield Footer()

    def on_mount(self) -> None:
        self.table.focus()
        self.start_flush_timer()
        if not self.autorun and self.stored is not None:
            self._show_stored(self.stored(self.mode))
        self.flush()
        if self.start is None:
            self.notify_error(UNAVAILABLE, "Quality ratings unavailable")
        elif self.autorun:
            self.action_start_run()

    def _show_stored(self, stored: tuple[int, list[object]] | None) -> None:
        """Fill the screen from a stored review: its events, as its run sent them."""
        if stored is None:
            return
        self.stored_run, events = stored
        self.progress = ReviewProgress(mode=self.mode, total=len(self.questions))
        for event in events:
            self._apply(event)
        self.progress.status = FINISHED
        self._header_dirty = self._pane_dirty = True

    @property
    def table(self) -> ReviewTable:
        return self.query_one("#review-table", ReviewTable)

    def _reset_records(self) -> None:
        self.records = {q.id: ReviewRecord(n, q) for n, q in enumerate(self.questions, start=1)}
        self._rows_stale = True
        self._pane_dirty = True

    # -- runs ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_run":
            return True if self.start is not None and self.questions else None
        if action == "close":
            return self._pane_focused or self._over_another
        if action == "scroll_pane":
            return self._pane_focused
        return super().check_action(action, parameters)

    @property
    def _pane_focused(self) -> bool:
        return self.focused is not None and self.focused.id == "review-pane"

    @property
    def _over_another(self) -> bool:
        """Pushed over another screen (the vet app's), so esc can go back to it."""
        stack = self.app.screen_stack
        return self in stack and stack.index(self) > 0

    def action_start_run(self) -> None:
        """Review the quiz in the current mode (a running review is replaced)."""
        if self.start is None:
            self.notify_error(UNAVAILABLE, "Quality ratings unavailable")
            return
        if self.ask_cost_first():  # a paid judge: the dialog starts it on yes
            return
        self._reset_records()
        self.stored_run = None
        self.progress = ReviewProgress(status=RUNNING, mode=self.mode, total=len(self.questions))
        self._header_dirty = True
        self.refresh_bindings()
        start, quiz, mode = self.start, self.quiz, self.mode
        self.start_run_worker(lambda: start(quiz, mode), self._apply)
        self.flush()

    def _apply(self, event: object) -> None:
        """Record one event; the flush timer shows it."""
        p = self.progress
        if isinstance(event, ReviewStarted):
            self.judge_labels = (event.judge_label, event.judge2_label)
            self.simulated = event.simulated
            p.max_iterations = event.max_iterations
            self._header_dirty = True
        elif isinstance(event, ReviewTextReceived):
            record = self.records.get(event.question_id)
            if record is not None and record.outcome is None:
                if record.live != (event.iteration, event.judge):
                    record.live, record.streamed = (event.iteration, event.judge), ""
                record.streamed = (record.streamed + event.text)[-STREAM_KEEP:]
                self._changed(record)
        elif isinstance(event, ReviewRetried):
            p.retries += 1
            self._header_dirty = True
            record = self.records.get(event.question_id)
            if record is not None:
                record.retries += 1
        elif isinstance(event, IterationDone):
            record = self.records.get(event.question_id)
            if record is not None:
                record.iterations.append(event.iteration)
                record.live, record.streamed = None, ""
                self._changed(record)
        elif isinstance(event, QuestionReviewed):
            record = self.records.get(event.question.id)
            if record is not None:
                record.outcome, record.rewrite = event.outcome, event.rewrite
                record.iterations = list(event.outcome.iterations)
                record.live, record.streamed = None, ""
                self._changed(record)
            p.done += 1
            p.unscored += not event.outcome.scored
            p.converged += event.outcome.converged is True
            p.not_converged += event.outcome.converged is False
            p.rewrite += event.rewrite
            self._header_dirty = True
        elif isinstance(event, ReviewFinished):
            p.summary = event.summary
            self._header_dirty = self._pane_dirty = True

    def _changed(self, record: ReviewRecord) -> None:
        self._dirty.add(record.key)
        if record.key == self._pane_key:
            self._pane_dirty = True

    def run_succeeded(self) -> None:
        summary = self.progress.summary
        stopped = summary.stopped if summary is not None else None
        self.end_run(FAILED if stopped else FINISHED)
        if stopped:
            self.notify_error(stopped, "Quality ratings stopped")

    def end_run(self, status: str, error: str | None = None) -> None:
        if error is not None:
            self.progress.error = error
        self.progress.status = status
        for record in self.records.values():
            if record.outcome is None and not record.stopped:
                record.stopped, record.live = True, None
                self._changed(record)
        self._header_dirty = self._pane_dirty = True
        self.refresh_bindings()
        self.flush()

    # -- view ---------------------------------------------------------------------------------

    def action_next_mode(self) -> None:
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        self._header_dirty = True
        self.flush()
        if self.running:
            self.notify(f"Mode {self.mode}: applies to the next run (r).", markup=False)

    def action_toggle_summary(self) -> None:
        self.show_summary = not self.show_summary
        self._pane_dirty = True
        self.flush()

    def action_toggle_raw(self) -> None:
        self.show_raw = not self.show_raw
        self._pane_dirty = True
        self.flush()

    def action_close(self) -> None:
        """esc: from the trajectory back to the table; else back to the screen below."""
        if self._pane_focused:
            self.table.focus()
        elif self._over_another:
            self.dismiss(None)

    def action_scroll_pane(self, direction: int) -> None:
        pane = self.query_one("#review-pane", VerticalScroll)
        # immediate: a burst of key presses (held key, tmux) must add up, not all start from
        # the position before the next refresh.
        if direction > 0:
            pane.scroll_down(animate=False, immediate=True)
        else:
            pane.scroll_up(animate=False, immediate=True)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = str(event.row_key.value) if event.row_key is not None else None
        if key != self._pane_key:
            self._pane_key = key
            self._pane_dirty = True
            self.flush()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """enter: read the trajectory (j/k scroll it, esc comes back)."""
        self.show_summary = False
        self._pane_dirty = True
        self.flush()
        self.query_one("#review-pane", VerticalScroll).focus()

    # -- buffered flush -------------------------------------------------------------------------

    def flush(self) -> None:
        """Move recorded events to the widgets: rows, changed cells, the header, the pane."""
        table = self.table
        cap = self.progress.max_iterations
        if self._rows_stale:
            self._rows_stale = False
            self._dirty.clear()
            keep = table.cursor_row
            table.clear()
            for key, record in self.records.items():  # add_row with keys; add_rows has none
                cells = row_cells(record, self.low_score, cap)
                table.add_row(*(cells[c.key] for c in ReviewTable.COLUMNS), key=key)
            if table.row_count:
                table.move_cursor(row=min(keep, table.row_count - 1), animate=False)
        if self._dirty:
            for key in self._dirty:
                changed = self.records.get(key)
                if changed is None or key not in table.rows:
                    continue
                table.update_changed(key, row_cells(changed, self.low_score, cap))
            self._dirty.clear()
        if self._header_dirty:
            self._header_dirty = False
            show_text(self, self._shown, "#review-header", self._header_text())
        if self._pane_dirty:
            self._pane_dirty = False
            self._show_pane()

    def _show_pane(self) -> None:
        title = Text(no_wrap=True, overflow="ellipsis", end="")
        body: RenderableType
        if self.show_summary:
            title.append("Summary", style="bold")
            title.append("  (s: back to the trajectory)", style="dim")
            body = summary_renderable(self.progress)
        else:
            if self._pane_key is None and self.table.row_count:
                key = self.table.cursor_row_key
                self._pane_key = str(key.value) if key is not None else None
            record = self.records.get(self._pane_key or "")
            title.append("Trajectory", style="bold")
            if record is not None:
                title.append(f" of question {record.number}", style="bold")
            title.append(
                "  (enter: read it · v: raw replies · s: summary)"
                if not self.show_raw
                else "  (raw replies shown · v: hide)",
                style="dim",
            )
            if record is None:
                body = Text("No question highlighted.", style="dim")
            else:
                body = trajectory_renderable(
                    record, self.low_score, self.progress.max_iterations, self.show_raw
                )
        show_text(self, self._shown, "#review-pane-title", title)
        self.query_one("#review-pane-body", Static).update(body)

    def _header_text(self) -> Text:
        p = self.progress
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(" quality ratings ", style="bold reverse")
        text.append(" ")
        text.append(one_line(self.quiz.title), style="bold")
        text.append(f"  {len(self.questions)} questions", style="dim")
        text.append("  ")
        text.append(f"[{p.status}]", style=STATUS_STYLES.get(p.status, ""))
        if self.stored_run is not None:
            text.append(f"  stored run #{self.stored_run} · r runs it again", style="dim")
        text.append("\n")
        if self.simulated:
            text.append(" SIMULATED ", style="bold reverse yellow")
            text.append(" ")
        mode = p.mode if p.status != IDLE else self.mode
        text.append("mode ", style="dim")
        text.append(mode, style="bold")
        if mode == "feedback" and p.max_iterations:
            text.append(f" (≤ {p.max_iterations} iterations)", style="dim")
        if self.mode != mode:
            text.append(f" → {self.mode} next run", style="italic")
        first, second = self.judge_labels
        text.append("  judges: ", style="dim")
        if first:
            text.append(one_line(first))
            if second:
                text.append(" ⇄ ", style="dim")
                text.append(one_line(second))
        else:
            text.append("(known once a run starts)", style="dim")
        text.append("\n ")
        if p.status == IDLE:
            text.append("press r to rate every question", style="dim")
            return text
        text.append(f"rated {p.done}/{p.total}", style="bold")
        if p.mode == "feedback":
            text.append(f" · converged {p.converged} · not converged {p.not_converged}")
        text.append(" · unscored ")
        text.append(str(p.unscored), style=UNSCORED_STYLE if p.unscored else "")
        text.append(" · rewrite ")
        text.append(str(p.rewrite), style=LOW_STYLE if p.rewrite else "")
        text.append(f" (gram/appr/rel ≤ {self.low_score}) · retries and re-asks {p.retries}")
        return text

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        """Commands for the palette (``Prefix: verb``), used by the review app's provider."""
        return [
            (
                "Run: rate every question",
                "Rate every question on the five criteria (r)",
                self.action_start_run,
            ),
            ("Run: cancel", "Cancel the ratings run; rated rows stay (x)", self.action_cancel_run),
            (
                "Ratings: switch mode",
                "direct / feedback for the next run (m)",
                self.action_next_mode,
            ),
            (
                "View: summary",
                "The run summary and agreement with humans (s)",
                self.action_toggle_summary,
            ),
            (
                "View: raw replies",
                "Show the judges' raw replies in the trajectory (v)",
                self.action_toggle_raw,
            ),
        ]


__all__ = [
    "ReviewProgress",
    "ReviewRecord",
    "ReviewScreen",
    "ReviewTable",
    "row_cells",
    "summary_renderable",
    "trajectory_renderable",
]
