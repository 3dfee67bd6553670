"""The Benchmark screen: a grader scored against human 0-5 scores (seed 003's method).

``start()`` (``assemble.grade.benchmark_events`` behind a closure) grades the train and test splits
and ends with ``BenchmarkScored``. While it runs the screen shows progress; then the comparison
table (this grader, the constant-mean baseline and the seed's published figures — the rows of
``report.grades.benchmark_rows``, as the CLI prints them), the 3×3 bracket confusion matrix on
test (rows human, columns predicted), the calibration map and a scatter plot of mapped against
human test scores with the bracket boundaries at 2 and 4. Nothing is computed here.

With ``--fit kfold`` (``assemble.grade.kfold_events``) the run ends with ``KFoldScored``: the
table is the CLI's k-fold table (``report.grade_fit.kfold_rows``: every model's held-out figures
with their bootstrap intervals, beside the constant-mean and lexical-overlap baselines), and the
confusion matrix and scatter plot are those of the best model's held-out predictions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, ProgressBar, Static

from quiztui.core.benchmark import SCALE_MAX, Agreement, BenchmarkResult
from quiztui.pipeline.grade import (
    BenchmarkScored,
    GradeFinished,
    GradeRetried,
    GradeStarted,
    ItemGraded,
)
from quiztui.pipeline.grade_fit import KFoldScored
from quiztui.report.grade_fit import kfold_rows
from quiztui.report.grades import benchmark_rows, confusion_rows
from quiztui.tui.screens.run_screen import LiveRunScreen
from quiztui.tui.state import FAILED, FINISHED, IDLE, RUNNING
from quiztui.tui.widgets.cells import one_line, printable
from quiztui.tui.widgets.header import STATUS_STYLES
from quiztui.tui.widgets.plots import Chart, ChartSpec, Series, ticks
from quiztui.tui.widgets.statics import show_text

StartBenchmark = Callable[[], AsyncIterator[Any]]
UNAVAILABLE = "Benchmarking is unavailable: this screen was opened without a runner."


@dataclass
class BenchmarkProgress:
    status: str = IDLE
    judge_label: str = ""
    simulated: bool = False
    done: int = 0
    done_train: int = 0
    done_test: int = 0
    unscored: int = 0
    retries: int = 0
    result: BenchmarkResult | None = None
    kfold: KFoldScored | None = None
    error: str | None = None

    def apply(self, event: object) -> None:
        if isinstance(event, GradeStarted):
            self.judge_label, self.simulated = event.judge_label, event.simulated
        elif isinstance(event, ItemGraded):
            self.done += 1
            self.done_train += event.split == "train"
            self.done_test += event.split == "test"
            self.unscored += not event.outcome.scored
        elif isinstance(event, GradeRetried):
            self.retries += 1
        elif isinstance(event, GradeFinished) and event.summary.stopped:
            self.error = event.summary.stopped
        elif isinstance(event, BenchmarkScored):
            self.result = event.result
        elif isinstance(event, KFoldScored):
            self.kfold = event


def comparison_table(result: BenchmarkResult) -> Table:
    """``benchmark_rows`` as a table: the grader's row first and bold."""
    rows = benchmark_rows(result)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, expand=False)
    heads = list(rows[0])
    for head in heads:
        if head:
            table.add_column(Text(head), justify="right", no_wrap=True)
        else:
            table.add_column(Text("compared with"), overflow="fold", min_width=18)
    for i, row in enumerate(rows):
        style = "bold" if i == 0 else ("dim" if i > 1 else "")
        table.add_row(*(Text(row[h], style=style) for h in heads))
    return table


# The k-fold table's columns in the order they give way when the screen is too narrow for all
# of them (each cell carries its interval, so a column is ~20 cells wide): the model's name,
# its held-out AAD and bracket accuracy always stay.
KFOLD_DROP_ORDER = ("Spearman ρ", "n", "RMSE", "Pearson r")


