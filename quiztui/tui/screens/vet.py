"""The vet screen: questions and verdicts filling live from the run's event stream.

Events are recorded in :class:`RunState` as they arrive; a timer flushes them to the tables at
most every ``flush_interval`` seconds, with one ``add_rows`` call (≤ ``MAX_ROWS_PER_FLUSH``
rows) for new verdicts and ``update_cell`` calls with stable keys for the questions. One table
call per verdict would cost ~40 ms of rendering each and drown the event loop. The verdicts table
is windowed (widgets/verdict_window.py): it holds the run's records and renders only the rows on
screen, so a 100,000-assertion run costs a list append per verdict.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import AsyncIterator, Callable
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Input, Static
from textual.widgets.data_table import RowKey
from textual.worker import Worker, WorkerState

from quiztui.core.bank import Bank, Item, apply_edit, blank_number, item_index
from quiztui.core.estimate import Estimate
from quiztui.core.figures import judge_rates_text
from quiztui.core.lint import LintReport
from quiztui.core.quiz import Question, Quiz, Unjudged
from quiztui.errors import QuiztuiError
from quiztui.pipeline.events import (
    AssertionUnjudged,
    BatchFailed,
    BatchRetried,
    ProviderBatchStatus,
    QuestionScored,
    RunStarted,
    UsageUpdated,
    VerdictReceived,
    VetEvent,
)
from quiztui.tui.messages import RunStatusChanged
from quiztui.tui.screens.decide import ReviewDesk
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.screens.edit import Edit, EditQuestionScreen
from quiztui.tui.screens.run_screen import LiveRunScreen, error_message
from quiztui.tui.state import (
    CANCELLED,
    FAILED,
    FINISHED,
    IDLE,
    RUNNING,
    STOPPED,
    QuestionRecord,
    RunState,
)
from quiztui.tui.streams import drain
from quiztui.tui.widgets.cells import one_line, option_letter, printable
from quiztui.tui.widgets.header import RunHeader
from quiztui.tui.widgets.stats import RunStats
from quiztui.tui.widgets.tables import QuestionsTable
from quiztui.tui.widgets.verdict_window import VerdictsTable

if TYPE_CHECKING:
    from quiztui.tui.services import AppServices


def preview_text(record: QuestionRecord) -> Text:
    """``Q3 key B: Canberra · judge suggests C: Sydney (0.91)``, every text whole and literal."""
    q = record.question
    text = Text(end="")
    text.append(f"Q{record.number} ", style="bold")
    text.append("key ", style="dim")
    if 0 <= q.key < q.n:
        text.append(f"{option_letter(q.key)}: {one_line(q.options[q.key])}", style="bold")
    else:
        text.append("?")
    score = record.score
    if score is None:
        text.append(" · not judged yet", style="dim")
    elif score.suggested_option is not None and 0 <= score.suggested_option < q.n:
        idx = score.suggested_option
        text.append(" · judge suggests ", style="dim")
        text.append(f"{option_letter(idx)}: {one_line(q.options[idx])}", style="bold yellow")
        if score.suggested_p is not None:
            text.append(f" ({score.suggested_p:.2f})")
    else:
        text.append(" · the judge agrees with the key", style="dim")
    return text


BADGE_FILTERS = ("all", "poor", "questionable", "incomplete", "good", "pending")
# While the review desk is in use (a decision made, or its filter on) the footer shows its keys,
# with these short names, in place of the filter and search keys (which still work).
DESK_FOOTER = {
    "review.accept": "accept",
    "review.fix": "fix",
    "review.rewrite": "rewrite",
    "review.drop": "drop",
    "review.clear": "undo",
    "review.filter": "desk",
    "review.apply": "apply",
}
DESK_MAKES_ROOM = ("view.filter_cycle", "view.search", "run.start", "run.cancel")
MAX_ROWS_PER_FLUSH = 20_000  # the verdicts table is windowed: adding a row is a list append
MAX_QUESTIONS_PER_FLUSH = 400  # question rows refreshed per flush (a few update_cells each)
# While a run streams, question rows are refreshed at most this often (seconds): a questions-table
# frame is the costly one, verdict rows keep the flush interval.
QUESTIONS_EVERY = 0.2


class VetScreen(LiveRunScreen):
    """Main screen. Owns the run state; the run worker and the flush timer are the base's."""

    RUN_GROUP = "run"
    FLUSH_TIMER = "flush"
    FAILED_TITLE = "Run failed"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "start_run", "Run", id="run.start"),
        Binding("x", "cancel_run", "Cancel", id="run.cancel"),
        Binding("f", "cycle_filter", "Filter", id="view.filter_cycle"),
        Binding("slash", "search", "Search", id="view.search"),
        # show=False keeps the footer (and its snapshots) as it was; F1 help and ctrl+p list it.
        Binding("m", "open_metrics", "Metrics", id="view.metrics", show=False),
        Binding("c", "open_calibrate", "Calibrate the judge", id="view.calibrate", show=False),
        Binding("escape", "clear_filter", "Clear filter", id="view.clear_filter", show=False),
        Binding("e", "edit_question", "Edit question", id="edit.open", show=False),
        Binding("ctrl+s", "save_quiz", "Save edits", id="edit.write", show=False),
        Binding("w", "toggle_columns", "All columns", id="view.columns", show=False),
        Binding(
            "s",
            "toggle_order",
            "Order: likeliest wrong key first / quiz order",
            id="view.order",
            show=False,
        ),
        # The review desk (screens/decide.py): one key per decision, a filter, apply fixes.
        Binding(
            "y", "decide('accept')", "Review desk: accept the key", id="review.accept", show=False
        ),
        Binding(
            "o",
            "decide('fix')",
            "Review desk: fix (choose the right option)",
            id="review.fix",
            show=False,
        ),
        Binding(
            "t",
            "decide('rewrite')",
            "Review desk: needs a rewrite",
            id="review.rewrite",
            show=False,
        ),
        Binding(
            "d", "decide('drop')", "Review desk: drop the question", id="review.drop", show=False
        ),
        Binding(
            "u", "clear_decision", "Review desk: clear the decision", id="review.clear", show=False
        ),
        Binding("n", "cycle_review_filter", "Review desk: filter", id="review.filter", show=False),
        Binding(
            "A",
            "apply_fixes",
            "Review desk: apply fixes to the file",
            id="review.apply",
            show=False,
        ),
    ]

    def __init__(
        self,
        quiz: Quiz,
        services: AppServices,
        *,
        autorun: bool,
        clock: Callable[[], float],
        flush_interval: float,
    ) -> None:
        super().__init__(id="vet", flush_interval=flush_interval)
        # ``lint(quiz)`` is the offline lint with the configured rules (None: no Lint column data)
        self.lint = services.lint
        self.lint_report: LintReport | None = None  # filled by a thread worker after mount
        self.quiz = quiz
        # The file's items (for saving edits back in its own format) and the edited ones by index.
        self.bank: Bank | None = services.bank
        self.edits: dict[int, Item] = {}
        # question id → (the question as the file has it, its true option's index) for the
        # edits not saved yet: the truth file beside the quiz follows them on save.
        self._saved_as: dict[str, tuple[Question, int]] = {}
        # ``start_rejudge(quiz)`` judges a one-question quiz (None: editing re-judges nothing).
        self.start_rejudge = services.start_rejudge
        self._rejudge_worker: Worker[None] | None = None
        self._rejudging: str | None = None  # the question id being re-judged
        self.start_run = services.start_run
        self.start_edited_run = services.start_edited_run
        self.opened_quiz = quiz  # what ``start_run`` judges; ``self.quiz`` follows the edits
        self.judge_label = services.judge_label
        self.simulated = services.simulated
        self.simulated_note = services.simulated_note
        self.calibration = services.calibration
        self.prior_label = services.prior  # prior = "auto": the estimate, once a run has ended
        self.autorun = autorun
        self.pre_estimate = services.estimate  # shown while a paid judge waits for r
        self.clock = clock
        self.state = RunState(quiz, clock)
        # question id → (fragile, why), from the newest robustness run of this quiz
        self.fragility: dict[str, tuple[bool, str]] = dict(services.fragility)
        self._apply_fragility()
        self._apply_lint()
        self.desk = ReviewDesk(services.decisions, quiz)
        self.desk.apply(self.state.questions.values())
        self._desk_keys_shown = False
        # the desk's bindings' descriptions as F1 shows them (the footer's are short)
        self._long = {b.id: b.description for b in self.BINDINGS if isinstance(b, Binding) and b.id}
        self.badge_filter = "all"
        self.wrong_first = False  # s: questions ordered by P(key wrong), likeliest first
        self.text_filter = ""
        self._labels: tuple[str, str] = ("", "")
        self._shown_status = self.state.status
        self._questions_flushed = 0.0  # time.monotonic() of the last question-row refresh
        self._collector_paused = False  # gc disabled by this screen for a run (see below)

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
        # The highlighted question's key and the judge's suggestion, whole: what the author
        # checks, which the table's narrow columns cut.
        yield Static("", id="preview", markup=False)
        yield Static("", id="verdicts-label", classes="section-bar", markup=False)
        yield VerdictsTable(lambda qid: self.state.questions.get(qid), id="verdicts")
        yield RunStats(self.state.total, id="stats")
        yield Footer()

    def on_mount(self) -> None:
        self._relint()
        self.questions_table.show(self._visible_records(), self._visible_unjudged())
        self._update_labels()
        self.query_one(RunStats).show(self.state)
        if self.quiz.skipped or self.quiz.notes:
            self._notify_skipped()
        self.questions_table.focus()
        self.show_desk_keys()  # decisions carried over from earlier sessions: in use already
        self.start_flush_timer()
        if self.simulated_note:  # said once, long enough to read; the header keeps it (tooltip)
            self.query_one(RunHeader).tooltip = self.simulated_note
            self.notify(self.simulated_note, title="SIMULATED judge", markup=False, timeout=12)
        if self.autorun:
            self.action_start_run()
        elif not self.simulated:  # a paid judge: nothing is sent before r
            self.query_one(RunHeader).set_run(status=IDLE, status_note="r starts")
            if self.pre_estimate is not None:
                self._estimate_worker()

    @work(thread=True, exclusive=True, group="estimate", exit_on_error=False)
    def _estimate_worker(self) -> None:
        """What the run will cost, for the header while it waits for r (reads, sends nothing)."""
        assert self.pre_estimate is not None
        estimate = self.pre_estimate()
        if estimate is not None:
            self.app.call_from_thread(self._estimated, estimate)

    def _estimated(self, estimate: Estimate) -> None:
        if self.state.status == IDLE:  # not once a run has started: its own estimate shows
            self.query_one(RunHeader).set_run(
                status=IDLE, status_note="r starts", estimate=estimate
            )

    def _notify_skipped(self) -> None:
        """The file's items a non-strict load left out: how many, which, and why."""
        lines = self.quiz.load_report()
        self.notify(
            printable("\n".join(lines[:6] + (["…"] if len(lines) > 6 else []))),
            title="Skipped items" if self.quiz.skipped else "Read with warnings",
            severity="warning",
            markup=False,
            timeout=15,
        )

    @property
    def questions_table(self) -> QuestionsTable:
        return self.query_one("#questions", QuestionsTable)

    @property
    def verdicts_table(self) -> VerdictsTable:
        return self.query_one("#verdicts", VerdictsTable)

    @property
    def run_status(self) -> str:
        return self.state.status

    # -- run lifecycle ---------------------------------------------------------------------------

    def action_start_run(self) -> None:
        """Start a fresh run (a running one is cancelled by the exclusive worker group)."""
        if self._rejudging is not None and self._rejudge_worker is not None:
            self._rejudge_worker.cancel()
        # Nothing judged since the table was built: its rows already show these pending records
        # (rebuilding 25,000 question rows would freeze the screen for seconds).
        untouched = self.state.status == IDLE and self.state.done == 0
        self.state = RunState(self.quiz, self.clock)
        self._apply_fragility()
        self._apply_lint()
        self.desk.apply(self.state.questions.values())
        self.verdicts_table.clear()
        if not untouched:
            self.questions_table.show(self._visible_records(), self._visible_unjudged())
        # What exists now (the tables' rows, the quiz) lives through the run: the collector need
        # not scan it again and again while 100,000 verdicts arrive (full passes took seconds).
        # The app unfreezes when it unmounts (app.py freezes its start-up objects the same way).
        gc.freeze()
        self._pause_collector()
        self.state.begin()
        self._status_changed()
        self.start_run_worker(self._run_events(), self._record)

    def _run_events(self) -> Callable[[], AsyncIterator[VetEvent]]:
        """The quiz as it is now: edited or re-keyed since it was opened, it is judged so."""
        quiz, edited_run = self.quiz, self.start_edited_run
        if quiz is self.opened_quiz or edited_run is None:
            return self.start_run
        return lambda: edited_run(quiz)

    def _apply_fragility(self) -> None:
        for qid, record in self.state.questions.items():
            record.fragile = self.fragility.get(qid)

    def _relint(self) -> None:
        if self.lint is not None:
            self._lint_worker(self.quiz)

    @work(thread=True, exclusive=True, group="lint", exit_on_error=False)
    def _lint_worker(self, quiz: Quiz) -> None:
        """Lint off the event loop: a large bank's near-duplicate pass takes seconds."""
        assert self.lint is not None
        report = self.lint(quiz)
        self.app.call_from_thread(self._linted, quiz, report)

    def _linted(self, quiz: Quiz, report: LintReport) -> None:
        if quiz is not self.quiz:  # edited meanwhile: a newer lint is on its way
            return
        shown = {qid: record.lint for qid, record in self.state.questions.items()}
        self.lint_report = report
        self._apply_lint()
        for qid, record in self.state.questions.items():
            if record.lint != shown[qid]:  # only rows whose lint cell changes: a large quiz's
                self.questions_table.refresh_question(record)  # other rows stay as they are
        self._labels = ("", "")
        self._update_labels()

    def _apply_lint(self) -> None:
        report = self.lint_report
        for qid, record in self.state.questions.items():
            record.lint = report.findings_for(qid) if report is not None else ()

    def set_fragility(self, flags: dict[str, tuple[bool, str]]) -> None:
        """Show a robustness run's fragility flags beside the badges."""
        self.fragility = dict(flags)
        self._apply_fragility()
        if self.is_mounted:
            for record in self.state.questions.values():
                self.questions_table.refresh_question(record)

    def _record(self, event: VetEvent) -> None:
        self.state.apply(event)
        if isinstance(event, RunStarted):
            self.query_one(RunHeader).set_run(
                judge_label=event.judge_label,
                simulated=event.simulated,
                calibration=judge_rates_text(
                    event.tpr, event.tnr, event.tpr_ci, event.tnr_ci, event.calibration
                ),
                estimate=event.estimate,
                budget=event.budget,
            )

    def run_succeeded(self) -> None:
        summary = self.state.summary
        if summary is not None:  # the rates the end scored with (prior = "auto+rates" fits them)
            from quiztui.core.wrong_keys import wrong_keys_of, wrong_keys_short

            wrong = wrong_keys_of([q.confidence for q in summary.questions])
            self.query_one(RunHeader).set_run(
                calibration=judge_rates_text(
                    summary.tpr, summary.tnr, summary.tpr_ci, summary.tnr_ci, summary.calibration
                ),
                wrong_keys=wrong_keys_short(wrong),
            )
            if self.wrong_first:  # the order is the final scores'
                self._apply_filter()
        if self.prior_label is not None and (prior := self.prior_label()) is not None:
            self.query_one(RunHeader).set_run(prior=prior)
            # the header drops it when the line is full (80 or 120 columns): the stats line
            # keeps its short form
            self.query_one(RunStats).set_prior(prior)
            self.query_one(RunStats).show(self.state)
        status = summary.status if summary is not None else FINISHED
        self.end_run(status if status in (FINISHED, CANCELLED, FAILED, STOPPED) else FINISHED)
        if summary is not None and summary.status == STOPPED:  # the budget was reached
            self.notify(
                printable(summary.error or "budget reached"),
                title="Run stopped",
                severity="warning",
                markup=False,
                timeout=10,
            )
        if summary is not None and summary.status == FAILED:
            self.notify_error(summary.error or "the run failed", "Run failed")

    def worker_ended(self, worker: Worker[Any], state: WorkerState) -> None:
        if worker is self._rejudge_worker:
            self._rejudge_ended(worker, state)

    def _pause_collector(self) -> None:
        """No cyclic collection while verdicts stream: its full passes over a big run's records
        were the slowest frames (bench/tui_stream.py, 100,000 verdicts: input-to-paint p99 449 ms
        with it, 127 ms without; peak RSS the same). Records and rows hold no cycles: refcounts
        free them. Resumed when the run ends and when the screen goes."""
        if gc.isenabled():
            gc.disable()
            self._collector_paused = True

    def _resume_collector(self) -> None:
        if self._collector_paused:
            self._collector_paused = False
            gc.enable()

    def on_unmount(self) -> None:
        self._resume_collector()

    def end_run(self, status: str, error: str | None = None) -> None:
        self._resume_collector()
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
                table.update_row(state.assertions[seq])
            state.changed_seqs.clear()
        now = time.monotonic()
        if state.dirty_questions and (
            state.status != RUNNING or now - self._questions_flushed >= QUESTIONS_EVERY
        ):
            self._questions_flushed = now
            if limit is None or len(state.dirty_questions) <= MAX_QUESTIONS_PER_FLUSH:
                dirty = set(state.dirty_questions)
                state.dirty_questions.clear()
            else:
                dirty = set(islice(state.dirty_questions, MAX_QUESTIONS_PER_FLUSH))
                state.dirty_questions.difference_update(dirty)
            self._refresh_questions(dirty)
            self._refresh_detail(dirty)
            self._update_labels()
        if state.stats_dirty or state.status == RUNNING:
            state.stats_dirty = False
            self.query_one(RunStats).show(state)
            self._update_labels()
            header = self.query_one(RunHeader)
            cost = state.usage.cost if state.usage is not None else None
            if cost is not None and cost != header.spent:
                header.set_run(spent=cost)

    def _add_verdict_rows(self, seqs: list[int]) -> None:
        state = self.state
        table = self.verdicts_table
        follow = table.row_count == 0 or table.cursor_row >= table.row_count - 1
        table.add_rows([state.assertions[seq] for seq in seqs])
        if follow and table.row_count:
            table.move_cursor(row=table.row_count - 1, animate=False)

    def _refresh_detail(self, question_ids: set[str]) -> None:
        """An open question detail follows its question's verdicts and score as they arrive."""
        screen = self.app.screen
        if isinstance(screen, QuestionDetailScreen) and screen.record.question.id in question_ids:
            record = self.state.questions.get(screen.record.question.id)
            if record is not None:
                screen.show_record(record)

    @on(DataTable.RowHighlighted, "#questions")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_preview()

    def _show_preview(self) -> None:
        """The preview line under the table: the highlighted question's key and suggestion."""
        table = self.questions_table
        key = table.cursor_row_key
        preview = Text(end="")
        record = self.state.questions.get(str(key.value)) if key is not None else None
        if record is not None:
            preview = preview_text(record)
        elif key is not None:
            item = next((u for u in self.quiz.unjudged if u.id == key.value), None)
            if item is not None:
                preview = Text(f"not judged ({item.type}): written back unchanged", style="dim")
        shown = self.query_one("#preview", Static)
        shown.update(preview)
        # As many rows as it wraps to (3 at most): `height: auto` measured it at one row.
        width = (shown.size.width or self.app.size.width) - 2
        rows = len(preview.wrap(self.app.console, max(width, 20))) if preview.plain else 1
        shown.styles.height = max(1, min(rows, 3))

    def _refresh_questions(self, question_ids: set[str]) -> None:
        table = self.questions_table
        key = table.cursor_row_key
        if key is not None and key.value in question_ids:
            self._show_preview()
        state = self.state
        if self._filtering:
            for qid in question_ids:
                record = state.questions.get(qid)
                if record is not None and self._matches(record) != (qid in table.rows):
                    table.show(self._visible_records(), self._visible_unjudged())
                    return
        for qid in question_ids:
            record = state.questions.get(qid)
            if record is not None:
                table.refresh_question(record)

    # -- filtering ---------------------------------------------------------------------------

    @property
    def _filtering(self) -> bool:
        return self.badge_filter != "all" or bool(self.text_filter) or self.desk.filter != "all"

    def _matches(self, record: QuestionRecord) -> bool:
        if self.badge_filter != "all" and QuestionsTable.badge_of(record) != self.badge_filter:
            return False
        if not self.desk.matches(record):
            return False
        if self.text_filter:
            needle = self.text_filter.casefold()
            q = record.question
            return needle in q.text.casefold() or any(needle in o.casefold() for o in q.options)
        return True

    def _visible_records(self) -> list[QuestionRecord]:
        records = [r for r in self.state.questions.values() if self._matches(r)]
        if self.wrong_first:  # s: the likeliest wrong key first; questions not scored last
            records.sort(
                key=lambda r: (r.score is None, r.score.confidence if r.score is not None else 0)
            )
        return records

    def action_toggle_order(self) -> None:
        """s: order the questions by P(key wrong), likeliest first, or back to quiz order."""
        self.wrong_first = not self.wrong_first
        self._apply_filter()
        self.notify(
            "Ordered by P(key wrong), likeliest first"
            if self.wrong_first
            else "Back in quiz order",
            timeout=3,
        )

    def _visible_unjudged(self) -> list[Unjudged]:
        """Items kept from the file but not judged: listed under "all", after the questions."""
        if self.badge_filter != "all" or self.desk.filter != "all":
            return []
        needle = self.text_filter.casefold()
        return [u for u in self.quiz.unjudged if needle in u.text.casefold()]

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
        self.questions_table.show(self._visible_records(), self._visible_unjudged())
        self._update_labels()

    def refilter(self) -> None:
        """Filter the rows again now (a decision changed which questions the filter shows)."""
        self._apply_filter()

    def _update_labels(self) -> None:
        shown = self.questions_table.row_count
        total = len(self.state.questions) + len(self.quiz.unjudged)
        label = Text(end="", no_wrap=True, overflow="ellipsis")
        label.append("Questions", style="bold")
        label.append(f"  {shown}/{total} shown · filter: ")
        active = self.badge_filter != "all"
        label.append(self.badge_filter, style="bold reverse" if active else "bold")
        if self.desk.filter != "all":
            label.append(" · ")
            label.append(self.desk.filter, style="bold reverse")
        if self.text_filter:
            label.append(" · text: ")
            label.append(repr(self.text_filter))
        if self.wrong_first:
            label.append(" · ")
            label.append("wrong keys first", style="bold reverse")
        if self.lint_report is not None and self.lint_report.findings:
            counts = self.lint_report.counts
            label.append(" · lint ")
            label.append(
                " ".join(
                    f"{n} {sev}{'s' if n > 1 and sev != 'info' else ''}"
                    for sev, n in counts.items()
                    if n
                ),
                style="bold yellow" if counts["error"] or counts["warning"] else "",
            )
            quiz_level = len(self.lint_report.quiz_findings)
            if quiz_level:
                label.append(f" ({quiz_level} about the quiz: m)")
        table = self.questions_table
        hidden = table.hidden_columns
        if hidden:
            label.append(f"  +{len(hidden)} col (w)", style="bold")
        elif table.show_all_columns or table.overflowing:
            label.append("  ←/→ scroll (w fits)" if table.show_all_columns else "  ←/→ scroll")
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

    def _record_for_row(
        self, table: DataTable[Any] | VerdictsTable, row_key: RowKey | int
    ) -> QuestionRecord | None:
        """The question of a questions-table row (its key) or of a verdict row (its seq)."""
        if isinstance(row_key, RowKey):
            return self.state.questions.get(str(row_key.value))
        record = self.state.assertions.get(row_key)
        return self.state.questions.get(record.question_id) if record is not None else None

    @on(VerdictsTable.RowSelected)
    def _verdict_selected(self, event: VerdictsTable.RowSelected) -> None:
        record = self._record_for_row(event.table, event.seq)
        if record is not None:
            self.open_detail(record)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        record = self._record_for_row(event.data_table, event.row_key)
        if record is not None:
            self.open_detail(record)
            return
        item = next((u for u in self.quiz.unjudged if u.id == event.row_key.value), None)
        if item is not None:
            line = f" (line {item.source_line})" if item.source_line else ""
            self.notify(
                f"Not judged ({item.type}){line}: quiztui judges one-key multiple choice and"
                " true/false; this item is kept and written back unchanged",
                markup=False,
                timeout=6,
            )

    def open_detail(self, record: QuestionRecord) -> None:
        self.app.push_screen(
            QuestionDetailScreen(record, len(self.state.questions), edit=self.edit_record)
        )

    def action_open_metrics(self) -> None:
        """The metrics screen over this run; it reads ``self.state`` afresh on every refresh."""
        from quiztui.tui.screens.metrics import MetricsScreen  # lazy: loads plotext on first use

        if isinstance(self.app.screen, MetricsScreen):
            return
        profiles = getattr(self.app, "profiles", ())
        self.app.push_screen(MetricsScreen(self.quiz, lambda: self.state, profiles))

    def action_toggle_columns(self) -> None:
        """Show every column of the questions table (it scrolls sideways), or fit it again."""
        self.questions_table.toggle_all_columns()
        self._labels = ("", "")
        self.call_after_refresh(self._update_labels)

    def on_resize(self) -> None:
        self._labels = ("", "")
        self.call_after_refresh(self._update_labels)
        self.call_after_refresh(self._show_preview)

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
            self.open_detail(record)

    # -- fix and re-judge -----------------------------------------------------------------------

    def edit_record(self, record: QuestionRecord) -> None:
        """Open the editor on one question; saving it there re-judges that question only."""
        if self.running:
            self.notify("Wait for the run to finish (or x to cancel it) before editing", timeout=5)
            return
        if self._rejudging is not None:
            self.notify("A question is being re-judged; edit again when it is done", timeout=5)
            return
        qid = record.question.id
        self.app.push_screen(
            EditQuestionScreen(record.question, record.number),
            callback=lambda edit: self._edited(qid, edit),
        )

    def action_edit_question(self) -> None:
        table = self.verdicts_table if self.verdicts_table.has_focus else self.questions_table
        row_key = table.cursor_row_key
        record = self._record_for_row(table, row_key) if row_key is not None else None
        if record is not None:
            self.edit_record(record)

    # -- review desk (screens/decide.py) --------------------------------------------------------

    def cursor_record(self) -> QuestionRecord | None:
        """The question under the cursor of the focused table (the questions table's else)."""
        table = self.verdicts_table if self.verdicts_table.has_focus else self.questions_table
        row_key = table.cursor_row_key
        return self._record_for_row(table, row_key) if row_key is not None else None

    def action_decide(self, action: str) -> None:
        self.desk.open(self, action)

    def action_clear_decision(self) -> None:
        self.desk.clear(self)

    def action_cycle_review_filter(self) -> None:
        self.desk.cycle_filter()
        self._apply_filter()
        self.show_desk_keys()

    def help_description(self, binding: Binding) -> str:
        """F1 names the desk's keys in full while the footer shows their short names."""
        return self._long.get(binding.id or "", binding.description)

    def show_desk_keys(self) -> None:
        """The footer shows the desk's keys while it is in use, the filter and search keys
        otherwise (F1 and the palette list them all, always)."""
        in_use = bool(self.desk.decisions) or self.desk.filter != "all"
        if in_use == self._desk_keys_shown:
            return
        self._desk_keys_shown = in_use
        bindings = self._bindings.key_to_bindings
        for key, listed in bindings.items():
            bindings[key] = [
                dataclasses.replace(
                    b, show=in_use, description=DESK_FOOTER[b.id] if in_use else self._long[b.id]
                )
                if b.id in DESK_FOOTER
                else dataclasses.replace(b, show=not in_use)
                if b.id in DESK_MAKES_ROOM
                else b
                for b in listed
            ]
        footer = self.query_one(Footer)  # room for the seven keys at 80 columns
        footer.compact = in_use
        footer.show_command_palette = not in_use
        self.refresh_bindings()

    def action_apply_fixes(self) -> None:
        self.desk.apply_fixes(self)

    @property
    def rejudging(self) -> bool:
        return self._rejudging is not None

    def rekeyed(self, questions: dict[str, Question]) -> None:
        """The keys ``apply fixes`` wrote: the questions wait for a run to be scored again."""
        self.quiz = self.quiz.model_copy(
            update={"questions": tuple(questions.get(q.id, q) for q in self.quiz.questions)}
        )
        self.state.quiz = self.quiz
        for qid, question in questions.items():
            self._forget_question(self.state.questions[qid], question)
        self.desk.apply(self.state.questions.values())
        self._relint()

    def _edited(self, qid: str, edit: Edit | None) -> None:
        if edit is None:
            return
        record = self.state.questions[qid]
        old = record.question
        self._saved_as.setdefault(qid, (old, self.quiz.truth.get(qid, old.key)))
        new = old.model_copy(update={"text": edit.text, "options": edit.options, "key": edit.key})
        truth = {k: v for k, v in self.quiz.truth.items() if k != qid}  # the old answer's index
        questions = tuple(new if q.id == qid else q for q in self.quiz.questions)
        self.quiz = self.quiz.model_copy(update={"questions": questions, "truth": truth})
        self.state.quiz = self.quiz
        if self.bank is None:  # said now, not at ctrl+s ("nothing to save")
            self.notify(
                "This quiz's file cannot be written back: the edit is judged here only",
                severity="warning",
                timeout=6,
            )
        else:
            index = item_index(qid)
            item = self.edits.get(index, self.bank.items[index])
            blank = blank_number(qid)  # a blank of an embedded-answers (Cloze) item
            self.edits[index] = apply_edit(item, edit.text, edit.options, edit.key, blank=blank)
        self._forget_question(record, new)
        self.query_one(RunHeader).set_run(unsaved=len(self.edits))
        self.desk.apply([record])  # an edited question keeps no decision
        self.state.dirty_questions.add(qid)
        self._relint()  # the whole quiz: duplicates and position bias span questions
        if self.start_rejudge is None:
            self.notify("Edited; no judge to re-judge it with", timeout=5)
            return
        self._rejudging = qid
        self._rejudge_worker = self._rejudge(new)

    def _forget_question(self, record: QuestionRecord, new: Question) -> None:
        """Drop a question's verdicts and score: it is about to be judged again."""
        state = self.state
        qid = record.question.id
        seqs = [s for s, a in state.assertions.items() if a.question_id == qid]
        for seq in seqs:
            gone = state.assertions.pop(seq)
            if gone.verdict is None:
                state.unjudged -= 1
            state.changed_seqs.discard(seq)
        self.verdicts_table.remove_rows(seqs)
        state.pending_seqs[:] = [s for s in state.pending_seqs if s in state.assertions]
        state.total += new.n - record.question.n
        record.question = new
        record.options.clear()
        record.score = None
        state.stats_dirty = True
        if qid in self.questions_table.rows:
            self.questions_table.update_changed(qid, self.questions_table.cells_by_key(record))
        self._update_labels()

    @work(exclusive=True, exit_on_error=False, group="rejudge")
    async def _rejudge(self, question: Question) -> None:
        assert self.start_rejudge is not None
        one = Quiz(
            title=self.quiz.title,
            questions=(question,),
            source_path=self.quiz.source_path,
            format=self.quiz.format,
        )
        offset = max((*self.state.assertions, *self.verdicts_table.rows), default=-1) + 1
        self._rejudge_usage: UsageUpdated | None = None
        self._rejudge_cached = 0

        def handle(event: VetEvent) -> None:
            match event:
                case VerdictReceived() | AssertionUnjudged():
                    if isinstance(event, VerdictReceived) and event.cached:
                        self._rejudge_cached += 1
                    self.state.apply(dataclasses.replace(event, seq=event.seq + offset))
                case QuestionScored() | BatchRetried() | BatchFailed() | ProviderBatchStatus():
                    self.state.apply(event)
                case UsageUpdated():
                    self._rejudge_usage = event

        await drain(self.start_rejudge(one), handle, lambda: True)

    def _rejudge_ended(self, worker: Worker[Any], state: WorkerState) -> None:
        qid, self._rejudging = self._rejudging, None
        self.flush()
        record = self.state.questions.get(qid or "")
        if state == WorkerState.ERROR:
            self.notify_error(error_message(worker.error), "Re-judging failed")
            return
        if state == WorkerState.CANCELLED or record is None:
            return
        usage = self._rejudge_usage
        requests = usage.requests if usage is not None else 0
        badge = QuestionsTable.badge_of(record)
        # The simulated judge is never cached (it answers from the key an edit changes): no
        # count of cache hits that could only ever be 0.
        cached = "" if self.simulated else f", {self._rejudge_cached} verdict(s) from the cache"
        self.notify(
            f"Question {record.number} re-judged: {badge} · {requests} request(s){cached}"
            " · ctrl+s writes the file",
            title="Re-judged",
            markup=False,
            timeout=8,
        )

    def _follow_truth(self, path: Path) -> None:
        """The truth file beside the quiz follows the saved edits (else the next open of the
        quiz would warn that the edited questions are not in it)."""
        from quiztui.formats.truth import follow_edits

        edited = [
            (before, self.state.questions[qid].question, true_index)
            for qid, (before, true_index) in self._saved_as.items()
            if qid in self.state.questions
        ]
        self._saved_as.clear()
        try:
            follow_edits(path, edited)
        except OSError as exc:
            self.notify(
                printable(f"the truth file was not updated: {exc}"),
                severity="warning",
                markup=False,
            )

    @property
    def unsaved(self) -> int:
        return len(self.edits)

    def action_save_quiz(self) -> None:
        """Write the edited questions back into the quiz file (a .bak copy of it beside it)."""
        if not self.edits:
            self.notify("Nothing to save: no question was edited", timeout=4)
            return
        if self.bank is None:
            self.notify("This quiz did not come from a file I can write", severity="error")
            return
        from quiztui.formats.bank_io import load_bank, save_edits

        try:
            path, backup = save_edits(self.bank, self.edits)
        except (QuiztuiError, OSError) as exc:
            self.notify(printable(str(exc)), title="Not saved", severity="error", markup=False)
            return
        count = len(self.edits)
        self.edits.clear()
        self.query_one(RunHeader).set_run(unsaved=0)
        self._follow_truth(path)
        try:
            # skipped items stay; a file read with --columns is read with them again
            self.bank = load_bank(path, self.bank.format, strict=False, columns=self.bank.columns)
        except QuiztuiError as exc:
            self.bank = None
            self.notify(printable(str(exc)), title="Saved, but re-reading failed", markup=False)
            return
        self.notify(
            f"Saved {count} edited question(s) to {path.name} (backup: {backup.name})",
            title="Saved",
            markup=False,
            timeout=6,
        )
