"""The vet screen: questions and verdicts filling live from the run's event stream.

Events are recorded in :class:`RunState` as they arrive; a timer flushes them to the tables at
most every ``flush_interval`` seconds, with one ``add_rows`` call (≤ ``MAX_ROWS_PER_FLUSH``
rows) for new verdicts and ``update_cell`` calls with stable keys for the questions. One table
call per verdict would cost ~40 ms of rendering each and drown the event loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from itertools import islice
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static
from textual.widgets.data_table import RowKey
from textual.worker import Worker, WorkerState

from quiztui.core.quiz import Quiz
from quiztui.errors import QuiztuiError
from quiztui.pipeline.events import RunStarted, VetEvent
from quiztui.tui.messages import RunStatusChanged
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.state import (
    CANCELLED,
    FAILED,
    FINISHED,
    IDLE,
    RUNNING,
    QuestionRecord,
    RunState,
)
from quiztui.tui.streams import drain
from quiztui.tui.widgets.cells import printable
from quiztui.tui.widgets.header import RunHeader
from quiztui.tui.widgets.stats import RunStats
from quiztui.tui.widgets.tables import QuestionsTable, VerdictsTable

BADGE_FILTERS = ("all", "poor", "questionable", "incomplete", "good", "pending")
MAX_ROWS_PER_FLUSH = 500
MAX_QUESTIONS_PER_FLUSH = 250  # question rows refreshed per flush (4 update_cell calls each)
# Events between forced yields, so a producer that never awaits cannot freeze the UI.


def error_message(error: BaseException | None) -> str:
    if error is None:
        return "the run stopped for an unknown reason"
    if isinstance(error, QuiztuiError):
        return str(error)
    detail = str(error)
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


class VetScreen(Screen[None]):
    """Main screen. Owns the run worker, the run state and the flush timer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "start_run", "Run", id="run.start"),
        Binding("x", "cancel_run", "Cancel", id="run.cancel"),
        Binding("f", "cycle_filter", "Filter", id="view.filter_cycle"),
        Binding("slash", "search", "Search", id="view.search"),
        # show=False keeps the footer (and its snapshots) as it was; F1 help and ctrl+p list it.
        Binding("m", "open_metrics", "Metrics", id="view.metrics", show=False),
        Binding("c", "open_calibrate", "Calibrate the judge", id="view.calibrate", show=False),
        Binding("escape", "clear_filter", "Clear filter", id="view.clear_filter", show=False),
    ]

    def __init__(
        self,
        quiz: Quiz,
        start_run: Callable[[], AsyncIterator[VetEvent]],
        *,
        judge_label: str,
        simulated: bool,
        calibration: str,
        autorun: bool,
        clock: Callable[[], float],
        flush_interval: float,
        fragility: dict[str, tuple[bool, str]] | None = None,
    ) -> None:
        super().__init__(id="vet")
        self.quiz = quiz
        self.start_run = start_run
        self.judge_label = judge_label
        self.simulated = simulated
        self.calibration = calibration
        self.autorun = autorun
        self.clock = clock
        self.flush_interval = flush_interval
        self.state = RunState(quiz, clock)
        # question id → (fragile, why), from the newest robustness run of this quiz
        self.fragility: dict[str, tuple[bool, str]] = dict(fragility or {})
        self._apply_fragility()
        self.badge_filter = "all"
        self.text_filter = ""
        self._run_token = 0
        self._run_worker: Worker[None] | None = None
        self._verdict_rows: dict[int, RowKey] = {}
        self._seq_by_row: dict[RowKey, int] = {}
        self._labels: tuple[str, str] = ("", "")
        self._shown_status = self.state.status

    # -- composition ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield RunHeader(
            title=self.quiz.title,
            judge_label=self.judge_label,
            simulated=self.simulated,
            calibration=self.calibration,
            id="header",
        )
        with Horizontal(id="questions-bar", classes="section-bar"):
            yield Static("", id="questions-label", markup=False)
            yield Input(placeholder="filter question text…", id="search")
        yield QuestionsTable(id="questions")
        yield Static("", id="verdicts-label", classes="section-bar", markup=False)
        yield VerdictsTable(id="verdicts")
        yield RunStats(self.state.total, id="stats")
        yield Footer()

    def on_mount(self) -> None:
        self.questions_table.show(self._visible_records())
        self._update_labels()
        self.query_one(RunStats).show(self.state)
        self.questions_table.focus()
        self.set_interval(self.flush_interval, self.flush, name="flush")
        if self.autorun:
            self.action_start_run()

    @property
    def questions_table(self) -> QuestionsTable:
        return self.query_one("#questions", QuestionsTable)

    @property
    def verdicts_table(self) -> VerdictsTable:
        return self.query_one("#verdicts", VerdictsTable)

    @property
    def running(self) -> bool:
        return self.state.status == RUNNING

    # -- run lifecycle ---------------------------------------------------------------------------

    def action_start_run(self) -> None:
        """Start a fresh run (a running one is cancelled by the exclusive worker group)."""
        self._run_token += 1
        self.state = RunState(self.quiz, self.clock)
        self._apply_fragility()
        self._verdict_rows.clear()
        self._seq_by_row.clear()
        self.verdicts_table.clear()
        self.questions_table.show(self._visible_records())
        self.state.begin()
        self._status_changed()
        self._run_worker = self._run(self._run_token)

    def _apply_fragility(self) -> None:
        for qid, record in self.state.questions.items():
            record.fragile = self.fragility.get(qid)

    def set_fragility(self, flags: dict[str, tuple[bool, str]]) -> None:
        """Show a robustness run's fragility flags beside the badges."""
        self.fragility = dict(flags)
        self._apply_fragility()
        if self.is_mounted:
            for record in self.state.questions.values():
                self.questions_table.refresh_question(record)

    def action_cancel_run(self) -> None:
        if self._run_worker is not None and self.running:
            self._run_worker.cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return True if self.running else None  # None: shown disabled
        return True

    @work(exclusive=True, exit_on_error=False, group="run")
    async def _run(self, token: int) -> None:
        def handle(event: VetEvent) -> None:
            self.state.apply(event)
            if isinstance(event, RunStarted):
                self.query_one(RunHeader).set_run(
                    judge_label=event.judge_label,
                    simulated=event.simulated,
                    calibration=event.calibration,
                )

        await drain(self.start_run(), handle, lambda: token == self._run_token)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The single place where a run's end (success, cancel, error) is handled."""
        if event.worker is not self._run_worker:
            return
        if event.state == WorkerState.SUCCESS:
            summary = self.state.summary
            status = summary.status if summary is not None else FINISHED
            self._end_run(status if status in (FINISHED, CANCELLED, FAILED) else FINISHED)
            if summary is not None and summary.status == FAILED:
                self.notify(
                    printable(summary.error or "the run failed"),
                    title="Run failed",
                    severity="error",
                    markup=False,
                    timeout=10,
                )
        elif event.state == WorkerState.CANCELLED:
            self._end_run(CANCELLED)
        elif event.state == WorkerState.ERROR:
            self._end_run(FAILED)
            self.notify(
                printable(error_message(event.worker.error)),
                title="Run failed",
                severity="error",
                markup=False,
                timeout=10,
            )

    def _end_run(self, status: str) -> None:
        self.state.end(status)
        self.flush()  # capped like every flush; the timer drains any backlog
        self._status_changed()

    def _status_changed(self) -> None:
        self.query_one(RunHeader).set_run(status=self.state.status)
        self.refresh_bindings()
        self.post_message(RunStatusChanged(self.state.status))

    # -- buffered flush ---------------------------------------------------------------------------

    def flush(self, limit: int | None = MAX_ROWS_PER_FLUSH) -> None:
        """Move buffered events to the widgets: one add_rows, a few update_cells, one stats line."""
        state = self.state
        if state.pending_seqs:
            batch = state.pending_seqs[:limit]  # a copy, also when limit is None
            del state.pending_seqs[: len(batch)]
            self._add_verdict_rows(batch)
        if state.changed_seqs:
            table = self.verdicts_table
            for seq in state.changed_seqs:
                row_key = self._verdict_rows.get(seq)
                if row_key is not None:
                    record = state.assertions[seq]
                    table.update_row(
                        row_key,
                        table.row_cells(record, state.questions.get(record.question_id)),
                    )
            state.changed_seqs.clear()
        if state.dirty_questions:
            if limit is None or len(state.dirty_questions) <= MAX_QUESTIONS_PER_FLUSH:
                dirty = set(state.dirty_questions)
                state.dirty_questions.clear()
            else:
                dirty = set(islice(state.dirty_questions, MAX_QUESTIONS_PER_FLUSH))
                state.dirty_questions.difference_update(dirty)
            self._refresh_questions(dirty)
            self._update_labels()
        if state.stats_dirty or state.status == RUNNING:
            state.stats_dirty = False
            self.query_one(RunStats).show(state)
            self._update_labels()

    def _add_verdict_rows(self, seqs: list[int]) -> None:
        state = self.state
        table = self.verdicts_table
        follow = table.row_count == 0 or table.cursor_row >= table.row_count - 1
        records = [state.assertions[seq] for seq in seqs]
        rows = [table.row_cells(r, state.questions.get(r.question_id)) for r in records]
        keys = table.add_rows(rows)
        self._verdict_rows.update(zip(seqs, keys, strict=True))
        self._seq_by_row.update(zip(keys, seqs, strict=True))
        if follow and table.row_count:
            table.move_cursor(row=table.row_count - 1, animate=False)

    def _refresh_questions(self, question_ids: set[str]) -> None:
        table = self.questions_table
        state = self.state
        if self._filtering:
            for qid in question_ids:
                record = state.questions.get(qid)
                if record is not None and self._matches(record) != (qid in table.rows):
                    table.show(self._visible_records())
                    return
        for qid in question_ids:
            record = state.questions.get(qid)
            if record is not None:
                table.refresh_question(record)

    # -- filtering ---------------------------------------------------------------------------

    @property
    def _filtering(self) -> bool:
        return self.badge_filter != "all" or bool(self.text_filter)

    def _matches(self, record: QuestionRecord) -> bool:
        if self.badge_filter != "all" and QuestionsTable.badge_of(record) != self.badge_filter:
            return False
        if self.text_filter:
            needle = self.text_filter.casefold()
            q = record.question
            return needle in q.text.casefold() or any(needle in o.casefold() for o in q.options)
        return True

    def _visible_records(self) -> list[QuestionRecord]:
        return [r for r in self.state.questions.values() if self._matches(r)]

    def set_badge_filter(self, badge: str) -> None:
        if badge not in BADGE_FILTERS:
            raise ValueError(f"unknown badge filter {badge!r}")
        self.badge_filter = badge
        self._apply_filter()

    def action_cycle_filter(self) -> None:
        i = BADGE_FILTERS.index(self.badge_filter)
        self.set_badge_filter(BADGE_FILTERS[(i + 1) % len(BADGE_FILTERS)])

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-open")
        search.focus()

    def action_clear_filter(self) -> None:
        """esc: in the search box, drop the text filter; elsewhere, drop every filter."""
        search = self.query_one("#search", Input)
        in_search = search.has_focus
        if not in_search:
            self.badge_filter = "all"
        search.value = ""  # Input.Changed clears text_filter and re-applies
        self.text_filter = ""
        self._apply_filter()
        if in_search:
            self._close_search()

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.text_filter = event.value.strip()
        self._apply_filter()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        self._close_search()

    def _close_search(self) -> None:
        search = self.query_one("#search", Input)
        if not search.value:
            search.remove_class("-open")
        self.questions_table.focus()

    def _apply_filter(self) -> None:
        self.questions_table.show(self._visible_records())
        self._update_labels()

    def _update_labels(self) -> None:
        shown = self.questions_table.row_count
        total = len(self.state.questions)
        label = Text(end="", no_wrap=True, overflow="ellipsis")
        label.append("Questions", style="bold")
        label.append(f"  {shown}/{total} shown · filter: ")
        active = self.badge_filter != "all"
        label.append(self.badge_filter, style="bold reverse" if active else "bold")
        if self.text_filter:
            label.append(" · text: ")
            label.append(repr(self.text_filter))
        label.append("  (f cycles, / searches)", style="dim")
        verdicts = Text(end="", no_wrap=True, overflow="ellipsis")
        verdicts.append("Verdicts", style="bold")
        verdicts.append(f"  {self.verdicts_table.row_count} shown · {self.state.done} received")
        if self.state.status == IDLE:
            verdicts.append("  (press r to start a run)", style="dim")
        labels = (label.plain, verdicts.plain)
        if labels == self._labels:
            return
        if labels[0] != self._labels[0]:
            self.query_one("#questions-label", Static).update(label)
        if labels[1] != self._labels[1]:
            self.query_one("#verdicts-label", Static).update(verdicts)
        self._labels = labels

    # -- detail ---------------------------------------------------------------------------

    def _record_for_row(self, table: DataTable[Any], row_key: RowKey) -> QuestionRecord | None:
        if table is self.questions_table:
            return self.state.questions.get(str(row_key.value))
        seq = self._seq_by_row.get(row_key)
        record = self.state.assertions.get(seq) if seq is not None else None
        return self.state.questions.get(record.question_id) if record is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        record = self._record_for_row(event.data_table, event.row_key)
        if record is not None:
            self.app.push_screen(QuestionDetailScreen(record, len(self.state.questions)))

    def action_open_metrics(self) -> None:
        """The metrics screen over this run; it reads ``self.state`` afresh on every refresh."""
        from quiztui.tui.screens.metrics import MetricsScreen  # lazy: loads plotext on first use

        if isinstance(self.app.screen, MetricsScreen):
            return
        profiles = getattr(self.app, "profiles", ())
        self.app.push_screen(MetricsScreen(self.quiz, lambda: self.state, profiles))

    def action_open_calibrate(self) -> None:
        """The Calibrate screen (one per app: its results stay when you come back)."""
        open_calibrate = getattr(self.app, "open_calibrate", None)
        if open_calibrate is not None:
            open_calibrate()

    def action_open_detail(self) -> None:
        table = self.verdicts_table if self.verdicts_table.has_focus else self.questions_table
        row_key = table.cursor_row_key
        if row_key is None:
            return
        record = self._record_for_row(table, row_key)
        if record is not None:
            self.app.push_screen(QuestionDetailScreen(record, len(self.state.questions)))
