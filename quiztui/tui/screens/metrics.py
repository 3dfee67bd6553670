"""The metrics screen (``m``): the seed's Bayes and binomial tables, the run's figures, judges.

Six tabs, each fitting 80×24: **Bayes** (P(accurate | judged accurate) against the prior X for
the seed's symmetric s = 0.9 and for this run's judge), **Binomial** (the seed's P(k = i) at a
prior X the user moves with ``+``/``-``), **Run** (badge counts, k and confidence histograms),
**Reliability** (binned confidence against observed accuracy and the ECE, when the quiz carries
its truth), **Profiles** (stored judge calibrations) and **Usage** (requests and tokens).

Everything is built from the vet screen's :class:`RunState` when the screen opens and again
every ``refresh_interval`` seconds (1 s) while that run is going; a finished run is drawn once.
The formulas are ``quiztui.core.bayes``'s; this module only arranges their values. Quiz text is
never shown here; judge names from profiles go through ``Text`` cells, never markup.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from quiztui.core.bayes import (
    CALIBRATION_BINS,
    DEFAULT_TNR,
    DEFAULT_TPR,
    expected_calibration_error,
    p_accurate_given_judged,
    p_k,
    p_true_given_judged_true,
    reliability_bins,
)
from quiztui.core.calibration import JudgeProfile
from quiztui.core.figures import UNCALIBRATED, cost_text, judge_rates_text, run_state_text
from quiztui.core.kscore import Badge, badge
from quiztui.core.quiz import Quiz
from quiztui.tui.screens.run_screen import log_worker_error
from quiztui.tui.state import RunState
from quiztui.tui.widgets.cells import BADGE_STYLES, DASH, elapsed_text, one_line
from quiztui.tui.widgets.plots import Chart, ChartSpec, Series, histogram, ticks

SEED_S = 0.9
# The seed's Bayes table: prior X → P(accurate | judged accurate) as the seed prints it.
SEED_BAYES_ROWS: tuple[tuple[float, str], ...] = (
    (0.1, "0.5"),
    (0.5, "0.9"),
    (0.8, "0.973"),
    (0.95, "0.9942"),
)
DEFAULT_X_HUNDREDTHS = 95  # the seed's X = 0.95; kept in hundredths so ±0.01 steps stay exact
MIN_OPTIONS, MAX_OPTIONS = 2, 8
CONFIDENCE_BINS = 10
TABS = ("bayes", "binomial", "run", "reliability", "profiles", "usage")
NO_PROFILES = "no profiles yet — run `quiztui calibrate`"


# -- numbers ------------------------------------------------------------------------------------


def format_probability(value: float, digits: int = 8) -> str:
    """Positional notation with at most ``digits`` significant digits, no trailing zeros.

    ``0.00000625`` stays ``0.00000625`` (not ``6.25e-06``); values under 1e-7 use exponents so a
    cell stays short.
    """
    if math.isnan(value):
        return DASH
    if value == 0:
        return "0"
    if abs(value) < 1e-7:
        return f"{value:.3e}"
    text = format(Decimal(f"{value:.{digits}g}"), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def typical_option_count(quiz: Quiz) -> int:
    counts = Counter(q.n for q in quiz.questions)
    if not counts:
        return 4
    n = max(counts, key=lambda k: (counts[k], k))
    return min(max(n, MIN_OPTIONS), MAX_OPTIONS)


@dataclass(frozen=True, slots=True)
class JudgeRates:
    tpr: float
    tnr: float
    text: str  # core/figures.judge_rates_text: the rates, their intervals and their source
    note: str  # how this run uses them, shown beside them


def judge_rates(state: RunState) -> JudgeRates:
    """The TPR/TNR this run scores with, as its RunStarted (then RunFinished) event says.

    Before any run the seed's defaults are shown: an uncalibrated run scores with exactly those.
    """
    if state.summary is not None:
        s = state.summary
        text = judge_rates_text(s.tpr, s.tnr, s.tpr_ci, s.tnr_ci, s.calibration)
        return JudgeRates(s.tpr, s.tnr, text, _note("as this run scored", s.mode))
    if state.started is not None:
        st = state.started
        text = judge_rates_text(st.tpr, st.tnr, st.tpr_ci, st.tnr_ci, st.calibration)
        return JudgeRates(st.tpr, st.tnr, text, _note("as this run scores", st.mode))
    text = judge_rates_text(DEFAULT_TPR, DEFAULT_TNR, None, None, UNCALIBRATED)
    return JudgeRates(DEFAULT_TPR, DEFAULT_TNR, text, "the default rates")


def _note(note: str, mode: str) -> str:
    return f"{note}, per-question mode" if mode == "question" else note


@dataclass(frozen=True, slots=True)
class RunFigures:
    """What the Run and Reliability tabs show, counted from the run state's records."""

    status: str
    questions: int
    badge_counts: dict[str, int]
    k_counts: dict[int, int]
    max_n: int
    confidences: tuple[float, ...]
    outcomes: tuple[bool, ...] | None  # per scored question: keyed option is true; None: no truth
    not_run: int = 0  # assertions never sent (core/figures.run_state_text)


