"""The Calibrate screen (``c``): run the configured judge on a gold set, show its profile.

A form (gold set, sample size and seed, mode, batch size, "compare five set-ups") builds a
:class:`CalibrationRequest`; ``start_calibration(request)`` (``assemble.calibrate.calibration_starter``)
yields ``SetupStarted``, the vet events of each set-up and ``ProfileMeasured``. The worker only
records those events in :class:`CalibrationProgress`; a timer (at most 10 Hz) moves them to the
widgets, so a calibration of thousands of assertions costs a few redraws a second. Each measured
profile becomes a results row and is posted up (:class:`JudgeProfileStored`) for the metrics
screen; the store already holds it. File names, judge labels and errors are shown as ``Text``,
never parsed as markup.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Footer,
    Input,
    Label,
    ProgressBar,
    Select,
    Static,
)

from quiztui.core.calibration import JudgeProfile
from quiztui.pipeline.calibrate import (
    MODE_SETUPS,
    CalibrationRequest,
    ProfileMeasured,
    SetupStarted,
    default_gold_path,
)
from quiztui.pipeline.events import RunFinished, RunStarted, UsageUpdated
from quiztui.report.text import cheapest_note
from quiztui.tui.messages import JudgeProfileStored
from quiztui.tui.screens.confirm import ConfirmQuitScreen
from quiztui.tui.screens.run_screen import LiveRunScreen
from quiztui.tui.state import FAILED, FINISHED, IDLE, RUNNING
from quiztui.tui.widgets.cells import DASH, elapsed_text, one_line, printable
from quiztui.tui.widgets.statics import show_text

MODES = ("assertion", "question")
DEFAULT_N = 250
MAX_BATCH_SIZE = 500  # config.vet.batch_size's bound
MIN_FLUSH_INTERVAL = 0.1  # progress redraws at most 10 times a second
UNAVAILABLE = (
    "Calibration is unavailable here: this app was started without a calibration runner."
    " Run `quiztui calibrate GOLD` in a shell instead."
)

StartCalibration = Callable[[CalibrationRequest], AsyncIterator[Any]]


def setup_name(mode: str, batch_size: int) -> str:
    return "per-question" if mode == "question" else f"batch {batch_size}"


def shown_path(path: Path) -> str:
    """Relative to the working directory when the file is below it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# -- what the worker records -------------------------------------------------------------------


@dataclass
class CalibrationProgress:
    """The events of one calibration as they arrived; the flush timer turns them into widgets."""

    status: str = IDLE
    setup: SetupStarted | None = None
    started: RunStarted | None = None
    usage: UsageUpdated | None = None
    measured: list[JudgeProfile] = field(default_factory=list)
    pending: list[JudgeProfile] = field(default_factory=list)  # not in the results table yet
    run_error: str | None = None  # a set-up whose run failed (the calibration goes on)
    error: str | None = None  # the calibration stopped
    started_at: float | None = None
    ended_at: float | None = None

    def apply(self, event: object) -> None:
        if isinstance(event, SetupStarted):
            self.setup, self.started, self.usage = event, None, None
        elif isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, UsageUpdated):
            self.usage = event
        elif isinstance(event, RunFinished):
            summary = event.summary
            if summary.status == FAILED:
                self.run_error = f"{summary.judge_label}: {summary.error or 'the run failed'}"
        elif isinstance(event, ProfileMeasured):
            self.measured.append(event.profile)
            self.pending.append(event.profile)

    def elapsed(self, now: float) -> float:
        if self.started_at is None:
            return 0.0
        end = self.ended_at if self.ended_at is not None else now
        return max(0.0, end - self.started_at)


# -- cells -------------------------------------------------------------------------------------


def _rate(rate: float, ci: tuple[float, float]) -> Text:
    """The rate over its 95 % interval (two lines keep the table inside 100 columns)."""
    if rate != rate:  # NaN: no gold assertion of this kind was judged
        return Text(DASH)
    return Text(f"{rate:.3f}\n[{ci[0]:.2f}, {ci[1]:.2f}]", no_wrap=True)


def _num(value: float | None, fmt: str) -> str:
    return DASH if value is None or value != value else format(value, fmt)


def _right(value: str) -> Text:
    return Text(value, justify="right")


def result_cells(profile: JudgeProfile) -> list[Text]:
    c = profile.confusion
    return [
        Text(setup_name(profile.mode, profile.batch_size)),
        _rate(profile.tpr, profile.tpr_ci),
        _rate(profile.tnr, profile.tnr_ci),
        _right(_num(c.accuracy, ".3f")),
        _right(f"{c.tp}/{c.fn}/{c.tn}/{c.fp}"),
        _right(f"{c.unjudged_rate:.1%}"),
        _right(_num(profile.tokens_per_question, ".0f")),
        _right(f"{profile.wall_time:.1f}"),
        _right(_num(profile.latency, ".2f")),
        _right(DASH if profile.cost is None else f"${profile.cost:.4f}"),
    ]


RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("setup", "set-up"),
    ("tpr", "TPR 95% CI"),
    ("tnr", "TNR 95% CI"),
    ("accuracy", "acc"),
    ("counts", "TP/FN/TN/FP"),
    ("unjudged", "unj."),
    ("tokens", "tok/q"),
    ("wall", "wall s"),
    ("latency", "lat. s"),
    ("cost", "cost"),
)


# -- the screen ---------------------------------------------------------------------------------


class MarkedCheckbox(Checkbox):
    """Shows its state as a character (X or blank), not by colour alone (NO_COLOR terminals)."""

    BUTTON_INNER = " "

    def watch_value(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "
        super().watch_value()


class CalibrateScreen(LiveRunScreen):
    """Measures the judge on a gold set. ``escape`` goes back (and asks before cancelling)."""

    RUN_GROUP = "calibrate"
    FLUSH_TIMER = "calibrate-flush"
    FAILED_TITLE = None  # the error line under the results says why

    DEFAULT_CSS = """
    CalibrateScreen { layout: vertical; }
    CalibrateScreen #cal-title { height: 1; background: $boost; padding: 0 1; }
    CalibrateScreen .cal-row { height: 1; margin: 0 1; }
    CalibrateScreen .cal-label { width: auto; padding: 0 1 0 0; color: $text-muted; }
    CalibrateScreen .cal-gap { margin-left: 2; }
    CalibrateScreen #cal-gold { width: 1fr; }
    CalibrateScreen #cal-n { width: 8; }
    CalibrateScreen #cal-seed { width: 8; }
    CalibrateScreen #cal-batch { width: 6; }
    CalibrateScreen #cal-mode { width: 16; }
    CalibrateScreen #cal-compare { width: 1fr; }
    CalibrateScreen #cal-start { width: auto; min-width: 12; }
    CalibrateScreen #cal-match { height: auto; margin: 1 1 0 1; color: $text-muted; }
    CalibrateScreen #cal-setup { height: 1; margin: 1 1 0 1; }
    CalibrateScreen #cal-progress-row { height: 1; margin: 0 1; }
    CalibrateScreen #cal-progress { width: auto; }
    CalibrateScreen #cal-count { width: 1fr; padding: 0 2; }
    CalibrateScreen #cal-usage { height: 1; margin: 0 1; }
    CalibrateScreen #cal-results { height: 1fr; min-height: 4; margin: 1 1 0 1; }
    CalibrateScreen #cal-note { height: auto; margin: 0 1; }
    CalibrateScreen #cal-error { height: auto; margin: 0 1; color: $error; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+r",
            "start_calibration",
            "Start",
            id="calibrate.start",
            priority=True,
            tooltip="Start calibrating with the form's settings",
        ),
        Binding(
            "escape",
            "close",
            "Back",
            id="calibrate.close",
            tooltip="Back to the vet screen; asks before cancelling a running calibration",
        ),
    ]

    def __init__(
        self,
        start: StartCalibration | None,
        *,
        default_batch_size: int = 20,
        default_mode: str = "assertion",
        clock: Callable[[], float],
        flush_interval: float = MIN_FLUSH_INTERVAL,
    ) -> None:
        super().__init__(id="calibrate", flush_interval=max(flush_interval, MIN_FLUSH_INTERVAL))
        self.start = start
        self.default_batch_size = default_batch_size
        self.default_mode = default_mode if default_mode in MODES else "assertion"
        self.clock = clock
        self.progress = CalibrationProgress()
        self._shown: dict[str, object] = {}

    @property
    def run_status(self) -> str:
        return self.progress.status

    # -- composition ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        title = Text(end="", no_wrap=True, overflow="ellipsis")
        title.append("Calibrate the judge", style="bold")
        title.append("  measure its TPR/TNR on a gold set with known answers", style="dim")
        yield Static(title, id="cal-title")
        with Horizontal(classes="cal-row"):
            yield Label("gold set", classes="cal-label")
            yield Input(
                shown_path(default_gold_path()),
                placeholder="a quiz with trusted keys, or a labelled statement set (.jsonl)",
                id="cal-gold",
                compact=True,
            )
        with Horizontal(classes="cal-row"):
            yield Label("questions", classes="cal-label")
            yield Input(str(DEFAULT_N), placeholder="all", type="integer", id="cal-n", compact=True)
            yield Label("sample seed", classes="cal-label cal-gap")
            yield Input("0", type="integer", id="cal-seed", compact=True)
            yield Label("mode", classes="cal-label cal-gap")
            yield Select(
                [(m, m) for m in MODES],
                value=self.default_mode,
                allow_blank=False,
                id="cal-mode",
                compact=True,
            )
            yield Label("batch size", classes="cal-label cal-gap")
            yield Input(str(self.default_batch_size), type="integer", id="cal-batch", compact=True)
        with Horizontal(classes="cal-row"):
            sizes = ", ".join(str(b) for m, b in MODE_SETUPS if m == "assertion")
            yield MarkedCheckbox(
                f"compare five set-ups: batch size {sizes} and per-question",
                id="cal-compare",
                compact=True,
            )
            yield Button("Start (^r)", id="cal-start", variant="primary", compact=True)
        yield Static(self._match_text(), id="cal-match")
        yield Static("", id="cal-setup")
        with Horizontal(id="cal-progress-row"):
            yield ProgressBar(total=1, show_eta=False, show_percentage=True, id="cal-progress")
            yield Static("", id="cal-count")
        yield Static("", id="cal-usage")
        yield DataTable(
            id="cal-results", cursor_type="none", zebra_stripes=True, show_row_labels=False
        )
        yield Static("", id="cal-note")
        yield Static("", id="cal-error")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#cal-results", DataTable)
        for key, label in RESULT_COLUMNS:
            table.add_column(label, key=key)
        table.display = False
        self._sync_form()
        if self.start is None:
            self._show_error(UNAVAILABLE)
            self.query_one("#cal-start", Button).disabled = True
        self.query_one("#cal-start", Button).focus()
        self.start_flush_timer()
        self.flush()

    def _match_text(self) -> Text:
        setup = f"{self.default_mode} mode"
        if self.default_mode == "assertion":
            setup += f", batch size {self.default_batch_size}"
        return Text(
            "The next vet run (r) scores with the newest profile of its own set-up (same judge"
            f" and prompt, {setup}); other set-ups are stored for comparison.",
            end="",
        )

    # -- the form ------------------------------------------------------------------------------

    @on(Select.Changed, "#cal-mode")
    @on(Checkbox.Changed, "#cal-compare")
    def _sync_form(self) -> None:
        """Batch size means nothing per question; a comparison ignores mode and batch size."""
        compare = self.query_one("#cal-compare", Checkbox).value
        mode = self.query_one("#cal-mode", Select).value
        self.query_one("#cal-mode", Select).disabled = compare or self.running
        self.query_one("#cal-batch", Input).disabled = compare or mode == "question" or self.running

    def _set_form_enabled(self, enabled: bool) -> None:
        for selector in ("#cal-gold", "#cal-n", "#cal-seed", "#cal-compare", "#cal-start"):
            self.query_one(selector).disabled = not enabled or (
                selector == "#cal-start" and self.start is None
            )
        self._sync_form()

    def request(self) -> CalibrationRequest:
        """The form as a request; ValueError names the field that is wrong."""
        gold = self.query_one("#cal-gold", Input).value.strip()
        n = _int_field(self.query_one("#cal-n", Input).value, "questions", minimum=1, empty=None)
        seed = _int_field(self.query_one("#cal-seed", Input).value, "sample seed", empty=0)
        mode = str(self.query_one("#cal-mode", Select).value)
        batch_size = 1
        if mode == "assertion":
            batch_size = (
                _int_field(
                    self.query_one("#cal-batch", Input).value,
                    "batch size",
                    minimum=1,
                    maximum=MAX_BATCH_SIZE,
                    empty=None,
                )
                or self.default_batch_size
            )
        return CalibrationRequest(
            gold_path=Path(gold).expanduser() if gold else None,
            n=n,
            sample_seed=seed or 0,
            mode=mode,
            batch_size=batch_size,
            compare_modes=self.query_one("#cal-compare", Checkbox).value,
        )

    @on(Input.Submitted)
    @on(Button.Pressed, "#cal-start")
    def _start_from_form(self) -> None:
        self.action_start_calibration()

    # -- run lifecycle ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_calibration":
            return None if (self.running or self.start is None) else True
        return super().check_action(action, parameters)

    def action_start_calibration(self) -> None:
        if self.running:
            return
        if self.start is None:
            self._show_error(UNAVAILABLE)
            return
        try:
            request = self.request()
        except ValueError as exc:
            self._show_error(str(exc))
            return
        self.progress = CalibrationProgress(status=RUNNING, started_at=self.clock())
        self._shown.clear()
        table = self.query_one("#cal-results", DataTable)
        table.clear()
        table.display = False
        self._show_error("")
        self._set_form_enabled(False)
        self.refresh_bindings()
        start = self.start
        self.start_run_worker(lambda: start(request), self._record)
        self.flush()

    def _record(self, event: object) -> None:
        self.progress.apply(event)
        if isinstance(event, ProfileMeasured):
            self.post_message(JudgeProfileStored(event.profile))

    def end_run(self, status: str, error: str | None = None) -> None:
        if error is not None:
            self.progress.error = error
        self.progress.status = status
        self.progress.ended_at = self.clock()
        self._set_form_enabled(True)
        self.refresh_bindings()
        self.flush()

    def action_close(self) -> None:
        """Back to the vet screen; a running calibration is cancelled, after asking."""
        if not self.running:
            self.dismiss(None)
            return

        def answered(cancel: bool | None) -> None:
            if cancel:
                self.cancel_run()

        self.app.push_screen(
            ConfirmQuitScreen(
                "A calibration is running. Cancel it? Profiles already measured stay stored.",
                yes="Cancel it",
                no="Keep going",
            ),
            callback=answered,
        )

    # -- buffered flush ---------------------------------------------------------------------------

    def flush(self) -> None:
        """Move what the worker recorded to the widgets; unchanged lines are not redrawn."""
        p = self.progress
        if p.pending:
            table = self.query_one("#cal-results", DataTable)
            for profile in p.pending:
                table.add_row(*result_cells(profile), height=2)
            p.pending.clear()
            table.display = True
        show_text(self, self._shown, "#cal-setup", self._setup_text())
        total, done, count = self._counts()
        bar = self.query_one("#cal-progress", ProgressBar)
        if self._shown.get("bar") != (total, done):
            self._shown["bar"] = (total, done)
            bar.update(total=max(total, 1), progress=done)
        show_text(
            self, self._shown, "#cal-count", Text(count, no_wrap=True, overflow="ellipsis", end="")
        )
        show_text(self, self._shown, "#cal-usage", self._usage_text())
        show_text(self, self._shown, "#cal-note", self._note_text())
        if p.error is not None or p.run_error is not None:
            self._show_error(p.error or p.run_error or "")

    def _setup_text(self) -> Text:
        p = self.progress
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if p.status == IDLE:
            text.append("Set the form and press ^r (or enter) to start.", style="dim")
            return text
        text.append(p.status, style="bold")
        setup = p.setup
        if setup is None:
            text.append(" · reading the gold set…")
            return text
        if setup.count > 1:
            text.append(f" · set-up {setup.index + 1}/{setup.count}")
        text.append(f" · {setup.mode} mode")
        if setup.mode == "assertion":
            text.append(f", batch size {setup.batch_size}")
        text.append(" · ")
        text.append(one_line(setup.gold))
        text.append(" · ")
        text.append(one_line(setup.judge_label), style="dim")
        return text

    def _counts(self) -> tuple[int, int, str]:
        p = self.progress
        total = p.started.assertions if p.started is not None else 0
        judged = unjudged = 0
        if p.usage is not None:
            total, judged, unjudged = p.usage.total, p.usage.judged, p.usage.unjudged
        return (
            total,
            judged + unjudged,
            f"judged {judged:,} · unjudged {unjudged:,} · total {total:,}",
        )

    def _usage_text(self) -> Text:
        u = self.progress.usage
        parts = [
            f"requests {u.requests if u else 0:,}",
            f"retries {u.retries if u else 0:,}",
            f"tokens {u.tokens_in if u else 0:,} in / {u.tokens_out if u else 0:,} out",
            f"elapsed {elapsed_text(self.progress.elapsed(self.clock()))}",
        ]
        return Text(" · ".join(parts), no_wrap=True, overflow="ellipsis", end="", style="dim")

    def _note_text(self) -> Text:
        p = self.progress
        text = Text(end="")
        if p.status in (IDLE, RUNNING) or not p.measured:
            return text
        if p.status == FINISHED and len(p.measured) > 1:
            text.append(printable(cheapest_note(p.measured)), style="bold")
            text.append("\n")
        ids = ", ".join(f"#{m.id}" for m in p.measured if m.id is not None)
        text.append(f"Stored as profile{'s' if len(p.measured) > 1 else ''} {ids}. ")
        matching = [m for m in p.measured if self._matches_vet(m)]
        if matching:
            text.append(f"The next vet run (r) scores with profile #{matching[-1].id}.")
        else:
            text.append(
                "None matches the vet's set-up, so the next vet run (r) keeps its calibration."
            )
        return text

    def _matches_vet(self, profile: JudgeProfile) -> bool:
        """Same mode (and batch size in assertion mode) as the vet runs; judge and prompt are
        the config's on both sides."""
        if profile.mode != self.default_mode:
            return False
        return profile.mode == "question" or profile.batch_size == self.default_batch_size

    def _show_error(self, message: str) -> None:
        error = self.query_one("#cal-error", Static)
        error.update(Text(printable(message), end=""))
        error.display = bool(message)


def _int_field(
    raw: str,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    empty: int | None,
) -> int | None:
    raw = raw.strip()
    if not raw:
        return empty
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name}: {raw!r} is not a whole number") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}: must be at most {maximum}")
    return value


__all__ = ["CalibrateScreen", "CalibrationProgress", "result_cells"]
