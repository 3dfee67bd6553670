"""The Runs screen: past runs from the store; open one read-only; mark two and compare them.

The screen reads nothing itself: a :class:`RunsSource` (``pipeline.history.StoreHistory`` in the
app) lists runs, opens one as a summary and compares two. Each call runs in a worker thread (a
store read can take a moment on a large file) and its result is shown when it returns; a
``QuiztuiError`` (an unknown run, runs of different quizzes) becomes a toast.

Every kind of run is listed (store/history.py: vet, calibrate, panel, grade, review, robustness,
generate, kfold),
its kind beside its status; a grade run opens on the Grade screen with its stored outcomes
replayed, a robustness or review run on its own screen with its stored results over its quiz
file, a k-fold fit on the Benchmark screen with its grade runs and its stored fold table
replayed (nothing is sent or fitted again).

Keys: ``enter`` opens the highlighted run (:class:`RunScreen`: its questions with badges,
confidence, verdicts and suggested option; ``enter`` there opens a question), ``space`` marks a
run, ``c`` compares the two marked runs (or the marked one with the highlighted one) on the
comparison screen (:mod:`quiztui.tui.screens.compare`), ``r`` reloads, ``escape`` goes back.
Quiz text and model replies are shown as ``Text``, never parsed as markup.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, WorkerState

from quiztui.core.figures import (
    INCOMPLETE,
    is_partial,
    judge_rates_text,
    prior_text,
    run_state_text,
)
from quiztui.core.figures import cost_text as figures_cost_text
from quiztui.core.quiz import Question
from quiztui.errors import QuiztuiError
from quiztui.pipeline.events import QuestionScored
from quiztui.store.history import KFOLD, RUNS_TABLE_KINDS, listing_key
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.screens.run_screen import error_message, log_worker_error
from quiztui.tui.state import AssertionRecord, QuestionRecord
from quiztui.tui.widgets.cells import BADGE_STYLES, DASH, Cell, cell, judge_text, one_line
from quiztui.tui.widgets.header import STATUS_STYLES
from quiztui.tui.widgets.tables import ColumnSpec, NavTable, QuestionsTable

if TYPE_CHECKING:
    from quiztui.pipeline.history import (
        LoadedRun,
        RunComparison,
        StoredGrade,
        StoredKFold,
        StoredReview,
        StoredRobustness,
    )
    from quiztui.store.runs import RunListing


class RunsSource(Protocol):
    """Where the Runs screen reads the history (``pipeline.history.StoreHistory``)."""

    def list_runs(self) -> Sequence[RunListing]: ...
    def open_run(self, run_id: int) -> LoadedRun: ...
    def open_grade(self, run_id: int) -> StoredGrade: ...
    def open_kfold(self, fit_id: int) -> StoredKFold: ...
    def open_robustness(self, run_id: int) -> StoredRobustness: ...
    def open_review(self, run_id: int) -> StoredReview: ...
    def compare(self, run_a: int, run_b: int) -> RunComparison: ...


def when(timestamp: float, fmt: str = "%m-%d %H:%M") -> str:
    return time.strftime(fmt, time.localtime(timestamp))


def cost_text(r: RunListing) -> str:
    """A listed run's cost in the reports' wording (core/figures.cost_text); — when unknown."""
    if r.simulated:
        return figures_cost_text(None, simulated=True)
    return DASH if r.cost is None else figures_cost_text(r.cost)


def judge_cell(simulated: bool, model: str) -> Cell:
    """The judge's model; a simulated judge is marked SIM (its model names its TPR/TNR)."""
    if not simulated:
        return cell(model)
    out = cell("SIM ", "bold yellow")
    out.append(one_line(model.removeprefix("simulated-")))
    return out


BADGE_ORDER = ("good", "questionable", "poor", "incomplete", "pending")


def badge_counts(text: Text, counts: dict[str, int]) -> None:
    """Append "good 4 · questionable 3 · …" (badges with a count, in severity order)."""
    for name in (*BADGE_ORDER, *sorted(set(counts) - set(BADGE_ORDER))):
        if counts.get(name):
            text.append(f"{name} {counts[name]}", style=BADGE_STYLES.get(name, ""))
            text.append(" · ")


