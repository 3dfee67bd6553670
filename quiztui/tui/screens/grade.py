"""The Grade screen: candidate answers graded against references, rows filling live.

``start(items, grader)`` (``assemble.grade.grade_events`` behind a closure) yields a grade run's
events. The worker only records them in :class:`GradeProgress` and the :class:`GradeRecord` of
each item; a timer flushes what changed to the table at most every ``flush_interval`` seconds, so
a reply streamed token by token (``GradeTextReceived``, rubric10 and pass3) costs a redraw per
tick, not per token. ``r`` grades the loaded file with the selected grader; ``a`` opens a form to
grade one answer on the spot (same ``start``, a one-item list). Every answer and reply is shown as
``Text``, never parsed as markup.

With a saved calibration (``grade FILE --calibration NAME --tui``) a "calibrated (LO-HI)" column
stands beside the raw score: the flush maps the answers graded since the last tick through
``Calibration.apply`` in one call, the same mapping the CLI report uses. When saved calibrations
are offered (``calibrations`` and a ``load_calibration``, from ``assemble.grade.grade_calibrations``
for ``grade --tui`` and the vet app's ``a`` alike), the grader row picks one (``c`` cycles, "none"
takes the column away). ``calibration_problem`` says why a configured calibration is not applied:
a header line and a toast, the raw scores shown as they are.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Footer, Input, Label, Select, Static
from textual.widgets.data_table import ColumnKey
from textual.worker import Worker, WorkerState

from quiztui.core.grading import GRADER_HELP, GRADERS, GradeItem, GradeOutcome
from quiztui.errors import QuiztuiError
from quiztui.pipeline.grade import (
    GradeFinished,
    GradeRetried,
    GradeStarted,
    GradeSummary,
    GradeTextReceived,
    ItemGraded,
)
from quiztui.report.grades import summary_lines
from quiztui.tui.screens.run_screen import LiveRunScreen, error_message
from quiztui.tui.state import FAILED, FINISHED, IDLE, RUNNING
from quiztui.tui.streams import drain
from quiztui.tui.widgets.cells import (
    DASH,
    UNSCORED_STYLE,
    Cell,
    cell,
    one_line,
    printable,
    score_text,
)
from quiztui.tui.widgets.header import STATUS_STYLES
from quiztui.tui.widgets.statics import show_text
from quiztui.tui.widgets.tables import ColumnSpec, NavTable

if TYPE_CHECKING:
    from quiztui.pipeline.grade_fit import Calibration

StartGrading = Callable[[list[GradeItem], str], AsyncIterator[Any]]
# A saved calibration's name → the calibration and the embedder its neighbours model needs.
LoadCalibration = Callable[[str], "tuple[Calibration, Any]"]
NO_CALIBRATION = "none"  # the picker's "no calibration" (a saved name is never "none")

STREAM_KEEP = 4000  # characters of a streamed reply kept for the live cell and the detail view
UNAVAILABLE = (
    "Grading is unavailable here: this app was started without a grader runner."
    " Run `quiztui grade FILE --tui` in a shell instead."
)


# -- what the worker records --------------------------------------------------------------------


@dataclass
class GradeRecord:
    """One answer on the screen: the item, then its outcome; before that, the streamed reply."""

    key: str  # the table's row key
    order: tuple[int, int]  # (0, seq) for the loaded file, (1, n) for answers graded one by one
    item: GradeItem
    grader: str
    split: str = ""
    outcome: GradeOutcome | None = None
    streamed: str = ""
    retries: int = 0
    stopped: bool = False  # the run ended before this answer was graded
    calibration: Calibration | None = None  # the calibration that mapped its score, once it has
    calibrated: float | None = None  # the score on the calibration's scale (None: none to map)

    @property
    def in_flight(self) -> bool:
        return self.outcome is None and not self.stopped


@dataclass
class GradeProgress:
    """The loaded file's run (``r``), as its events told it."""

    status: str = IDLE
    grader: str = ""
    total: int = 0
    done: int = 0
    unscored: int = 0
    retries: int = 0
    summary: GradeSummary | None = None
    error: str | None = None


# -- cells ----------------------------------------------------------------------------------------


def stream_tail(text: str, width: int) -> str:
    """The end of a reply being written, so the newest words stay in view."""
    flat = one_line(" ".join(text.split()))
    width = max(width, 2)
    return flat if len(flat) <= width else "…" + flat[-(width - 1) :]