def kfold_table(scored: KFoldScored, width: int | None = None) -> Table:
    """``kfold_rows`` as a table: baselines dim, the best held-out model bold. With ``width``
    (the cells the table may use) the columns of ``KFOLD_DROP_ORDER`` give way, in that order,
    until it fits, and the caption names what was left out — the model column is never squeezed
    away."""
    rows = kfold_rows(scored.result, scored.scale)
    best = scored.result.best()
    heads = list(rows[0])

    def need(columns: list[str]) -> int:  # cells, with SIMPLE_HEAD's padding between columns
        return sum(max(len(h), *(len(r[h]) for r in rows)) for h in columns) + 2 * (
            len(columns) - 1
        )

    shown = list(heads)
    if width is not None:
        for name in KFOLD_DROP_ORDER:
            if need(shown) <= width:
                break
            shown = [h for h in shown if not h.startswith(name)]
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, expand=False)
    table.add_column(Text(shown[0]), overflow="fold", min_width=18)
    for head in shown[1:]:
        table.add_column(Text(head), justify="right", no_wrap=True)
    for row, fold_row in zip(rows, scored.result.rows, strict=True):
        style = "bold" if fold_row.name == best.name else ("dim" if fold_row.baseline else "")
        table.add_row(*(Text(row[h], style=style) for h in shown))
    hidden = [h for h in heads if h not in shown]
    if hidden:
        table.caption = Text(
            f"not shown at this width: {', '.join(hidden)} (widen the terminal, or"
            " quiztui grade … --fit kfold --format md)",
            style="dim",
        )
        table.caption_justify = "left"
    return table


def confusion_table(result: BenchmarkResult | Agreement) -> Table:
    rows = confusion_rows(result.test if isinstance(result, BenchmarkResult) else result)
    heads = list(rows[0])
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column(Text("human ↓ pred →"), no_wrap=True)
    for head in heads[1:]:
        table.add_column(Text(head), justify="right", no_wrap=True)
    for i, row in enumerate(rows):
        cells = [Text(row[heads[0]], style="bold")]
        for j, head in enumerate(heads[1:]):
            cells.append(Text(row[head], style="bold green" if i == j else ""))
        table.add_row(*cells)
    return table


def scatter_spec(result: BenchmarkResult | KFoldScored) -> ChartSpec:
    """Mapped (x) against human (y) test scores, brackets ruled at 2 and 4; for k-fold, the best
    model's held-out predictions against the marks (on 0-5)."""
    top = SCALE_MAX
    if isinstance(result, KFoldScored):
        best = result.result.best()
        predicted, human = best.predicted, best.human
        title = f"human (y) vs {best.name} (x): {best.agreement.n} held-out answers, 0-5"
        xlabel = "predicted score (held out)"
    else:
        predicted, human = result.predicted, result.human
        title = f"human (y) vs mapped (x): {result.test.n} test pairs"
        xlabel = "mapped grader score"
    rules = tuple(
        Series(xs, ys, marker="·", color="gray")
        for b in (2.0, 4.0)
        for xs, ys in (((b, b), (0.0, top)), ((0.0, top), (b, b)))
    )
    # Points and rules differ by character too, so the plot reads without colour (NO_COLOR).
    points = Series(predicted, human, kind="scatter", marker="o", color="cyan")
    return ChartSpec(
        title=title,
        xlabel=xlabel,
        series=(*rules, points),
        xlim=(0.0, top),
        ylim=(0.0, top),
        xticks=ticks((0, 1, 2, 3, 4, 5)),
        yticks=ticks((0, 1, 2, 3, 4, 5)),
    )