def badge_counts_text(counts: dict[str, int], has_summary: bool) -> str:
    if not has_summary:
        return DASH
    return "/".join(str(counts.get(b, 0)) for b in ("good", "questionable", "poor"))


class RunTable(NavTable):
    """One row per stored run, newest first; a ● in the id column marks a run to compare. The
    id is as ``quiztui runs`` prints it (``grade:3`` beside the vet/calibrate/panel sequence: two
    kinds never show the same bare id), and the kind has its own column."""

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        ColumnSpec("id", "  id", 14),
        ColumnSpec("kind", "kind", 10),
        ColumnSpec("date", "date", 11),
        ColumnSpec("status", "status", 10),
        ColumnSpec("quiz", "quiz", 6, flex=1),
        ColumnSpec("judge", "judge", 6, flex=1),
        ColumnSpec("questions", " qs", 3),
        ColumnSpec("badges", "g/q/p", 8),
        ColumnSpec("unjudged", "unj", 4),
        ColumnSpec("cost", "cost", 7),
    )
    # Narrow, these fold away in this order (the panel below names them for the highlighted run)
    PRIORITY: ClassVar[dict[str, int]] = {
        "badges": 0,
        "questions": 1,
        "cost": 2,
        "judge": 3,
        "unjudged": 4,
        "date": 5,  # at 80 columns: id, kind, status, quiz, qs, g/q/p and cost
    }

    @staticmethod
    def row_cells(r: RunListing, marked: bool) -> list[Cell]:
        mark = cell("● " if marked else "  ", "bold")
        mark.append(f"{listing_key(r):>12}")
        status = INCOMPLETE if is_partial(r.status, r.not_run) else r.status
        # badges are a vet run's: — for grade, review and robustness runs
        badges = badge_counts_text(r.badge_counts, r.has_summary and r.kind in RUNS_TABLE_KINDS)
        return [
            mark,
            cell(r.kind),
            cell(when(r.created_at)),
            cell(status, STATUS_STYLES.get(r.status, "")),
            cell(r.quiz_title),
            judge_cell(r.simulated, r.model),
            cell(f"{r.questions:>3}"),
            cell(f"{badges:>8}"),
            cell(f"{r.unjudged:>4}", "bold magenta" if r.unjudged else "dim"),
            cell(f"{cost_text(r):>7}"),
        ]


def listing_text(r: RunListing) -> Text:
    """The highlighted run in full (the table clips quiz and judge at 80 columns)."""
    text = Text(end="")
    text.append(f"run {listing_key(r)}", style="bold")
    text.append(f" · {r.kind} · ")
    text.append(run_state_text(r.status, r.not_run), style=STATUS_STYLES.get(r.status, ""))
    ended = f" → {when(r.finished_at, '%H:%M')}" if r.finished_at else ""
    text.append(f" · {when(r.created_at, '%Y-%m-%d %H:%M')}{ended} · ")
    text.append(one_line(r.quiz_title), style="bold")
    if r.quiz_path:
        text.append(f" ({one_line(r.quiz_path)})", style="dim")
    text.append("\njudge ")
    judge_text(text, r.simulated, r.judge_label)
    text.append(f" · {'marks' if r.kind == KFOLD else 'quiz'} hash {r.quiz_hash[:12]}", style="dim")
    text.append("\n")
    if r.has_summary:
        badge_counts(text, r.badge_counts)
    elif r.kind == KFOLD:
        text.append("no fold table stored (the fit ended before it) · ", style="dim")
    else:
        text.append("no stored summary (rebuilt from its verdicts when opened) · ", style="dim")
    text.append(f"{r.judged}/{r.assertions} judged · {r.unjudged} unjudged")
    text.append(f" · cost {cost_text(r)}")
    return text


