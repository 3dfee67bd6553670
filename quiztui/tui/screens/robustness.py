"""The Robustness screen: each question asked v + 1 ways, its answers and metrics filling live.

``start()`` (``assemble.robustness.robustness_events`` behind a closure) yields a robustness run's
events. The worker only records them in a :class:`RobustRecord` per question; a timer flushes
what changed to the table at most every ``flush_interval`` seconds. Below the table: the quiz's
metrics (A, Ω, O, Ŷ, µD, Hη, M2, Fleiss' κ, Cronbach's α) and a bar chart of them beside the
random-guessing level. ``enter`` opens a question: every form, its answer, and why a form has
none. Quiz text, rewrites and replies are shown as ``Text``, never parsed as markup.

When the run finishes the screen posts :class:`FragilityMeasured`, which the vet app uses to
show the fragility flag in its questions table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from quiztui.core.paraphrase import (
    ANSWERED,
    FILTERED,
    REFUSED,
    FormAnswer,
    QuestionRobustness,
)
from quiztui.core.quiz import Question, Quiz
from quiztui.core.robustness import guessing_limits
from quiztui.pipeline.robustness import (
    FormAnswered,
    FormsWritten,
    QuestionMeasured,
    RobustnessFinished,
    RobustnessRetried,
    RobustnessSettings,
    RobustnessStarted,
    RobustnessSummary,
)
from quiztui.tui.messages import FragilityMeasured
from quiztui.tui.screens.run_screen import LiveRunScreen
from quiztui.tui.state import FAILED, FINISHED, IDLE, RUNNING
from quiztui.tui.widgets.cells import DASH, Cell, cell, one_line, printable
from quiztui.tui.widgets.header import STATUS_STYLES
from quiztui.tui.widgets.plots import Chart, ChartSpec, Series, ticks
from quiztui.tui.widgets.statics import show_text
from quiztui.tui.widgets.tables import ColumnSpec, NavTable

StartRobustness = Callable[[], AsyncIterator[Any]]

FRAGILE_STYLE = "bold yellow"
MISSING_STYLE = "magenta"
UNAVAILABLE = (
    "Robustness runs are unavailable here: this app was started without a runner."
    " Run `quiztui robustness QUIZ --tui` in a shell instead."
)
QUIZ_METRICS = (
    ("accuracy", "A"),
    ("worst", "Ω"),
    ("best", "O"),
    ("plurality", "Ŷ"),
    ("difficulty", "µD"),
    ("certainty", "Hη"),
    ("m2", "M2"),
    ("fleiss_kappa", "κ"),
    ("cronbach_alpha", "α"),
    ("cronbach_alpha_forms", "αf"),
)


@dataclass
class RobustRecord:
    """One question on the screen, as its events told it."""

    position: int
    question: Question
    forms: tuple[str, ...] = ()
    answers: dict[int, FormAnswer] = field(default_factory=dict)
    result: QuestionRobustness | None = None
    retries: int = 0
    stopped: bool = False


@dataclass
class RobustProgress:
    status: str = IDLE
    total: int = 0
    measured: int = 0
    answers: int = 0
    missing: int = 0
    refused: int = 0
    fragile: int = 0
    retries: int = 0
    summary: RobustnessSummary | None = None
    error: str | None = None


def _tidy(value: Any) -> Any:
    """-0.0004 shows as 0.000, not -0.000."""
    return round(value, 3) + 0.0 if isinstance(value, float) and value == value else value


def _num(value: Any, digits: int = 2) -> str:
    return DASH if value is None or value != value else f"{value:.{digits}f}"


def answers_text(record: RobustRecord, slots: int) -> Cell:
    """One mark per form: the answer's letter or group number, · for none, … while waiting."""
    text = Cell(no_wrap=True, overflow="ellipsis", end="")
    result = record.result
    for i in range(slots):
        if i:
            text.append(" ")
        a = result.answers[i] if result is not None and i < len(result.answers) else None
        a = a or record.answers.get(i)
        if a is None:
            text.append("·" if record.stopped else "…", style="dim")
        elif a.status != ANSWERED:
            text.append("×" if a.status in (REFUSED, FILTERED) else "?", style=MISSING_STYLE)
        elif result is not None and 0 <= a.code < len(result.categories):
            label = result.categories[a.code]
            mark = label if len(label) == 1 else str(a.code + 1)
            style = "bold" if a.code == result.correct else ""
            text.append(mark, style=style)
        else:
            text.append(one_line(a.answer)[:1] or "?")
    return text