def calibrated_head(calibration: Calibration) -> str:
    return f"calibrated ({calibration.scale})"


def calibrated_cell(record: GradeRecord) -> Cell:
    """The calibrated score; "n/a" for an answer graded by another grader than the calibration's
    (its raw score is on another scale), "—" while waiting or when unscored."""
    if record.calibration is not None:
        if record.calibrated is None:
            return Cell(DASH, style=UNSCORED_STYLE, no_wrap=True, justify="right", end="")
        return Cell(f"{record.calibrated:.2f}", no_wrap=True, justify="right", end="")
    shown = "n/a" if record.outcome is not None and record.outcome.scored else DASH
    return Cell(shown, style="dim", no_wrap=True, justify="right", end="")


def row_cells(
    record: GradeRecord, reasoning_width: int, calibrated: bool = False
) -> dict[str, Cell]:
    o = record.outcome
    cells = {
        "id": cell(record.item.id),
        "candidate": cell(record.item.candidate),
    }
    if calibrated:
        cells["calibrated"] = calibrated_cell(record)
    if o is None:
        waiting = "not graded" if record.stopped else "grading…"
        cells["score"] = cell(DASH, "dim")
        cells["label"] = cell(waiting, "dim")
        tail = stream_tail(record.streamed, reasoning_width) if record.streamed else ""
        cells["reasoning"] = cell(tail, "italic dim")
    elif not o.scored:
        cells["score"] = cell(DASH, UNSCORED_STYLE)
        cells["label"] = cell(o.label, UNSCORED_STYLE)
        cells["reasoning"] = cell(o.unscored or "no reason given", "magenta")
    else:
        cells["score"] = Cell(score_text(o), no_wrap=True, justify="right", end="")
        cells["label"] = cell(o.label, "bold")
        cells["reasoning"] = cell(o.reasoning)
    return cells


class GradeTable(NavTable):
    """One row per graded (or being graded) answer."""

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        ColumnSpec("id", "id", 6),
        ColumnSpec("score", "score", 6),
        ColumnSpec("label", "label", 14),
        ColumnSpec("candidate", "candidate", 10, flex=2),
        ColumnSpec("reasoning", "reasoning", 10, flex=3),
    )

    @property
    def reasoning_width(self) -> int:
        column = self.columns.get(ColumnKey("reasoning"))
        return column.width if column is not None else 40

    @property
    def calibrated(self) -> bool:
        return any(c.key == "calibrated" for c in self.COLUMNS)


def grade_table(calibration: Calibration | None) -> GradeTable:
    """The table; with a calibration, its "calibrated (LO-HI)" column right after the score."""
    if calibration is None:
        return GradeTable(id="grade-table")
    head = calibrated_head(calibration)
    spec = ColumnSpec("calibrated", head, len(head))
    columns = (*GradeTable.COLUMNS[:2], spec, *GradeTable.COLUMNS[2:])
    table_type = type("CalibratedGradeTable", (GradeTable,), {"COLUMNS": columns})
    return table_type(id="grade-table")


# -- the screen -------------------------------------------------------------------------------------


def calibration_options(calibrations: Any) -> dict[str, Any]:
    """GradeScreen's calibration arguments from an ``assemble.grade.GradeCalibrations`` (None:
    no calibration): one place for every face that opens the screen (``grade --tui``, the vet
    app's ``a``, a stored grade run opened from the Runs screen)."""
    if calibrations is None:
        return {}
    return {
        "calibration": calibrations.calibration,
        "embedder": calibrations.embedder,
        "calibrations": calibrations.names,
        "load_calibration": calibrations.load,
        "calibration_problem": calibrations.problem,
    }