class RunsScreen(Screen[None]):
    """The run history of one store; see the module docstring for the keys."""

    BUSY_LABEL = "Loading"
    DEFAULT_CSS = """
    RunsScreen { layout: vertical; }
    #runs-bar { height: 1; background: $boost; padding: 0 1; }
    #runs-table { height: 1fr; min-height: 4; }
    #runs-detail {
        height: 4; border-top: solid $primary; padding: 0 1;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_mark", "Mark", id="runs.mark", tooltip="mark a run to compare"),
        Binding("c", "compare", "Compare", id="runs.compare", tooltip="compare two marked runs"),
        Binding("r", "reload", "Reload", id="runs.reload"),
        Binding("escape", "close", "Back", id="runs.close"),
    ]

    def __init__(
        self,
        source: RunsSource | None,
        *,
        compare_newest: bool = False,
        calibrations: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__(id="runs")
        self.source = source
        # The Grade screen's calibrations (assemble.grade.GradeCalibrations) for a stored grade
        # run opened here, read when one is opened; None: raw scores only.
        self.calibrations = calibrations
        self.listings: list[RunListing] = []
        self.marked: list[int] = []  # run ids, at most two, in the order they were marked
        self.loaded = False
        # Once loaded, compare the two newest vet runs (the palette's "compare two runs").
        self.compare_newest = compare_newest

    @property
    def running(self) -> bool:  # what GradeApp asks before quitting: nothing to lose here
        return False

    def compose(self) -> ComposeResult:
        yield Static("", id="runs-bar")
        yield RunTable(id="runs-table")
        yield Static("", id="runs-detail")
        yield Footer()

    @property
    def table(self) -> RunTable:
        return self.query_one("#runs-table", RunTable)

    def on_mount(self) -> None:
        self.table.focus()
        self._bar("loading the run history…")
        self.action_reload()

    def _bar(self, message: str) -> None:
        self.query_one("#runs-bar", Static).update(Text(message, style="bold"))

    # -- loading ----------------------------------------------------------------------------------

    def action_reload(self) -> None:
        if self.source is None:
            self._bar("Run history unavailable: no run store is wired to this app")
            return
        self._load()

    @work(exclusive=True, exit_on_error=False, group="runs-load")
    async def _load(self) -> None:
        assert self.source is not None
        try:
            listings = await asyncio.to_thread(self.source.list_runs)
        except QuiztuiError as exc:
            self._bar(f"Run history unavailable: {exc}")
            return
        self.show(list(listings))

    def show(self, listings: list[RunListing]) -> None:
        self.listings = listings
        self.loaded = True
        ids = {r.id for r in listings if r.kind in RUNS_TABLE_KINDS}
        self.marked = [i for i in self.marked if i in ids]
        table = self.table
        keep = table.cursor_row_key
        table.clear()
        for r in listings:
            marked = r.kind in RUNS_TABLE_KINDS and r.id in self.marked
            table.add_row(*RunTable.row_cells(r, marked), key=listing_key(r))
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep), animate=False)
        self._refresh_bar()
        self._refresh_detail()
        if self.compare_newest:
            self.compare_newest = False
            newest = [r.id for r in listings if r.kind == "vet"][:2]
            if len(newest) < 2:
                self.notify("Two vet runs are needed to compare; vet the quiz again", timeout=5)
                return
            self.marked = newest[::-1]
            self.action_compare()

    def _refresh_bar(self) -> None:
        n = len(self.listings)
        text = Text(end="")
        text.append(f"Runs · {n} shown, newest first", style="bold")
        if self.marked:
            text.append(" · marked " + ", ".join(str(i) for i in self.marked))
            if len(self.marked) == 2:
                text.append(" · c compares them", style="dim")
        elif n:
            text.append(" · enter open · space mark two · c compare", style="dim")
        else:
            text.append(" · no runs stored yet (vet a quiz first)", style="dim")
        self.query_one("#runs-bar", Static).update(text)

    def _refresh_detail(self) -> None:
        current = self.current
        detail = self.query_one("#runs-detail", Static)
        detail.update(listing_text(current) if current is not None else Text(""))

    @property
    def current(self) -> RunListing | None:
        key = self.table.cursor_row_key
        if key is None:
            return None
        return next((r for r in self.listings if listing_key(r) == key.value), None)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table is self.table:
            self._refresh_detail()

    # -- marking and comparing --------------------------------------------------------------------

    def action_toggle_mark(self) -> None:
        current = self.current
        if current is None:
            return
        if current.kind not in RUNS_TABLE_KINDS:
            self.notify(f"Only vet runs are compared; this is a {current.kind} run", timeout=4)
            return
        if current.id in self.marked:
            self.marked.remove(current.id)
        else:
            self.marked.append(current.id)
            self.marked = self.marked[-2:]  # a third mark replaces the oldest
        for r in self.listings:
            if r.kind in RUNS_TABLE_KINDS:
                marked = r.id in self.marked
                self.table.update_cell(listing_key(r), "id", RunTable.row_cells(r, marked)[0])
        self._refresh_bar()

    def compare_pair(self) -> tuple[int, int] | None:
        """The two marked runs, or the one marked and the highlighted one; older first."""
        pair = list(self.marked)
        current = self.current
        if current is not None and current.kind not in RUNS_TABLE_KINDS:
            current = None
        if len(pair) == 1 and current is not None and current.id != pair[0]:
            pair.append(current.id)
        if len(pair) != 2:
            return None
        a, b = sorted(pair)
        return a, b

    def action_compare(self) -> None:
        pair = self.compare_pair()
        if pair is None:
            self.notify("Mark two runs with space, then press c", severity="warning")
            return
        if self.source is None:
            return
        self._compare(*pair)

    @work(exclusive=True, exit_on_error=False, group="runs-open")
    async def _compare(self, run_a: int, run_b: int) -> None:
        from quiztui.tui.screens.compare import CompareScreen

        assert self.source is not None
        try:
            result = await asyncio.to_thread(self.source.compare, run_a, run_b)
        except QuiztuiError as exc:
            self.notify(str(exc), title="Cannot compare", severity="error", markup=False)
            return
        await self.app.push_screen(CompareScreen(result))

    # -- opening a run ----------------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table is not self.table or self.source is None:
            return
        listing = self.current
        if listing is None:
            return
        if listing.kind in RUNS_TABLE_KINDS:
            self._open(listing.id)
        elif listing.kind == "grade":
            self._open_grade(listing.id)
        elif listing.kind == "kfold":
            self._open_kfold(listing.id)
        elif listing.kind == "robustness":
            self._open_robustness(listing.id)
        elif listing.kind == "review":
            self._open_review(listing.id)
        elif listing.kind == "generate":  # its pairs are a quiz file: open that with quiztui
            self.notify(
                f"Generate run {listing.id} wrote {listing.questions} pair(s) to"
                f" {listing.quiz_path}: open that file with `quiztui vet` or `quiztui grade`",
                title="A generate run",
                markup=False,
                timeout=6,
            )

    @work(exclusive=True, exit_on_error=False, group="runs-open")
    async def _open_grade(self, run_id: int) -> None:
        """A grade run on the Grade screen: its stored outcomes replayed, nothing sent."""
        from quiztui.tui.screens.grade import GradeScreen, calibration_options

        assert self.source is not None
        try:
            stored = await asyncio.to_thread(self.source.open_grade, run_id)
        except QuiztuiError as exc:
            self.notify(str(exc), title="Cannot open the run", severity="error", markup=False)
            return

        async def replay(items: object, grader: str) -> AsyncIterator[object]:
            for event in stored.events:
                yield event

        calibrations = None
        if self.calibrations is not None:
            calibrations = await asyncio.to_thread(self.calibrations)
        await self.app.push_screen(
            GradeScreen(
                stored.items,
                replay,
                grader=stored.grader,
                source=stored.source,
                **calibration_options(calibrations),
            )
        )

    @work(exclusive=True, exit_on_error=False, group="runs-open")
    async def _open_kfold(self, fit_id: int) -> None:
        """A k-fold fit on the Benchmark screen: its grade runs' stored outcomes and its stored
        fold table replayed (nothing graded or fitted again). A fit that ended before its
        table says so in a toast, in the house wording."""
        from quiztui.tui.screens.benchmark import BenchmarkScreen

        assert self.source is not None
        try:
            stored = await asyncio.to_thread(self.source.open_kfold, fit_id)
        except QuiztuiError as exc:
            self.notify(str(exc), title="Cannot open the run", severity="error", markup=False)
            return
        record = stored.record
        if stored.scored is None:
            self.notify(
                f"kfold:{fit_id} is {stored.state or record.status}: it stored no fold table",
                title="No fold table",
                severity="warning",
                markup=False,
                timeout=6,
            )
            return

        async def replay() -> AsyncIterator[object]:
            for event in stored.events:
                yield event

        await self.app.push_screen(
            BenchmarkScreen(
                replay,
                dataset=stored.scored.result.dataset,
                grader=" + ".join(record.graders),
                calibration="kfold",
                train=record.marked * len(record.graders),
                test=0,
            )
        )
        if stored.state:
            self.notify(f"kfold:{fit_id} is {stored.state}", severity="warning", markup=False)

    @work(exclusive=True, exit_on_error=False, group="runs-open")
    async def _open(self, run_id: int) -> None:
        assert self.source is not None
        try:
            loaded = await asyncio.to_thread(self.source.open_run, run_id)
        except QuiztuiError as exc:
            self.notify(str(exc), title="Cannot open the run", severity="error", markup=False)
            return
        await self.app.push_screen(RunScreen(loaded))

    @work(exclusive=True, exit_on_error=False, group="runs-open")
    async def _open_robustness(self, run_id: int) -> None:
        """A robustness run on the Robustness screen: its stored results replayed over its quiz
        file (nothing sent); its fragility flags stay on that screen."""
        from quiztui.pipeline.robustness import RobustnessSettings
        from quiztui.tui.screens.robustness import RobustnessScreen

        assert self.source is not None
        try:
            stored = await asyncio.to_thread(self.source.open_robustness, run_id)
        except QuiztuiError as exc:
            self.notify(str(exc), title="Cannot open the run", severity="error", markup=False)
            return

        async def replay() -> AsyncIterator[object]:
            for event in stored.events:
                yield event

        class StoredRobustnessScreen(RobustnessScreen):
            def on_fragility_measured(self, message: Message) -> None:
                message.stop()  # an old run's flags are not the vet screen's newest

        settings = RobustnessSettings(variants=stored.variants)
        await self.app.push_screen(StoredRobustnessScreen(stored.quiz, replay, settings=settings))
        if stored.changed:
            self.notify(
                "The quiz file changed since this run: its questions are shown as they are now",
                severity="warning",
                timeout=6,
            )

    @work(exclusive=True, exit_on_error=False, group="runs-open")
    async def _open_review(self, run_id: int) -> None:
        """A review run on the Review screen: the questions it reviewed, with their stored
        scores and trajectories replayed (nothing is sent)."""
        from quiztui.tui.screens.review import ReviewScreen

        assert self.source is not None
        try:
            stored = await asyncio.to_thread(self.source.open_review, run_id)
        except QuiztuiError as exc:
            self.notify(str(exc), title="Cannot open the run", severity="error", markup=False)
            return

        async def replay(quiz: object, mode: str) -> AsyncIterator[object]:
            for event in stored.events:
                yield event

        await self.app.push_screen(ReviewScreen(stored.quiz, replay, mode=stored.mode))
        if stored.changed:
            self.notify(
                "The quiz file changed since this run: questions no longer in it are left out",
                severity="warning",
                timeout=6,
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A store read that raised something other than a QuiztuiError is a bug: its
        traceback goes to the log, one line to a toast."""
        if event.state == WorkerState.ERROR:
            log_worker_error(self, event.worker)
            self.notify(
                one_line(error_message(event.worker.error)),
                title="Run history failed",
                severity="error",
                markup=False,
                timeout=10,
            )

    # -- back -------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":
            stack = self.app.screen_stack
            return self in stack and stack.index(self) > 0
        if action == "compare":
            return True if self.compare_pair() is not None else None
        return True

    def action_close(self) -> None:
        self.app.pop_screen()

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        return [
            ("Runs: reload", "Read the run history again (r)", self.action_reload),
            (
                "Runs: mark",
                "Mark the highlighted run for comparing (space)",
                self.action_toggle_mark,
            ),
            ("Runs: compare", "Compare the two marked runs (c)", self.action_compare),
        ]