def run_figures(state: RunState) -> RunFigures:
    counts = {str(b): 0 for b in (Badge.GOOD, Badge.QUESTIONABLE, Badge.POOR, Badge.INCOMPLETE)}
    counts[str(Badge.PENDING)] = 0
    k_counts: Counter[int] = Counter()
    confidences: list[float] = []
    outcomes: list[bool] = []
    truth = state.quiz.truth
    max_n = 0
    for record in state.questions.values():
        q = record.question
        max_n = max(max_n, q.n)
        score = record.score
        if score is None or score.badge == Badge.PENDING:  # interim scores await verdicts
            counts[str(Badge.PENDING)] += 1
            continue
        counts[str(score.badge)] = counts.get(str(score.badge), 0) + 1
        k_counts[score.k] += 1
        confidences.append(score.confidence)
        outcomes.append(truth.get(q.id, q.key) == q.key)
    return RunFigures(
        status=state.status,
        not_run=state.not_run,
        questions=len(state.questions),
        badge_counts=counts,
        k_counts=dict(k_counts),
        max_n=max_n,
        confidences=tuple(confidences),
        outcomes=tuple(outcomes) if truth else None,
    )


# -- cells ---------------------------------------------------------------------------------------


def _num(value: float, fmt: str = "{:.2f}") -> str:
    return DASH if math.isnan(value) else fmt.format(value)


def _rate_with_ci(rate: float, ci: tuple[float, float]) -> str:
    """``0.85`` over ``[0.83, 0.87]``: two lines keep the profiles table inside 120 columns."""
    if math.isnan(rate):
        return DASH
    return f"{rate:.2f}\n[{ci[0]:.2f}, {ci[1]:.2f}]"


def _two_lines(top: str, bottom: str) -> Text:
    return Text(f"{one_line(top)}\n{one_line(bottom)}", no_wrap=True, overflow="ellipsis")


def profile_cells(profile: JudgeProfile) -> list[Text]:
    """One two-line row of the profiles table; provider and model shown literally (no markup)."""
    c = profile.confusion
    simulated = profile.simulated and "simulated" not in profile.provider
    provider = profile.provider + (" (simulated)" if simulated else "")
    cost = DASH if profile.cost is None else f"${profile.cost:.4f}"
    latency = DASH if profile.latency is None else f"{profile.latency:.2f}s"
    return [
        _two_lines(provider, profile.model),
        Text(profile.mode),
        Text(str(profile.batch_size), justify="right"),
        Text(_rate_with_ci(profile.tpr, profile.tpr_ci)),
        Text(_rate_with_ci(profile.tnr, profile.tnr_ci)),
        Text(_num(c.accuracy), justify="right"),
        Text(_num(c.unjudged_rate, "{:.1%}"), justify="right"),
        Text(_num(profile.tokens_per_question, "{:.0f}"), justify="right"),
        Text(cost, justify="right"),
        Text(latency, justify="right"),
    ]


# (key, label, fixed width or None for auto)
PROFILE_COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("judge", "provider / model", 26),
    ("mode", "mode", None),
    ("batch", "batch", None),
    ("tpr", "TPR, 95% CI", None),
    ("tnr", "TNR, 95% CI", None),
    ("accuracy", "acc", None),
    ("unjudged", "unj.", None),
    ("tokens", "tok/q", None),
    ("cost", "cost", None),
    ("latency", "latency", None),
)


# -- the screen ---------------------------------------------------------------------------------