class GradeScreen(LiveRunScreen):
    """Grades an answer file (``r``) or single answers (``a``); ``enter`` opens a row."""

    BUSY_LABEL = "Grading"  # the quit confirmation: "<label> is running. Quit anyway?"
    RUN_GROUP = "grade-run"
    FLUSH_TIMER = "grade-flush"
    FAILED_TITLE = "Grading failed"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "start_run", "Run", id="grade.run", tooltip="Grade the file"),
        Binding("x", "cancel_run", "Cancel", id="grade.cancel"),
        # The footer at 80 columns has no room for it; the grader row names the key.
        Binding("s", "next_grader", "Next grader", id="grade.next_grader", show=False),
        Binding(
            "c", "next_calibration", "Next calibration", id="grade.next_calibration", show=False
        ),
        Binding("a", "open_form", "One answer", id="grade.one_answer"),
        Binding("escape", "close", "Back", id="grade.close"),
    ]

    def __init__(
        self,
        items: Sequence[GradeItem],
        start: StartGrading | None,
        *,
        grader: str = "rubric10",
        source: str | None = None,
        autorun: bool = True,
        open_form: bool = False,
        flush_interval: float = 0.1,
        calibration: Calibration | None = None,
        embedder: Any = None,
        calibrations: Sequence[str] = (),
        load_calibration: LoadCalibration | None = None,
        calibration_problem: str | None = None,
    ) -> None:
        super().__init__(id="grade", flush_interval=flush_interval)
        self.calibration = calibration
        # Why the configured calibration is not applied (shown until another one is picked).
        self.calibration_problem = None if calibration is not None else calibration_problem
        self.embedder = embedder  # the calibration's neighbours model compares answers with it
        self._to_calibrate: list[str] = []  # graded records whose calibrated score is not mapped
        # The picker's choices: the saved names (and the one given, if it came from a path).
        names = list(calibrations) if load_calibration is not None else []
        if names and calibration is not None and calibration.name not in names:
            names.append(calibration.name)
        self.calibration_names = names
        self.load_calibration = load_calibration
        self._rebuilding = False  # the table is being replaced (a calibration was picked)
        self.items = list(items)
        self.start = start
        self.grader = grader if grader in GRADERS else GRADERS[0]
        self.source = source
        self.autorun = autorun and bool(self.items)
        self.open_form_at_start = open_form or not self.items
        self.progress = GradeProgress(grader=self.grader)
        self.records: dict[str, GradeRecord] = {}
        self.judge_label = ""
        self.simulated = False
        self._new: list[str] = []  # records without a table row yet
        self._dirty: set[str] = set()  # records whose row changed
        self._header_dirty = True
        self._one_count = 0
        self.singles_graded = 0  # answers graded one at a time (the form), and how many unscored
        self.singles_unscored = 0
        self._one_workers: dict[Worker[None], str] = {}  # worker → its record's key
        self._shown: dict[str, object] = {}

    @property
    def run_status(self) -> str:
        """The file's run (``r``); single answers being graded count in ``running``."""
        return self.progress.status

    @property
    def running(self) -> bool:
        return self.progress.status == RUNNING or bool(self._one_workers)

    # -- composition ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="grade-header")
        with Horizontal(id="grade-grader-row"):
            yield Label("grader (s)", classes="grade-label")
            yield Select(
                [(g, g) for g in GRADERS],
                value=self.grader,
                allow_blank=False,
                id="grade-grader",
                compact=True,
            )
            if self.calibration_names:
                yield Label("calib. (c)", classes="grade-label")
                picker = Select(
                    [(NO_CALIBRATION, NO_CALIBRATION), *((n, n) for n in self.calibration_names)],
                    value=self.calibration.name if self.calibration else NO_CALIBRATION,
                    allow_blank=False,
                    id="grade-calibration",
                    compact=True,
                )
                picker.styles.width = min(24, 4 + max(len(n) for n in self.calibration_names))
                yield picker
            yield Static("", id="grade-grader-help")
        with Vertical(id="grade-form"):
            for name, hint in (
                ("question", "the question (may be empty)"),
                ("reference", "the reference answer"),
                ("candidate", "the answer to grade — enter grades it"),
            ):
                with Horizontal(classes="grade-form-row"):
                    yield Label(name, classes="grade-label")
                    yield Input(placeholder=hint, id=f"grade-{name}", compact=True)
            with Horizontal(classes="grade-form-row"):
                yield Button("Grade (enter)", id="grade-submit", variant="primary", compact=True)
                yield Static(Text("esc closes the form", style="dim", end=""), id="grade-form-hint")
        yield grade_table(self.calibration)
        yield Static("", id="grade-summary")
        yield Footer()

    def on_mount(self) -> None:
        self._show_grader_help()
        if self.open_form_at_start:
            self.action_open_form()
        else:
            self.table.focus()
        self.start_flush_timer()
        self.flush()
        if self.calibration_problem is not None:
            self.notify_error(self.calibration_problem, "Calibration not applied")
        if self.start is None:
            self.notify_error(UNAVAILABLE, "Grading unavailable")
        elif self.autorun:
            self.action_start_run()

    @property
    def table(self) -> GradeTable:
        return self.query_one("#grade-table", GradeTable)

    # -- grader choice ----------------------------------------------------------------------------

    @on(Select.Changed, "#grade-grader")
    def _grader_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.grader = event.value
            self._show_grader_help()
            show_text(self, self._shown, "#grade-header", self._header_text())

    def set_grader(self, grader: str) -> None:
        if grader not in GRADERS:
            raise ValueError(f"unknown grader {grader!r}")
        self.query_one("#grade-grader", Select).value = grader
        self.grader = grader
        self._show_grader_help()
        show_text(self, self._shown, "#grade-header", self._header_text())

    def action_next_grader(self) -> None:
        self.set_grader(GRADERS[(GRADERS.index(self.grader) + 1) % len(GRADERS)])

    # -- calibration choice --------------------------------------------------------------------

    @on(Select.Changed, "#grade-calibration")
    async def _calibration_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            await self.pick_calibration(event.value)

    def action_next_calibration(self) -> None:
        if not self.calibration_names:
            return
        choices = [NO_CALIBRATION, *self.calibration_names]
        now = self.calibration.name if self.calibration is not None else NO_CALIBRATION
        following = (
            choices[(choices.index(now) + 1) % len(choices)] if now in choices else choices[0]
        )
        self.query_one("#grade-calibration", Select).value = following

    async def pick_calibration(self, name: str) -> None:
        """Apply the saved calibration ``name`` (``none``: none) to every answer on the screen."""
        now = self.calibration.name if self.calibration is not None else NO_CALIBRATION
        if name == now:
            return
        calibration, embedder = None, None
        if name != NO_CALIBRATION and self.load_calibration is not None:
            try:
                calibration, embedder = self.load_calibration(name)
            except (QuiztuiError, OSError) as exc:
                self.notify_error(str(exc), "Calibration not loaded")
                self.query_one("#grade-calibration", Select).value = now
                return
        self.calibration, self.embedder = calibration, embedder
        self.calibration_problem = None  # a choice was made: the configured one is past
        for record in self.records.values():
            record.calibration, record.calibrated = None, None
        self._to_calibrate = [
            key
            for key, record in self.records.items()
            if calibration is not None
            and record.outcome is not None
            and record.grader == calibration.grader
        ]
        await self._rebuild_table()

    async def _rebuild_table(self) -> None:
        """A table with (or without) the calibrated column, holding the same rows."""
        self._rebuilding = True
        try:
            old = self.table
            focused = old.has_focus
            await old.remove()
            await self.mount(grade_table(self.calibration), before="#grade-summary")
            self._new = sorted(self.records, key=lambda k: self.records[k].order)
            self._dirty.clear()
            self._header_dirty = True
        finally:
            self._rebuilding = False
        self.flush()
        if focused:
            self.table.focus()

    def _show_grader_help(self) -> None:
        help_text = Text(no_wrap=True, overflow="ellipsis", end="", style="dim")
        help_text.append(GRADER_HELP.get(self.grader, ""))
        self.query_one("#grade-grader-help", Static).update(help_text)

    # -- runs ---------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_run":
            return True if self.items and self.start is not None else None
        if action == "close":
            form = self.query("#grade-form")
            return (bool(form) and form.first().has_class("-open")) or self._over_another
        return super().check_action(action, parameters)

    @property
    def _over_another(self) -> bool:
        """Pushed over another screen (the vet app's), so esc can go back to it."""
        stack = self.app.screen_stack
        return self in stack and stack.index(self) > 0

    def _grader_refused(self) -> bool:
        """The embedding grader without its extra: said in one line, before anything is
        cleared or started (the run would fail at its first answer)."""
        if self.grader != "embedding":
            return False
        from quiztui.embed import extra_missing

        missing = extra_missing()
        if missing is not None:
            self.notify_error(str(missing), "Embedding grader unavailable")
        return missing is not None

    def action_start_run(self) -> None:
        """Grade the loaded file with the selected grader (a running grade is replaced)."""
        if self.start is None:
            self.notify_error(UNAVAILABLE, "Grading unavailable")
            return
        if not self.items:
            self.notify(
                "No answer file is loaded: press a to grade one answer.",
                severity="warning",
                markup=False,
            )
            return
        if self._grader_refused():
            return  # the last results stay on the screen
        self.records.clear()
        self.singles_graded = self.singles_unscored = 0  # their rows go too
        self._new.clear()
        self._to_calibrate.clear()
        self._dirty.clear()
        self.table.clear()
        self.progress = GradeProgress(status=RUNNING, grader=self.grader, total=len(self.items))
        self._header_dirty = True
        self.refresh_bindings()
        start, items, grader = self.start, self.items, self.grader

        def handle(event: object) -> None:
            self._apply(event, grader, items, lambda seq: (f"item-{seq}", (0, seq)))

        self.start_run_worker(lambda: start(items, grader), handle)
        self.flush()

    def grade_one(self, item: GradeItem) -> None:
        """Grade a single answer with the selected grader; it gets its own row."""
        if self.start is None:
            self.notify_error(UNAVAILABLE, "Grading unavailable")
            return
        if self._grader_refused():
            return
        self._one_count += 1
        n = self._one_count
        worker = self._grade_single(item, self.grader, n)
        self._one_workers[worker] = f"one-{n}"
        self._header_dirty = True
        self.refresh_bindings()

    @work(exit_on_error=False, group="grade-one")
    async def _grade_single(self, item: GradeItem, grader: str, n: int) -> None:
        assert self.start is not None

        def handle(event: object) -> None:
            self._apply(event, grader, [item], lambda seq: (f"one-{n}", (1, n)))

        await drain(self.start([item], grader), handle, lambda: True)

    def _apply(
        self,
        event: object,
        grader: str,
        items: list[GradeItem],
        place: Callable[[int], tuple[str, tuple[int, int]]],
    ) -> None:
        """Record one event of a run over ``items``; ``place(seq)`` is the row's key and order.

        The flush timer shows what was recorded.
        """
        p = self.progress
        own_run = items is self.items  # the file's run (else a single answer from the form)
        if isinstance(event, GradeStarted):
            self.judge_label, self.simulated = event.judge_label, event.simulated
            self._header_dirty = True
        elif isinstance(event, GradeTextReceived):
            record = self._record(event.seq, place, grader, items)
            if record is not None and record.outcome is None:
                record.streamed = (record.streamed + event.text)[-STREAM_KEEP:]
                self._changed(record)
        elif isinstance(event, GradeRetried):
            if own_run:
                p.retries += 1
                self._header_dirty = True
            record = self.records.get(place(event.seq)[0])
            if record is not None:
                record.retries += 1
        elif isinstance(event, ItemGraded):
            record = self._record(event.seq, place, grader, items, event.item)
            if record is not None:
                record.outcome, record.split = event.outcome, event.split
                if self.calibration is not None and grader == self.calibration.grader:
                    self._to_calibrate.append(record.key)
                self._changed(record)
            if own_run:
                p.done += 1
                p.unscored += not event.outcome.scored
            else:
                self.singles_graded += 1
                self.singles_unscored += not event.outcome.scored
            self._header_dirty = True
        elif isinstance(event, GradeFinished):
            if own_run:
                p.summary = event.summary
                self._header_dirty = True
            elif not event.summary.scored:
                self.notify("The answer could not be scored.", severity="warning", markup=False)

    def _record(
        self,
        seq: int,
        place: Callable[[int], tuple[str, tuple[int, int]]],
        grader: str,
        items: list[GradeItem],
        item: GradeItem | None = None,
    ) -> GradeRecord | None:
        key, order = place(seq)
        record = self.records.get(key)
        if record is None:
            if item is None:
                if not 0 <= seq < len(items):
                    return None  # text for an item this run does not have: wait for ItemGraded
                item = items[seq]
            record = GradeRecord(key, order, item, grader)
            self.records[key] = record
            self._new.append(key)
        return record

    def _changed(self, record: GradeRecord) -> None:
        if record.key in self.table.rows:
            self._dirty.add(record.key)

    def cancel_run(self) -> None:
        """x: cancel the file's run and every single answer being graded."""
        super().cancel_run()
        for worker in list(self._one_workers):
            worker.cancel()

    def run_succeeded(self) -> None:
        summary = self.progress.summary
        stopped = summary.stopped if summary is not None else None
        self.end_run(FAILED if stopped else FINISHED)
        if stopped:
            self.notify_error(stopped, "Grading stopped")

    def worker_ended(self, worker: Worker[Any], state: WorkerState) -> None:
        """A single answer's worker ended: its row, if still waiting, is marked not graded."""
        key = self._one_workers.pop(worker, None)
        if key is None:
            return
        if state == WorkerState.ERROR:
            self.notify_error(error_message(worker.error), "Grading failed")
        self._mark_stopped(lambda r: r.key == key)
        self._header_dirty = True
        self.refresh_bindings()
        self.flush()

    def end_run(self, status: str, error: str | None = None) -> None:
        if error is not None:
            self.progress.error = error
        self.progress.status = status
        self._mark_stopped(lambda r: r.order[0] == 0)
        self._header_dirty = True
        self.refresh_bindings()
        self.flush()
        self._reorder()

    def _mark_stopped(self, which: Callable[[GradeRecord], bool]) -> None:
        for record in self.records.values():
            if record.outcome is None and not record.stopped and which(record):
                record.stopped = True
                self._changed(record)

    def _reorder(self) -> None:
        """Rows arrive in completion order; a finished file reads in its own order."""
        if self._rebuilding:
            return
        keys = sorted(self.records, key=lambda k: self.records[k].order)
        table = self.table
        if [k.value for k in table.rows] == keys:
            return
        keep = table.cursor_row_key
        table.clear()
        width = table.reasoning_width
        for key in keys:
            cells = row_cells(self.records[key], width, table.calibrated)
            table.add_row(*(cells[c.key] for c in table.COLUMNS), key=key)
        self._new.clear()
        self._dirty.clear()
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep), animate=False)

    # -- buffered flush -------------------------------------------------------------------------

    def flush(self) -> None:
        """Move recorded events to the widgets: new rows, changed cells, the header."""
        if self._rebuilding:
            return
        table = self.table
        width = table.reasoning_width
        self._calibrate()
        if self._new:
            follow = table.row_count == 0 or table.cursor_row >= table.row_count - 1
            for key in self._new:
                cells = row_cells(self.records[key], width, table.calibrated)
                table.add_row(*(cells[c.key] for c in table.COLUMNS), key=key)
            self._new.clear()
            if follow and table.row_count:
                table.move_cursor(row=table.row_count - 1, animate=False)
        if self._dirty:
            for key in self._dirty:
                if key not in table.rows:
                    continue
                table.update_changed(key, row_cells(self.records[key], width, table.calibrated))
            self._dirty.clear()
        if self._header_dirty:
            self._header_dirty = False
            show_text(self, self._shown, "#grade-header", self._header_text())
            show_text(self, self._shown, "#grade-summary", self._summary_text())

    def _calibrate(self) -> None:
        """Map the scores graded since the last flush onto the calibration's scale, in one call
        to ``Calibration.apply`` (the CLI report's mapping)."""
        calibration = self.calibration
        records = [self.records[k] for k in self._to_calibrate if k in self.records]
        self._to_calibrate.clear()
        graded = [r for r in records if r.outcome is not None]
        if calibration is None or not graded:
            return
        values = calibration.apply(
            [r.item for r in graded],
            [r.outcome.raw if r.outcome is not None else None for r in graded],
            self.embedder,
        )
        for record, value in zip(graded, values, strict=True):
            record.calibration, record.calibrated = calibration, value
            self._changed(record)

    def _header_text(self) -> Text:
        p = self.progress
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(" grade ", style="bold reverse")
        text.append(" ")
        text.append(one_line(self.source) if self.source else "answers graded one at a time")
        if self.items:
            text.append(f"  {len(self.items)} answers", style="dim")
        status = RUNNING if p.status == IDLE and self._one_workers else p.status
        text.append("  ")
        text.append(f"[{status}]", style=STATUS_STYLES.get(status, ""))
        text.append("\n")
        if self.simulated:
            text.append(" SIMULATED ", style="bold reverse yellow")
        text.append(" grader ", style="dim")
        grader = p.grader if p.status != IDLE else self.grader
        text.append(grader, style="bold")
        text.append("  judge: ", style="dim")
        text.append(one_line(self.judge_label) if self.judge_label else "(known once a run starts)")
        cal = self.calibration
        if cal is not None:
            text.append("\n ")
            if grader == cal.grader:
                text.append(one_line(cal.label), style="bold")
            else:  # another grader's raw scores are on another scale: nothing to map
                text.append(
                    f"calibration {one_line(cal.name)} is for grader {cal.grader}, not"
                    f" {grader}: calibrated n/a",
                    style="yellow",
                )
        elif self.calibration_problem is not None:
            text.append("\n ")
            text.append("calibration not applied: ", style="bold yellow")
            text.append(one_line(self.calibration_problem), style="yellow")
        text.append("\n ")
        if p.status == IDLE:
            hint = "press r to grade the file" if self.items else "press a to grade one answer"
            text.append(hint, style="dim")
        else:
            text.append(f"graded {p.done}/{p.total}", style="bold")
            text.append(" · unscored ")
            text.append(str(p.unscored), style=UNSCORED_STYLE if p.unscored else "")
            text.append(f" · retries and re-asks {p.retries}")
        if self.singles_graded:
            text.append(" · " if p.status != IDLE else "  ·  ", style="dim")
            text.append(f"single answers {self.singles_graded}")
            if self.singles_unscored:
                text.append(f" ({self.singles_unscored} unscored)", style=UNSCORED_STYLE)
        return text

    def _summary_text(self) -> Text:
        p = self.progress
        text = Text(end="")
        if p.summary is not None:
            text.append("\n".join(summary_lines(p.summary)))
        if p.error:
            if text.plain:
                text.append("\n")
            text.append("failed: ", style="bold red")
            text.append(printable(p.error))
        return text

    # -- the one-answer form ----------------------------------------------------------------------

    @property
    def _form_open(self) -> bool:
        return self.query_one("#grade-form").has_class("-open")

    def action_open_form(self) -> None:
        form = self.query_one("#grade-form")
        form.add_class("-open")
        self.refresh_bindings()
        target = "#grade-reference" if self.query_one("#grade-question", Input).value else None
        self.query_one(target or "#grade-question", Input).focus()

    def close_form(self) -> None:
        self.query_one("#grade-form").remove_class("-open")
        self.refresh_bindings()
        self.table.focus()

    def action_close(self) -> None:
        """esc: close the form; else back to the screen below (a grade goes on)."""
        if self._form_open:
            self.close_form()
        elif self._over_another:
            self.dismiss(None)

    @on(Input.Submitted, "#grade-form Input")
    @on(Button.Pressed, "#grade-submit")
    def _submit_form(self) -> None:
        question = self.query_one("#grade-question", Input).value
        reference = self.query_one("#grade-reference", Input)
        candidate = self.query_one("#grade-candidate", Input)
        for field_input in (reference, candidate):
            if not field_input.value.strip():
                field_input.focus()
                return
        item = GradeItem(f"ans-{self._one_count + 1}", question, reference.value, candidate.value)
        self.grade_one(item)
        candidate.value = ""  # keep question and reference: try another candidate
        candidate.focus()

    # -- detail -----------------------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        record = self.records.get(str(event.row_key.value))
        if record is not None:
            from quiztui.tui.screens.grade_detail import GradeDetailScreen

            self.app.push_screen(GradeDetailScreen(record))

    def action_open_detail(self) -> None:
        key = self.table.cursor_row_key
        record = self.records.get(str(key.value)) if key is not None else None
        if record is not None:
            from quiztui.tui.screens.grade_detail import GradeDetailScreen

            self.app.push_screen(GradeDetailScreen(record))

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        """Commands for the palette (``Prefix: verb``), used by the grade app's provider."""
        commands: list[tuple[str, str, Callable[[], object]]] = [
            (
                "Run: grade the file",
                "Grade the loaded answers with the selected grader (r)",
                self.action_start_run,
            ),
            ("Run: cancel", "Cancel grading; graded rows stay (x)", self.action_cancel_run),
            (
                "Grade: one answer",
                "Open the form to grade a single answer (a)",
                self.action_open_form,
            ),
            ("View: answer detail", "Open the highlighted answer (enter)", self.action_open_detail),
        ]
        for grader in GRADERS:
            commands.append(
                (f"Grader: {grader}", GRADER_HELP.get(grader, ""), _bind(self.set_grader, grader))
            )
        return commands


def _bind(fn: Callable[[str], None], value: str) -> Callable[[], None]:
    return lambda: fn(value)


__all__ = ["GradeProgress", "GradeRecord", "GradeScreen", "GradeTable", "row_cells"]