# -- one run, read-only ---------------------------------------------------------------------------


def records_from(loaded: LoadedRun) -> list[QuestionRecord]:
    """The stored summary's questions as the records the vet widgets show (nothing computed)."""
    records = []
    for number, q in enumerate(loaded.summary.questions, start=1):
        question = Question(id=q.question_id, text=q.text, options=q.options, key=q.key)
        options: dict[int, AssertionRecord] = {}
        for i in range(len(q.options)):
            seq = loaded.seqs.get((q.question_id, i))
            verdict = q.verdicts[i] if i < len(q.verdicts) else None
            reason = q.reasons[i] if i < len(q.reasons) else ""
            if seq is None or (verdict is None and not reason):
                continue  # never sent (run stopped before it): "not judged yet"
            p_true = q.p_true[i] if i < len(q.p_true) else None
            options[i] = AssertionRecord(seq, q.question_id, i, verdict, reason, p_true=p_true)
        score = QuestionScored(
            question_id=q.question_id,
            k=q.k,
            n=len(q.options),
            judged=sum(v is not None for v in q.verdicts),
            badge=q.badge,
            confidence=q.confidence,
            suggested_option=q.suggested_option,
            suggested_p=q.suggested_p,
            interval=q.interval,
            graded=q.graded,
        )
        records.append(QuestionRecord(number, question, options, score))
    return records