class MetricsTable(DataTable[Text]):
    """A small read-only table: no cursor highlight, sized by its rows."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(
            id=id, classes=classes, cursor_type="none", zebra_stripes=True, show_row_labels=False
        )


class MetricsScreen(Screen[None]):
    """Read-only figures about the quiz, the run and the judges. ``escape`` goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,m", "close", "Back", id="metrics.close"),
        Binding("right_square_bracket", "next_tab", "Next tab", id="metrics.next_tab"),
        Binding(
            "left_square_bracket",
            "previous_tab",
            "Previous tab",
            id="metrics.previous_tab",
            show=False,
        ),
        # Binomial tab only (check_action); the footer at 80 columns has room for X, not n.
        Binding("plus,equals_sign", "change_prior(1)", "X +0.01", id="metrics.prior_up"),
        Binding("minus", "change_prior(-1)", "X −0.01", id="metrics.prior_down"),
        Binding(
            "greater_than_sign",
            "change_options(1)",
            "One more option (n)",
            id="metrics.options_up",
            show=False,
        ),
        Binding(
            "less_than_sign",
            "change_options(-1)",
            "One option fewer (n)",
            id="metrics.options_down",
            show=False,
        ),
    ]

    def __init__(
        self,
        quiz: Quiz,
        state: Callable[[], RunState],
        profiles: Sequence[JudgeProfile] = (),
        *,
        refresh_interval: float = 1.0,
        initial_tab: str = "bayes",
    ) -> None:
        super().__init__(id="metrics")
        self.quiz = quiz
        self.get_state = state  # a callable: `r` on the vet screen replaces its RunState
        # The app's own list, not a copy: calibrations made in this session appear (newest first).
        self.profiles_source = profiles
        self._profiles_shown = -1
        self.refresh_interval = refresh_interval
        self.initial_tab = initial_tab
        self.x_hundredths = DEFAULT_X_HUNDREDTHS
        self.options = typical_option_count(quiz)
        self._signature: object = None

    @property
    def profiles(self) -> list[JudgeProfile]:
        return list(self.profiles_source)

    @property
    def prior(self) -> float:
        return self.x_hundredths / 100

    # -- composition ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with TabbedContent(id="metrics-tabs", initial=self.initial_tab):
            with TabPane("Bayes", id="bayes"):
                yield Static("", id="bayes-caption", classes="metrics-caption")
                yield MetricsTable(id="bayes-table")
                yield Chart(id="bayes-plot")
            with TabPane("Binomial", id="binomial"):
                yield Static("", id="binomial-caption", classes="metrics-caption")
                with Horizontal(classes="metrics-row"):
                    yield MetricsTable(id="binomial-table")
                    yield Chart(id="binomial-plot")
            with TabPane("Run", id="run"):
                yield Static("", id="run-caption", classes="metrics-caption")
                with Horizontal(classes="metrics-row"):
                    yield Chart(id="k-plot")
                    yield Chart(id="confidence-plot")
            with TabPane("Reliability", id="reliability"):
                yield Static("", id="reliability-caption", classes="metrics-caption")
                with Horizontal(classes="metrics-row", id="reliability-body"):
                    yield MetricsTable(id="reliability-table")
                    yield Chart(id="reliability-plot")
            with TabPane("Profiles", id="profiles"):
                yield Static("", id="profiles-caption", classes="metrics-caption")
                yield MetricsTable(id="profiles-table")
            with TabPane("Usage", id="usage"):
                yield Static("", id="usage-body")
        yield Footer()

    def on_mount(self) -> None:
        bayes = self.query_one("#bayes-table", MetricsTable)
        bayes.add_column("X", key="x")
        bayes.add_column("paper", key="seed")  # the Quizaic paper's printed table
        bayes.add_column("s = 0.9", key="symmetric")
        bayes.add_column("this judge", key="judge")
        binomial = self.query_one("#binomial-table", MetricsTable)
        binomial.add_column("k = i", key="i")
        binomial.add_column("P(k = i)", key="p")
        binomial.add_column("badge", key="badge")
        reliability = self.query_one("#reliability-table", MetricsTable)
        reliability.add_column("confidence", key="bin")
        reliability.add_column("n", key="n")
        reliability.add_column("mean", key="mean")
        reliability.add_column("accurate", key="accuracy")
        profiles = self.query_one("#profiles-table", MetricsTable)
        for key, label, width in PROFILE_COLUMNS:
            profiles.add_column(label, key=key, width=width)
        self._show_binomial()
        self.refresh_figures()
        self.set_interval(self.refresh_interval, self.refresh_figures, name="metrics-refresh")

    # -- refresh -------------------------------------------------------------------------------

    def _state_signature(self) -> object:
        state = self.get_state()
        scored = _final_scores(state)
        return (id(state), state.status, state.done, scored, state.usage, state.summary is None)

    def refresh_figures(self) -> None:
        """Rebuild what depends on the run, when the run moved since the last time.

        Called on open and by a 1 s timer; a finished run's signature stops changing, so the
        timer then costs one pass over the question records a second.
        """
        if len(self.profiles_source) != self._profiles_shown:
            self._show_profiles()
        signature = self._state_signature()
        if signature == self._signature:
            return
        self._signature = signature
        state = self.get_state()
        figures = run_figures(state)
        self._show_bayes(judge_rates(state))
        self._show_run(figures)
        self._show_reliability(figures)
        self._show_usage(state)

    # -- Bayes ---------------------------------------------------------------------------------

    def _show_bayes(self, rates: JudgeRates) -> None:
        caption = Text(end="")
        caption.append("P(accurate | judged accurate)", style="bold")
        caption.append(" against the prior X = P(assertion accurate)\n")
        caption.append("this run's judge: ")
        caption.append(rates.text, style="bold")
        caption.append(f" — {rates.note}", style="dim")
        self.query_one("#bayes-caption", Static).update(caption)

        table = self.query_one("#bayes-table", MetricsTable)
        table.clear()
        table.add_rows(
            [
                Text(f"{x:g}"),
                Text(seed, style="dim"),
                Text(format_probability(p_accurate_given_judged(SEED_S, x), 6)),
                Text(format_probability(p_true_given_judged_true(rates.tpr, rates.tnr, x), 6)),
            ]
            for x, seed in SEED_BAYES_ROWS
        )

        xs = tuple(i / 100 for i in range(101))
        row_xs = tuple(x for x, _ in SEED_BAYES_ROWS)
        seed_judge = math.isclose(rates.tpr, SEED_S) and math.isclose(rates.tnr, SEED_S)
        curves = [
            Series(
                xs,
                tuple(p_accurate_given_judged(SEED_S, x) for x in xs),
                label=f"s = 0.9 (paper){' = this judge' if seed_judge else ''}, o = the paper's rows",
                marker="braille",
            )
        ]
        if not seed_judge:  # a second, identical curve would only hide the first
            curves.append(
                Series(
                    xs,
                    tuple(_finite(p_true_given_judged_true(rates.tpr, rates.tnr, x)) for x in xs),
                    label="this judge",
                    marker="dot",
                )
            )
        seed_rows = Series(
            row_xs,
            tuple(p_accurate_given_judged(SEED_S, x) for x in row_xs),
            kind="scatter",
            marker="o",
        )
        self.query_one("#bayes-plot", Chart).show(
            ChartSpec(
                xlabel="prior X",
                series=(*curves, seed_rows),
                xlim=(0.0, 1.0),
                ylim=(0.0, 1.2),  # headroom above 1: the legend sits there, not on the curve
                xticks=ticks((0, 0.1, 0.5, 0.8, 0.95)),
                yticks=ticks((0, 0.5, 0.9, 1)),
            )
        )

    # -- binomial --------------------------------------------------------------------------------

    def _show_binomial(self) -> None:
        x, n = self.prior, self.options
        caption = Text(end="", no_wrap=True, overflow="ellipsis")
        caption.append("P(k = i)", style="bold")
        caption.append(" = C(n, i)·X^i·(1−X)^(n−i)   ")
        caption.append(f"X = {x:.2f}  n = {n}", style="bold")
        caption.append("   +/- X by 0.01 · </> n", style="dim")
        self.query_one("#binomial-caption", Static).update(caption)

        values = [p_k(i, n, x) for i in range(n + 1)]
        table = self.query_one("#binomial-table", MetricsTable)
        table.clear()
        rows = []
        for i, p in enumerate(values):
            b = badge(n, i)
            rows.append(
                [
                    Text(str(i), justify="right"),
                    Text(format_probability(p), justify="right"),
                    Text(str(b), style=BADGE_STYLES.get(b, "")),
                ]
            )
        table.add_rows(rows)
        self.query_one("#binomial-plot", Chart).show(
            ChartSpec(
                title=f"P(k = i), X = {x:.2f}, n = {n}",
                xlabel="k = i",
                series=(Series(tuple(str(i) for i in range(n + 1)), tuple(values), kind="bar"),),
                ylim=(0.0, 1.0),
                yticks=ticks((0, 0.25, 0.5, 0.75, 1)),
                bar_width=0.6,
            )
        )

    def action_change_prior(self, step: int) -> None:
        self.x_hundredths = min(100, max(0, self.x_hundredths + step))
        self._show_binomial()

    def action_change_options(self, step: int) -> None:
        self.options = min(MAX_OPTIONS, max(MIN_OPTIONS, self.options + step))
        self._show_binomial()

    # -- run -------------------------------------------------------------------------------------

    def _show_run(self, figures: RunFigures) -> None:
        scored = len(figures.confidences)
        caption = Text(end="", no_wrap=True, overflow="ellipsis")
        caption.append(f"Run {run_state_text(figures.status, figures.not_run)}", style="bold")
        caption.append(f" · {scored}/{figures.questions} questions scored\n")
        for i, (name, count) in enumerate(figures.badge_counts.items()):
            if i:
                caption.append(" · ")
            caption.append(name, style=BADGE_STYLES.get(name, ""))
            caption.append(f" {count}")
        self.query_one("#run-caption", Static).update(caption)

        max_n = max(figures.max_n, 1)
        k_counts = [figures.k_counts.get(k, 0) for k in range(max_n + 1)]
        self.query_one("#k-plot", Chart).show(
            histogram(
                "questions by k",
                "k = verdicts agreeing with the key",
                k_counts,
                [str(k) for k in range(max_n + 1)],
            )
        )
        bins = [0] * CONFIDENCE_BINS
        for c in figures.confidences:
            bins[min(int(c * CONFIDENCE_BINS), CONFIDENCE_BINS - 1)] += 1
        self.query_one("#confidence-plot", Chart).show(
            histogram(
                "questions by confidence",
                "confidence (bins of 0.1)",
                bins,
                [f".{i}" for i in range(CONFIDENCE_BINS)],
            )
        )

    # -- reliability -------------------------------------------------------------------------------

    def _show_reliability(self, figures: RunFigures) -> None:
        caption = self.query_one("#reliability-caption", Static)
        body = self.query_one("#reliability-body", Horizontal)
        if figures.outcomes is None:
            caption.update(
                Text(
                    "No truth is known for this quiz, so confidence cannot be checked against "
                    "accuracy. Put a <quiz>.truth.json beside the quiz (simulated sample quizzes "
                    "have one) to see the reliability diagram.",
                    end="",
                )
            )
            body.display = False
            return
        body.display = True
        if not figures.confidences:
            caption.update(Text("No question scored yet.", end=""))
        else:
            ece = expected_calibration_error(
                figures.confidences, figures.outcomes, CALIBRATION_BINS
            )
            accurate = sum(figures.outcomes)
            text = Text(end="", no_wrap=True, overflow="ellipsis")
            text.append(f"ECE {ece:.3f}", style="bold")
            text.append(
                f" over {len(figures.confidences)} scored questions"
                f" ({accurate} accurate by the truth table)"
            )
            caption.update(text)
        bins = reliability_bins(figures.confidences, figures.outcomes)
        table = self.query_one("#reliability-table", MetricsTable)
        table.clear()
        table.add_rows(
            [
                Text(f"{b.lo:.1f}–{b.hi:.1f}"),
                Text(str(b.count), justify="right"),
                Text(f"{b.mean_confidence:.2f}", justify="right"),
                Text(f"{b.accuracy:.2f}", justify="right"),
            ]
            for b in bins
        )
        self.query_one("#reliability-plot", Chart).show(
            ChartSpec(
                title="fraction accurate by confidence bin",
                xlabel="mean confidence",
                series=(
                    Series((0.0, 1.0), (0.0, 1.0), label="calibrated", marker="dot"),
                    Series(
                        tuple(b.mean_confidence for b in bins),
                        tuple(b.accuracy for b in bins),
                        kind="scatter",
                        marker="o",
                        label="bins",
                    ),
                ),
                xlim=(0.0, 1.0),
                ylim=(0.0, 1.0),
                xticks=ticks((0, 0.25, 0.5, 0.75, 1)),
                yticks=ticks((0, 0.5, 1)),
            )
        )

    # -- profiles and usage ----------------------------------------------------------------------

    def _show_profiles(self) -> None:
        caption = self.query_one("#profiles-caption", Static)
        table = self.query_one("#profiles-table", MetricsTable)
        table.clear()
        self._profiles_shown = len(self.profiles_source)
        if not self.profiles:
            caption.update(Text(NO_PROFILES, end=""))
            table.display = False
            return
        caption.update(Text("reading profiles…", end=""))
        self._profile_rows(self.profiles)

    @work(thread=True, exclusive=True, group="metrics-profiles", exit_on_error=False)
    def _profile_rows(self, profiles: list[JudgeProfile]) -> None:
        """Intervals off the UI thread: a Beta interval imports scipy.stats (~1.3 s once)."""
        rows = [profile_cells(p) for p in profiles]
        self.app.call_from_thread(self._fill_profiles, rows)

    def _fill_profiles(self, rows: list[list[Text]]) -> None:
        self.query_one("#profiles-caption", Static).update(
            Text(
                f"{len(rows)} judge profile(s) · TPR = P(says true | true)"
                " · TNR = P(says false | false)",
                end="",
                no_wrap=True,
                overflow="ellipsis",
            )
        )
        table = self.query_one("#profiles-table", MetricsTable)
        table.display = True
        table.clear()  # a slower, superseded reader may have filled it already
        for row in rows:
            table.add_row(*row, height=2)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            log_worker_error(self, event.worker)
        if event.worker.group == "metrics-profiles" and event.state == WorkerState.ERROR:
            self.query_one("#profiles-caption", Static).update(
                Text(f"profiles could not be shown: {event.worker.error}", end="")
            )

    def _show_usage(self, state: RunState) -> None:
        usage = state.usage
        text = Text(end="")
        text.append("Usage", style="bold")
        text.append(f"  run {state.status} · elapsed {elapsed_text(state.elapsed)}\n\n")
        if usage is None:
            text.append("no usage reported yet", style="dim")
        else:
            scored = _final_scores(state)
            tokens = usage.tokens_in + usage.tokens_out
            rows = [
                ("requests", f"{usage.requests:,}   retries {usage.retries:,}"),
                (
                    "tokens",
                    f"in {usage.tokens_in:,} · out {usage.tokens_out:,} · total {tokens:,}",
                ),
                ("tokens/question", f"{tokens / scored:,.0f}" if scored else DASH),
                (
                    "assertions",
                    f"judged {usage.judged:,} · unjudged {usage.unjudged:,}"
                    f" · cached {usage.cached:,} · total {usage.total:,}",
                ),
            ]
            for label, value in rows:
                text.append(f"{label:<16}", style="bold")
                text.append(f"{value}\n")
        text.append(f"{'cost':<16}", style="bold")
        simulated = state.started.simulated if state.started is not None else False
        if state.summary is not None:
            text.append(cost_text(state.summary.cost, state.summary.simulated))
        elif usage is not None or simulated:
            text.append(cost_text(usage.cost if usage is not None else None, simulated))
        else:
            text.append("—", style="dim")
        if state.last_error:
            text.append(f"\n{'last error':<16}", style="bold")
            text.append(one_line(state.last_error))
        self.query_one("#usage-body", Static).update(text)

    # -- navigation ------------------------------------------------------------------------------

    @property
    def active_tab(self) -> str:
        return self.query_one("#metrics-tabs", TabbedContent).active

    def show_tab(self, tab: str) -> None:
        self.query_one("#metrics-tabs", TabbedContent).active = tab

    def action_next_tab(self) -> None:
        self.show_tab(TABS[(TABS.index(self.active_tab) + 1) % len(TABS)])

    def action_previous_tab(self) -> None:
        self.show_tab(TABS[(TABS.index(self.active_tab) - 1) % len(TABS)])

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("change_prior", "change_options"):
            return self.active_tab == "binomial"  # False hides the keys on other tabs
        return True

    def action_close(self) -> None:
        self.dismiss(None)


def _final_scores(state: RunState) -> int:
    """Questions whose score is final (every option judged or given up on)."""
    return sum(
        1
        for r in state.questions.values()
        if r.score is not None and r.score.badge != Badge.PENDING
    )


def _finite(value: float) -> float:
    return 0.0 if math.isnan(value) else value