class BenchmarkScreen(LiveRunScreen):
    """Benchmarks one grader; ``r`` runs it again, ``x`` cancels."""

    BUSY_LABEL = "A benchmark"  # the quit confirmation: "<label> is running. Quit anyway?"
    RUN_GROUP = "benchmark"
    FLUSH_TIMER = "bench-flush"
    FAILED_TITLE = "Benchmark failed"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "start_run", "Run again", id="benchmark.run"),
        Binding("x", "cancel_run", "Cancel", id="benchmark.cancel"),
        Binding("escape", "close", "Back", id="benchmark.close"),
    ]

    def __init__(
        self,
        start: StartBenchmark | None,
        *,
        dataset: str,
        grader: str,
        calibration: str,
        train: int,
        test: int,
        autorun: bool = True,
        flush_interval: float = 0.1,
    ) -> None:
        super().__init__(id="benchmark", flush_interval=flush_interval)
        self.start = start
        self.dataset = dataset
        self.grader = grader
        self.calibration = calibration
        self.train = train
        self.test = test
        self.autorun = autorun
        self.progress = BenchmarkProgress()
        self._shown: dict[str, object] = {}
        self._result_shown: BenchmarkResult | KFoldScored | None = None

    @property
    def run_status(self) -> str:
        return self.progress.status

    @property
    def result(self) -> BenchmarkResult | None:
        return self.progress.result

    def compose(self) -> ComposeResult:
        yield Static("", id="bench-header")
        with Horizontal(id="bench-progress-row"):
            yield ProgressBar(total=1, show_eta=False, id="bench-progress")
            yield Static("", id="bench-count")
        with Vertical(id="bench-results"):
            yield Static("", id="bench-comparison")
            with Horizontal(id="bench-lower"):
                with Vertical(id="bench-left"):
                    yield Static(
                        Text("bracket confusion on test", style="bold", end=""),
                        id="bench-confusion-title",
                    )
                    yield Static("", id="bench-confusion")
                    yield Static("", id="bench-calibration")
                yield Chart(id="bench-plot")
        yield Static("", id="bench-error")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#bench-results").display = False
        self.query_one("#bench-error").display = False
        self.start_flush_timer()
        self.flush()
        if self.autorun:
            self.action_start_run()

    # -- run ------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_run":
            return None if self.running or self.start is None else True
        if action == "close":
            return self._over_another
        return super().check_action(action, parameters)

    @property
    def _over_another(self) -> bool:
        stack = self.app.screen_stack
        return self in stack and stack.index(self) > 0

    def action_start_run(self) -> None:
        if self.running:
            return
        if self.start is None:
            self._show_error(UNAVAILABLE)
            return
        self.progress = BenchmarkProgress(status=RUNNING)
        self._result_shown = None
        self.query_one("#bench-results").display = False
        self._show_error("")
        self.refresh_bindings()
        progress = self.progress
        self.start_run_worker(self.start, progress.apply)
        self.flush()

    def action_close(self) -> None:
        if self._over_another:
            self.dismiss(None)

    def run_succeeded(self) -> None:
        """A grade run that stopped (``GradeFinished.summary.stopped``) leaves an error."""
        error = self.progress.error
        self.end_run(FAILED if error else FINISHED)
        if error:
            self.notify_error(error, "Benchmark failed")

    def end_run(self, status: str, error: str | None = None) -> None:
        if error is not None:
            self.progress.error = error
        self.progress.status = status
        self.refresh_bindings()
        self.flush()

    # -- flush ----------------------------------------------------------------------------------

    def flush(self) -> None:
        p = self.progress
        show_text(self, self._shown, "#bench-header", self._header_text())
        total = self.train + self.test
        bar = self.query_one("#bench-progress", ProgressBar)
        if self._shown.get("bar") != (total, p.done):
            self._shown["bar"] = (total, p.done)
            bar.update(total=max(total, 1), progress=p.done)
        bar.display = p.status == RUNNING  # the counts line alone says it once finished
        show_text(self, self._shown, "#bench-count", self._count_text())
        if p.result is not None and p.result is not self._result_shown:
            self._show_result(p.result)
        if p.kfold is not None and p.kfold is not self._result_shown:
            self._show_kfold(p.kfold)
        if p.error:
            self._show_error(p.error)

    def _header_text(self) -> Text:
        p = self.progress
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(" benchmark ", style="bold reverse")
        text.append(f" {self.dataset}", style="bold")
        text.append(f" · grader {self.grader} · calibration {self.calibration}")
        text.append("  ")
        text.append(f"[{p.status}]", style=STATUS_STYLES.get(p.status, ""))
        text.append("\n")
        if p.simulated:
            text.append(" SIMULATED ", style="bold reverse yellow")
        text.append(" judge: ", style="dim")
        text.append(one_line(p.judge_label) if p.judge_label else "(known once the run starts)")
        return text

    def _count_text(self) -> Text:
        p = self.progress
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.calibration == "kfold":
            text.append(f"graded {p.done}/{self.train}")
        else:
            text.append(f"train {p.done_train}/{self.train} · test {p.done_test}/{self.test}")
        text.append(" · unscored ")
        text.append(str(p.unscored), style="bold magenta" if p.unscored else "")
        text.append(f" · retries {p.retries}")
        return text

    def _show_result(self, result: BenchmarkResult) -> None:
        self._result_shown = result
        self.query_one("#bench-comparison", Static).update(comparison_table(result))
        self.query_one("#bench-confusion", Static).update(confusion_table(result))
        calibration = Text(end="")
        calibration.append("map fitted on train: ", style="dim")
        calibration.append(result.calibration.describe())
        calibration.append(f"\n{result.train_n} train · {result.test.n} test pairs", style="dim")
        if result.unscored_train or result.unscored_test:
            calibration.append(
                f"\nunscored, left out: {result.unscored_train} train, {result.unscored_test} test",
                style="magenta",
            )
        self.query_one("#bench-calibration", Static).update(calibration)
        self.query_one("#bench-plot", Chart).show(scatter_spec(result))
        self.query_one("#bench-results").display = True

    def _show_kfold(self, scored: KFoldScored) -> None:
        self._result_shown = scored
        r = scored.result
        best = r.best()
        self._show_kfold_table(scored)
        self.query_one("#bench-confusion-title", Static).update(
            Text(f"bracket confusion, {best.name}, held out", style="bold", end="")
        )
        self.query_one("#bench-confusion", Static).update(confusion_table(best.agreement))
        note = Text(end="")
        note.append(
            f"{r.k}-fold (seed {r.seed}) · {r.n} marked answers · scale {scored.scale}", style="dim"
        )
        note.append(f"\nbest held-out bracket accuracy: {best.name}")
        if scored.calibration_path is not None:
            note.append("\ncalibration saved: ", style="dim")
            note.append(str(scored.calibration_path))
        unscored = {g: c for g, c in r.unscored.items() if c}
        if unscored:
            note.append(
                "\nunscored, left out: " + ", ".join(f"{g} {c}" for g, c in unscored.items()),
                style="magenta",
            )
        self.query_one("#bench-calibration", Static).update(note)
        self.query_one("#bench-plot", Chart).show(scatter_spec(scored))
        self.query_one("#bench-results").display = True

    def _show_kfold_table(self, scored: KFoldScored) -> None:
        widget = self.query_one("#bench-comparison", Static)
        width = widget.content_region.width or self.size.width - 2
        widget.update(kfold_table(scored, width))

    def on_resize(self) -> None:
        if isinstance(self._result_shown, KFoldScored):
            self._show_kfold_table(self._result_shown)

    def _show_error(self, message: str) -> None:
        error = self.query_one("#bench-error", Static)
        error.update(Text(printable(message), end=""))
        error.display = bool(message)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        return [
            ("Run: benchmark again", "Grade train and test again (r)", self.action_start_run),
            ("Run: cancel", "Cancel the benchmark (x)", self.action_cancel_run),
        ]


__all__ = [
    "BenchmarkProgress",
    "BenchmarkScreen",
    "comparison_table",
    "kfold_table",
    "scatter_spec",
]