def verdicts_cell(record: QuestionRecord) -> Cell:
    """One letter per option: T, F, ? (unjudged), · (never sent)."""
    letters = []
    for i in range(record.question.n):
        a = record.options.get(i)
        letters.append(
            "·" if a is None else "?" if a.verdict is None else "T" if a.verdict else "F"
        )
    return cell("".join(letters))


class RunQuestionsTable(QuestionsTable):
    """The vet screen's questions table without the live-only columns, plus the verdicts."""

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        # no preview line here: the question and the key share the free width as before
        *(
            ColumnSpec(s.key, s.label, s.width, flex=3 if s.key == "question" else 1)
            if s.key in ("question", "key")
            else s
            for s in QuestionsTable.COLUMNS
            if s.key not in ("lint", "robust", "suggested")
        ),
        ColumnSpec("verdicts", "verdicts", 8),
        ColumnSpec("suggested", "suggested option", 6, flex=1),
    )

    @classmethod
    def row_cells(cls, record: QuestionRecord) -> list[Cell]:
        base = QuestionsTable.row_cells(record)
        cells = dict(zip((s.key for s in QuestionsTable.COLUMNS), base, strict=True))
        cells["verdicts"] = verdicts_cell(record)
        return [cells[s.key] for s in cls.COLUMNS]