def row_cells(record: RobustRecord, slots: int) -> dict[str, Cell]:
    r = record.result
    cells = {
        "num": cell(str(record.position + 1)),
        "question": cell(record.question.text),
        "answers": answers_text(record, slots),
    }
    if r is None:
        waiting = "not run" if record.stopped else "asking" if record.forms else "…"
        cells["flag"] = cell(waiting, "dim")
        for key in ("A", "Y", "mu", "H", "M2"):
            cells[key] = cell(DASH, "dim")
        cells["why"] = cell("")
        return cells
    m = r.metrics
    cells["flag"] = cell("FRAGILE", FRAGILE_STYLE) if r.fragile else cell("ok", "green")
    cells["A"] = cell(_num(m.get("accuracy"), 0))
    cells["Y"] = cell(_num(m.get("plurality"), 0))
    cells["mu"] = cell(_num(m.get("difficulty")))
    cells["H"] = cell(_num(m.get("certainty")))
    cells["M2"] = cell(_num(m.get("m2")))
    cells["why"] = cell(r.fragile_reason, "" if r.fragile else "dim")
    return cells


class RobustTable(NavTable):
    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        ColumnSpec("num", "#", 3),
        ColumnSpec("question", "question", 10, flex=3),
        ColumnSpec("flag", "robust", 8),
        ColumnSpec("answers", "answers", 12),
        ColumnSpec("A", "A", 2),
        ColumnSpec("Y", "Ŷ", 2),
        ColumnSpec("mu", "µD", 4),
        ColumnSpec("H", "Hη", 4),
        ColumnSpec("M2", "M2", 4),
        ColumnSpec("why", "why", 8, flex=2),
    )


def metrics_chart(summary: RobustnessSummary, k: float, raters: int) -> ChartSpec:
    """The quiz's metrics as bars, the random-guessing level of each as a second series."""
    q = summary.quiz
    names = [sym for _, sym in QUIZ_METRICS]
    values = [getattr(q, name) for name, _ in QUIZ_METRICS]
    values = [0.0 if v is None or v != v else max(0.0, float(v)) for v in values]
    limits = guessing_limits(max(2, round(k)), raters)
    # Only A, Ω, O, Ŷ and µD have a guessing level in the seed (§5.1, §5.2).
    guessed = [
        (float(i + 1), limits[name]) for i, (name, _) in enumerate(QUIZ_METRICS) if name in limits
    ]
    xs = tuple(float(i + 1) for i in range(len(names)))
    return ChartSpec(
        title="quiz metrics (bars) vs random guessing (+)",
        series=(
            Series(xs, tuple(values), kind="bar"),
            Series(
                tuple(x for x, _ in guessed),
                tuple(y for _, y in guessed),
                kind="scatter",
                marker="+",
                label="guessing",
            ),
        ),
        xlim=(0.4, len(names) + 0.6),
        ylim=(0.0, 1.05),
        xticks=(xs, tuple(names)),
        yticks=ticks([0, 0.25, 0.5, 0.75, 1.0]),
        bar_width=0.5,
    )


class RobustnessScreen(LiveRunScreen):
    """Runs (``r``) and shows one robustness run of ``quiz``; ``enter`` opens a question."""

    BUSY_LABEL = "A robustness run"  # the quit confirmation: "<label> is running. Quit anyway?"
    RUN_GROUP = "robustness-run"
    FLUSH_TIMER = "robustness-flush"
    FAILED_TITLE = "Robustness failed"

    DEFAULT_CSS = """
    RobustnessScreen { layout: vertical; }
    #rob-header { height: auto; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    #rob-table { height: 1fr; min-height: 4; }
    #rob-bottom { height: 11; border-top: solid $primary; }
    #rob-metrics { width: 50; padding: 0 1; }
    #rob-chart { width: 1fr; min-width: 24; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "start_run", "Run", id="robustness.run"),
        Binding("x", "cancel_run", "Cancel", id="robustness.cancel"),
        Binding("escape", "close", "Back", id="robustness.close"),
    ]

    def __init__(
        self,
        quiz: Quiz,
        start: StartRobustness | None,
        *,
        settings: RobustnessSettings | None = None,
        stored: Callable[[], tuple[int, list[object]] | None] | None = None,
        autorun: bool = True,
        flush_interval: float = 0.1,
    ) -> None:
        super().__init__(id="robustness", flush_interval=flush_interval)
        self.quiz = quiz
        self.start = start
        self.settings = settings or RobustnessSettings()
        self.stored = stored
        self.stored_run: int | None = None  # the stored run on show, until r runs a new one
        self.autorun = autorun
        self.progress = RobustProgress()
        self.records: dict[str, RobustRecord] = {}
        self.judge_label = ""
        self.simulated = False
        self._dirty: set[str] = set()
        self._header_dirty = True
        self._shown: dict[str, object] = {}
        self._reset_records()

    @property
    def slots(self) -> int:
        return self.settings.variants + 1

    @property
    def run_status(self) -> str:
        return self.progress.status

    def _reset_records(self) -> None:
        self.records = {q.id: RobustRecord(i, q) for i, q in enumerate(self.quiz.questions)}

    def compose(self) -> ComposeResult:
        yield Static("", id="rob-header")
        yield RobustTable(id="rob-table")
        with Horizontal(id="rob-bottom"):
            yield Static("", id="rob-metrics")
            yield Chart(id="rob-chart")
        yield Footer()

    def on_mount(self) -> None:
        table = self.table
        for record in self.records.values():
            cells = row_cells(record, self.slots)
            table.add_row(*(cells[c.key] for c in RobustTable.COLUMNS), key=record.question.id)
        table.focus()
        self.start_flush_timer()
        if not self.autorun and self.stored is not None:
            self._show_stored(self.stored())
        self.flush()
        if self.start is None:
            self.notify_error(UNAVAILABLE, "Robustness unavailable")
        elif self.autorun:
            self.action_start_run()

    def _show_stored(self, stored: tuple[int, list[object]] | None) -> None:
        """Fill the screen from a stored run: its events, as its run sent them."""
        if stored is None:
            return
        self.stored_run, events = stored
        self.progress = RobustProgress(status=RUNNING, total=len(self.records))
        for event in events:
            self._apply(event)
        self.progress.status = FINISHED
        self._dirty = set(self.records)
        self._header_dirty = True

    @property
    def table(self) -> RobustTable:
        return self.query_one("#rob-table", RobustTable)

    CHART_MIN_WIDTH: ClassVar[int] = 100  # narrower, ten labelled bars do not fit beside the text

    def on_resize(self, event: Resize) -> None:
        self.query_one("#rob-chart", Chart).display = event.size.width >= self.CHART_MIN_WIDTH

    # -- runs -------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_run":
            return True if self.start is not None and not self.running else None
        if action == "close":
            stack = self.app.screen_stack
            return self in stack and stack.index(self) > 0
        return super().check_action(action, parameters)

    def action_start_run(self) -> None:
        if self.start is None:
            self.notify_error(UNAVAILABLE, "Robustness unavailable")
            return
        if self.ask_cost_first():  # a paid judge: the dialog starts it on yes
            return
        self._reset_records()
        self.stored_run = None
        self._dirty = set(self.records)
        self.progress = RobustProgress(status=RUNNING, total=len(self.records))
        self._header_dirty = True
        self.refresh_bindings()
        self.start_run_worker(self.start, self._apply)
        self.flush()

    def _apply(self, event: object) -> None:
        p = self.progress
        if isinstance(event, RobustnessStarted):
            self.judge_label, self.simulated = event.judge_label, event.simulated
            self._header_dirty = True
        elif isinstance(event, FormsWritten):
            record = self.records.get(event.question_id)
            if record is not None:
                record.forms = event.forms
                self._dirty.add(event.question_id)
        elif isinstance(event, FormAnswered):
            record = self.records.get(event.question_id)
            if record is not None:
                record.answers[event.answer.form] = event.answer
                self._dirty.add(event.question_id)
            p.answers += event.answer.status == ANSWERED
            p.missing += event.answer.status != ANSWERED
            p.refused += event.answer.status in (REFUSED, FILTERED)
            self._header_dirty = True
        elif isinstance(event, RobustnessRetried):
            p.retries += 1
            record = self.records.get(event.question_id)
            if record is not None:
                record.retries += 1
            self._header_dirty = True
        elif isinstance(event, QuestionMeasured):
            record = self.records.get(event.result.question_id)
            if record is not None:
                record.result = event.result
                record.forms = event.result.forms
                self._dirty.add(record.question.id)
            p.measured += 1
            p.fragile += event.result.fragile
            self._header_dirty = True
        elif isinstance(event, RobustnessFinished):
            p.summary = event.summary
            self._header_dirty = True

    def run_succeeded(self) -> None:
        summary = self.progress.summary
        stopped = summary.stopped if summary is not None else None
        self.end_run(FAILED if stopped else FINISHED)
        if stopped:
            self.notify_error(stopped, "Robustness stopped")
        else:
            flags = {
                qid: (r.result.fragile, r.result.fragile_reason)
                for qid, r in self.records.items()
                if r.result is not None
            }
            self.post_message(FragilityMeasured(flags))

    def end_run(self, status: str, error: str | None = None) -> None:
        if error is not None:
            self.progress.error = error
        self.progress.status = status
        for key, record in self.records.items():
            if record.result is None:
                record.stopped = True
                self._dirty.add(key)
        self._header_dirty = True
        self.refresh_bindings()
        self.flush()

    def action_close(self) -> None:
        stack = self.app.screen_stack
        if self in stack and stack.index(self) > 0:
            self.dismiss(None)

    # -- buffered flush ---------------------------------------------------------------------------

    def flush(self) -> None:
        table = self.table
        if self._dirty:
            for key in self._dirty:
                if key not in table.rows:
                    continue
                table.update_changed(key, row_cells(self.records[key], self.slots))
            self._dirty.clear()
        if self._header_dirty:
            self._header_dirty = False
            show_text(self, self._shown, "#rob-header", self._header_text())
            show_text(self, self._shown, "#rob-metrics", self._metrics_text())
            summary = self.progress.summary
            if summary is not None:
                k = sum(q.n for q in self.quiz.questions) / max(1, len(self.quiz.questions))
                self.query_one("#rob-chart", Chart).show(metrics_chart(summary, k, self.slots))

    def _header_text(self) -> Text:
        p = self.progress
        s = self.settings
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(" robustness ", style="bold reverse")
        text.append(" ")
        text.append(one_line(self.quiz.title))
        text.append(f"  {len(self.records)} questions", style="dim")
        text.append("  ")
        text.append(f"[{p.status}]", style=STATUS_STYLES.get(p.status, ""))
        if self.stored_run is not None:
            text.append(f"  stored run #{self.stored_run} · r runs it again", style="dim")
        text.append("\n")
        if self.simulated:
            text.append(" SIMULATED ", style="bold reverse yellow")
        text.append(f" {s.format}, q0 + {s.variants} rewrites", style="bold")
        text.append("  judge: ", style="dim")
        text.append(one_line(self.judge_label) if self.judge_label else "(known once a run starts)")
        text.append("\n ")
        if p.status == IDLE:
            text.append("press r to run", style="dim")
            return text
        text.append(f"measured {p.measured}/{p.total}", style="bold")
        text.append(f" · answers {p.answers}/{p.total * self.slots}")
        text.append(" · refused ")
        text.append(str(p.refused), style=MISSING_STYLE if p.refused else "")
        text.append(f" · no answer {p.missing} · retries {p.retries} · fragile ")
        text.append(str(p.fragile), style=FRAGILE_STYLE if p.fragile else "")
        return text

    def _metrics_text(self) -> Text:
        p = self.progress
        text = Text(end="")
        summary = p.summary
        if p.error:
            text.append("failed: ", style="bold red")
            text.append(printable(p.error))
            return text
        if summary is None:
            text.append("quiz metrics appear when the run ends", style="dim")
            return text
        q = summary.quiz
        for i, (name, sym) in enumerate(QUIZ_METRICS):
            text.append(f"{sym} ", style="bold")
            text.append(_num(_tidy(getattr(q, name)), 3))
            text.append("\n" if i in (4, len(QUIZ_METRICS) - 1) else "  ")
        ok = q.ordering_holds
        text.append("Ω ≤ min(Ŷ,A) ≤ max(Ŷ,A) ≤ O ", style="dim")
        text.append("holds" if ok else "FAILS", style="green" if ok else "bold red")
        st = summary.statuses
        text.append(
            f"\nrefused {st.get('refused', 0)} · filtered {st.get('filtered', 0)}"
            f" · unparsed {st.get('unparsed', 0)} · failed {st.get('failed', 0)}"
        )
        if st.get("not asked"):
            text.append(f" · not asked {st['not asked']}")
        text.append(
            f"\ntokens rewrite {summary.rewrite.tokens_in}/{summary.rewrite.tokens_out}"
            f" · answer {summary.answer.tokens_in}/{summary.answer.tokens_out}"
        )
        text.append(f"\nκ, α, αf over {q.complete_questions} complete questions", style="dim")
        return text

    # -- detail -----------------------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        record = self.records.get(str(event.row_key.value))
        if record is not None:
            self.app.push_screen(RobustDetailScreen(record, self.slots))

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        return [
            (
                "Run: robustness",
                "Rewrite and answer every question again (r)",
                self.action_start_run,
            ),
            ("Run: cancel", "Cancel the run; measured questions stay (x)", self.action_cancel_run),
        ]


def detail_text(record: RobustRecord, slots: int) -> Text:
    """Every form of the question, its answer and why a form has none."""
    q = record.question
    r = record.result
    text = Text(end="")
    text.append(f"{record.position + 1}. ", style="bold")
    text.append(printable(q.text), style="bold")
    text.append("\n")
    for i, option in enumerate(q.options):
        text.append(f"   {chr(65 + i)}. ", style="bold" if i == q.key else "dim")
        text.append(printable(option), style="bold" if i == q.key else "")
        text.append("  (key)\n" if i == q.key else "\n")
    if r is not None:
        text.append("\n")
        text.append(
            "FRAGILE" if r.fragile else "robust", style=FRAGILE_STYLE if r.fragile else "green"
        )
        text.append(": ")
        text.append(printable(r.fragile_reason))
        if r.rewrite_note:
            text.append("\nrewriter: ", style="dim")
            text.append(printable(r.rewrite_note), style=MISSING_STYLE)
        m = r.metrics
        text.append(
            f"\nA {_num(m.get('accuracy'), 0)} · Ŷ {_num(m.get('plurality'), 0)}"
            f" · µD {_num(m.get('difficulty'))} · Hη {_num(m.get('certainty'))}"
            f" · M2 {_num(m.get('m2'))} · P {_num(m.get('agreement'))}",
            style="dim",
        )
        text.append(
            f"\ntokens: rewrite {r.rewrite_usage.tokens_in}/{r.rewrite_usage.tokens_out},"
            f" answers {r.answer_usage.tokens_in}/{r.answer_usage.tokens_out}",
            style="dim",
        )
    text.append("\n")
    forms = r.forms if r is not None else record.forms
    for i in range(slots):
        a = (r.answers[i] if r is not None and i < len(r.answers) else None) or record.answers.get(
            i
        )
        text.append("\n")
        text.append("q0 " if i == 0 else f"q{i} ", style="bold")
        text.append(
            printable(forms[i]) if i < len(forms) else "(no such rewrite)",
            style="" if i < len(forms) else "dim",
        )
        text.append("\n    → ")
        if a is None:
            text.append("waiting" if not record.stopped else "not run", style="dim")
        elif a.status == ANSWERED:
            label = a.answer
            if (
                r is not None
                and 0 <= a.code < len(r.categories)
                and r.categories[a.code] != a.answer
            ):
                label = f"{a.answer}  (group {a.code + 1}: {r.categories[a.code]})"
            right = r is not None and a.code == r.correct
            text.append(printable(label), style="bold green" if right else "bold")
            text.append("  matches the key" if right else "", style="dim")
        else:
            text.append(a.status.upper(), style=MISSING_STYLE)
            text.append(f": {printable(a.reason)}", style=MISSING_STYLE)
    return text


class RobustDetailScreen(Screen[None]):
    """One question's forms and answers; esc goes back."""

    DEFAULT_CSS = """
    RobustDetailScreen { layout: vertical; }
    #rob-detail-body { padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="robustness.detail.close"),
    ]

    def __init__(self, record: RobustRecord, slots: int) -> None:
        super().__init__()
        self.record = record
        self.slots = slots

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(detail_text(self.record, self.slots), id="rob-detail-body")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = [
    "FragilityMeasured",
    "RobustDetailScreen",
    "RobustRecord",
    "RobustTable",
    "RobustnessScreen",
    "detail_text",
    "row_cells",
]