def run_header(loaded: LoadedRun) -> Text:
    r, s = loaded.record, loaded.summary
    text = Text(end="")
    text.append(f"Run {r.id}", style="bold")
    text.append(" · ")
    text.append(run_state_text(r.status, s.not_run), style=STATUS_STYLES.get(r.status, ""))
    text.append(f" · {when(r.created_at, '%Y-%m-%d %H:%M')} · ")
    text.append(one_line(r.quiz_title), style="bold")
    text.append(" · read-only", style="dim")
    text.append("\njudge ")
    judge_text(text, r.simulated, r.judge_label)
    text.append(
        f" · {judge_rates_text(s.tpr, s.tnr, s.tpr_ci, s.tnr_ci, s.calibration)}"
        f" · prior {prior_text(s.prior, s.prior_label)} · seed {s.seed} · batch {s.batch_size}",
        style="dim",
    )
    text.append(f"\n{len(s.questions)} questions · ")
    badge_counts(text, s.badge_counts)
    text.append(
        f"cost {figures_cost_text(s.cost, s.simulated)} · judged {s.judged} · unjudged {s.unjudged}"
    )
    if loaded.note:
        text.append("\n" + loaded.note, style="italic")
    return text


class RunScreen(Screen[None]):
    """One stored run, read-only: its questions; ``enter`` opens one, ``escape`` goes back."""

    DEFAULT_CSS = """
    RunScreen { layout: vertical; }
    #run-header {
        height: auto; background: $panel; padding: 0 1;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    #run-questions { height: 1fr; min-height: 4; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="run.close"),
    ]

    def __init__(self, loaded: LoadedRun) -> None:
        super().__init__()
        self.loaded = loaded
        self.records = records_from(loaded)

    def compose(self) -> ComposeResult:
        yield Static(run_header(self.loaded), id="run-header")
        yield RunQuestionsTable(id="run-questions")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#run-questions", RunQuestionsTable)
        table.show(self.records)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        record = next((r for r in self.records if r.question.id == event.row_key.value), None)
        if record is not None:
            self.app.push_screen(QuestionDetailScreen(record, len(self.records)))

    def action_close(self) -> None:
        self.app.pop_screen()


__all__ = ["RunScreen", "RunTable", "RunsScreen", "RunsSource", "records_from"]
