"""The metrics screen (``m``): the seed's Bayes and binomial tables as rendered, the run's
figures, reliability against the truth table, judge profiles, usage, refresh and navigation."""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from tui_helpers import (
    Gate,
    constant_clock,
    make_quiz,
    stream_factory,
    synthetic_events,
    wait_until,
)

from quiztui.core.bayes import (
    expected_calibration_error,
    p_accurate_given_judged,
    p_true_given_judged_true,
)
from quiztui.core.calibration import Confusion, JudgeProfile
from quiztui.core.kscore import Badge
from quiztui.core.quiz import Quiz
from quiztui.pipeline.events import QuestionScored, RunStarted, VetEvent
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.commands import QuiztuiCommands
from quiztui.tui.help import collect_sections
from quiztui.tui.screens.metrics import (
    NO_PROFILES,
    MetricsScreen,
    format_probability,
)
from quiztui.tui.screens.vet import VetScreen
from quiztui.tui.services import AppServices
from quiztui.tui.widgets.plots import Chart

SIZES = [(80, 24), (120, 40)]
SEED_BINOMIAL_095 = ["0.00000625", "0.000475", "0.0135375", "0.171475", "0.81450625"]


def make_app(
    quiz: Quiz | None = None,
    *,
    profiles: list[JudgeProfile] | None = None,
    **stream: object,
) -> QuiztuiApp:
    quiz = quiz or make_quiz()
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz, **stream),
            judge_label="SIMULATED judge",
            simulated=True,
            profiles=profiles or [],
        ),
        clock=constant_clock(),
        flush_interval=0.02,
    )


async def open_metrics(pilot: Pilot[None], *, wait_for_run: bool = True) -> MetricsScreen:
    if wait_for_run:
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("m")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, MetricsScreen)
    return screen


def plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def table_rows(screen: MetricsScreen, table_id: str) -> list[list[str]]:
    table = screen.query_one(table_id, DataTable)
    return [[plain(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def rendered(screen: MetricsScreen, widget_id: str) -> str:
    """The text the widget paints on screen, line by line."""
    widget = screen.query_one(widget_id)
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def static_text(screen: MetricsScreen, widget_id: str) -> str:
    return plain(screen.query_one(widget_id, Static).content)


async def show(pilot: Pilot[None], screen: MetricsScreen, tab: str) -> None:
    """Switch tabs directly (the keys are tested once, in the navigation test)."""
    screen.show_tab(tab)
    await pilot.pause()
    assert screen.active_tab == tab


def test_app_start_does_not_import_plotext() -> None:
    """The metrics screen (and plotext) load when first opened, not at start-up."""
    code = "import sys, quiztui.tui.app; print(sorted(m for m in sys.modules if 'plotext' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- numbers -------------------------------------------------------------------------------------


def test_format_probability_keeps_the_seeds_digits() -> None:
    assert [format_probability(v) for v in (6.25e-06, 0.000475, 0.0135375)] == [
        "0.00000625",
        "0.000475",
        "0.0135375",
    ]
    assert format_probability(0.171475 + 1e-17) == "0.171475"
    assert format_probability(0.99**4) == "0.96059601"
    assert format_probability(1.0) == "1"
    assert format_probability(0.0) == "0"
    assert format_probability(1e-12) == "1.000e-12"
    assert format_probability(math.nan) == "–"


def test_asymmetric_formula_reduces_to_the_seed_when_symmetric() -> None:
    for x in (0.1, 0.5, 0.8, 0.95):
        assert p_true_given_judged_true(0.9, 0.9, x) == pytest.approx(
            p_accurate_given_judged(0.9, x)
        )
    # TPR 0.8, TNR 0.97 at X = 0.5: 0.4 / (0.4 + 0.015)
    assert p_true_given_judged_true(0.8, 0.97, 0.5) == pytest.approx(0.4 / 0.415)
    assert math.isnan(p_true_given_judged_true(0.0, 1.0, 0.5))  # a judge that never says true


# -- B5: the seed's tables as the screen renders them ---------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_bayes_table_shows_the_seeds_values(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = await open_metrics(pilot)
        assert screen.active_tab == "bayes"
        rows = table_rows(screen, "#bayes-table")
        by_x = {float(r[0]): float(r[2]) for r in rows}  # column "s = 0.9"
        assert list(by_x) == [0.1, 0.5, 0.8, 0.95]
        assert by_x[0.1] == 0.5
        assert by_x[0.5] == 0.9
        assert round(by_x[0.8], 3) == 0.973  # the seed prints 0.973 for 0.97297…
        assert round(by_x[0.95], 4) == 0.9942
        # The uncalibrated run scores with TPR = TNR = 0.9: its column equals the seed's.
        assert [r[3] for r in rows] == [r[2] for r in rows]
        # What is painted, not just stored: every row is on screen at this size.
        table = screen.query_one("#bayes-table", DataTable)
        assert table.size.height >= 5
        painted = rendered(screen, "#bayes-table")
        for value in ("0.5", "0.9", "0.972973", "0.994186", "0.9942"):
            assert value in painted
        plot = screen.query_one("#bayes-plot", Chart)
        assert plot.size.height >= 8 and plot.region.bottom <= size[1] - 1  # above the footer
        assert "prior X" in rendered(screen, "#bayes-plot")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_binomial_table_shows_the_seeds_values_and_follows_x(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = await open_metrics(pilot)
        await show(pilot, screen, "binomial")
        rows = table_rows(screen, "#binomial-table")
        assert [r[0] for r in rows] == ["0", "1", "2", "3", "4"]
        assert [r[1] for r in rows] == SEED_BINOMIAL_095
        assert [r[2] for r in rows] == ["poor", "poor", "poor", "questionable", "good"]
        painted = rendered(screen, "#binomial-table")
        for value in SEED_BINOMIAL_095:
            assert value in painted
        assert "X = 0.95" in static_text(screen, "#binomial-caption")

        for _ in range(4):
            await pilot.press("plus")
        await pilot.pause()
        assert "X = 0.99" in static_text(screen, "#binomial-caption")
        assert table_rows(screen, "#binomial-table")[4][1] == "0.96059601"
        assert "0.96059601" in rendered(screen, "#binomial-table")
        plot = screen.query_one("#binomial-plot", Chart)
        assert plot.spec is not None and plot.spec.series[0].y[4] == pytest.approx(0.99**4)

        for _ in range(4):
            await pilot.press("minus")
        await pilot.pause()
        assert [r[1] for r in table_rows(screen, "#binomial-table")] == SEED_BINOMIAL_095

        await pilot.press("greater_than_sign")  # n = 5 options
        await pilot.pause()
        rows = table_rows(screen, "#binomial-table")
        assert len(rows) == 6 and rows[5][1] == format_probability(0.95**5)


async def test_prior_keys_only_act_on_the_binomial_tab() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot)
        await pilot.press("plus", "plus")
        await pilot.pause()
        assert screen.x_hundredths == 95
        await show(pilot, screen, "binomial")
        await pilot.press("plus")
        assert screen.x_hundredths == 96
        for _ in range(10):
            await pilot.press("plus")
        assert screen.x_hundredths == 100  # clamped at X = 1
        assert table_rows(screen, "#binomial-table")[4][1] == "1"


async def test_judge_column_uses_the_runs_asymmetric_rates() -> None:
    app = make_app(tpr=0.8, tnr=0.97)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_metrics(pilot)
        caption = static_text(screen, "#bayes-caption")
        assert "TPR 0.80" in caption and "TNR 0.97" in caption
        rows = table_rows(screen, "#bayes-table")
        judge = {float(r[0]): float(r[3]) for r in rows}
        for x, value in judge.items():
            assert value == pytest.approx(0.8 * x / (0.8 * x + 0.03 * (1 - x)), abs=1e-6)
        plot = screen.query_one("#bayes-plot", Chart)
        assert plot.spec is not None
        labels = [s.label for s in plot.spec.series]
        assert labels == ["s = 0.9 (paper), o = the paper's rows", "this judge", None]


async def test_judge_rates_come_from_run_started_while_the_run_goes() -> None:
    """Mid-run, before any summary, the Bayes tab shows the rates RunStarted announced."""
    quiz = make_quiz()
    gate = Gate(pause_after=0)

    async def start_run() -> AsyncIterator[VetEvent]:
        async for event in synthetic_events(quiz, gate=gate):
            if isinstance(event, RunStarted):
                event = dataclasses.replace(
                    event,
                    calibration="profile #3 measured 2026-11-20",
                    tpr=0.85,
                    tnr=0.93,
                    tpr_ci=(0.80, 0.89),
                    tnr_ci=(0.90, 0.95),
                    mode="question",
                )
            yield event

    app = QuiztuiApp(
        quiz,
        AppServices(start_run=start_run, judge_label="SIMULATED judge", simulated=True),
        clock=constant_clock(),
        flush_interval=0.02,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await gate.reached.wait()
        screen = await open_metrics(pilot, wait_for_run=False)
        caption = static_text(screen, "#bayes-caption")
        assert (
            "TPR 0.85 [0.80, 0.89] · TNR 0.93 [0.90, 0.95] · profile #3 measured 2026-11-20"
            " — as this run scores, per-question mode"
        ) in caption
        judge = {float(r[0]): float(r[3]) for r in table_rows(screen, "#bayes-table")}
        assert judge[0.5] == pytest.approx(p_true_given_judged_true(0.85, 0.93, 0.5), abs=1e-6)
        gate.release.set()


# -- run, reliability, profiles, usage ---------------------------------------------------------


async def test_run_tab_counts_badges_and_k_from_the_vet_screen() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        vet = app.vet_screen
        scores = [r.score for r in vet.state.questions.values()]
        assert all(s is not None for s in scores)
        screen = await open_metrics(pilot, wait_for_run=False)
        await show(pilot, screen, "run")
        caption = static_text(screen, "#run-caption")
        assert "Run finished" in caption and "12/12 questions scored" in caption
        for name in ("good", "questionable", "poor"):
            count = sum(1 for s in scores if s is not None and s.badge == name)
            assert f"{name} {count}" in caption
        k_plot = screen.query_one("#k-plot", Chart)
        assert k_plot.spec is not None
        k_bars = k_plot.spec.series[0]
        assert k_bars.x == ("0", "1", "2", "3", "4")
        assert k_bars.y == tuple(
            float(sum(1 for s in scores if s is not None and s.k == k)) for k in range(5)
        )
        conf_plot = screen.query_one("#confidence-plot", Chart)
        assert conf_plot.spec is not None and sum(conf_plot.spec.series[0].y) == 12
        assert "questions by k" in rendered(screen, "#k-plot")


async def test_reliability_with_truth_reports_the_ece() -> None:
    quiz = make_quiz()
    app = make_app(quiz)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot)
        await show(pilot, screen, "reliability")
        records = app.vet_screen.state.questions.values()
        confidences = [r.score.confidence for r in records if r.score is not None]
        outcomes = [quiz.truth[r.question.id] == r.question.key for r in records]
        ece = expected_calibration_error(confidences, outcomes)
        caption = static_text(screen, "#reliability-caption")
        assert f"ECE {ece:.3f}" in caption
        assert f"{sum(outcomes)} accurate" in caption
        rows = table_rows(screen, "#reliability-table")
        assert sum(int(r[1]) for r in rows) == 12
        assert screen.query_one("#reliability-body").display


async def test_reliability_without_truth_says_so() -> None:
    quiz = make_quiz().model_copy(update={"truth": {}})
    app = make_app(quiz)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot)
        await show(pilot, screen, "reliability")
        assert "No truth is known" in static_text(screen, "#reliability-caption")
        assert not screen.query_one("#reliability-body").display


def profile(model: str, **kwargs: object) -> JudgeProfile:
    return JudgeProfile(
        provider="openai-compat",
        model=model,
        prompt_hash="abc",
        batch_size=20,
        mode="assertion",
        confusion=Confusion(tp=850, fn=150, tn=2760, fp=240, unjudged=12),
        gold="opentdb.json (n=1000)",
        questions=1000,
        tokens_in=90_000,
        tokens_out=12_000,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_profiles_tab_empty_and_filled() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot)
        await show(pilot, screen, "profiles")
        assert static_text(screen, "#profiles-caption") == NO_PROFILES
        assert not screen.query_one("#profiles-table").display

    markup_model = "gpt-[bold]4o[/] [link=x]mini"
    profiles = [
        profile(markup_model, cost=0.0123, latency=1.42, id=3),
        profile("beta-judge", interval_method="beta", simulated=True, id=4),
    ]
    app = make_app(profiles=profiles)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_metrics(pilot)
        await show(pilot, screen, "profiles")
        await pilot.app.workers.wait_for_complete()  # the rows are computed off the UI thread
        await pilot.pause()
        rows = table_rows(screen, "#profiles-table")
        assert len(rows) == 2
        judge, mode, batch, tpr, tnr, acc, unjudged, tokens, cost, latency = rows[0]
        assert (judge, mode, batch) == (f"openai-compat\n{markup_model}", "assertion", "20")
        assert tpr == "0.85\n[0.83, 0.87]" and tnr == "0.92\n[0.91, 0.93]"
        assert acc == "0.90"  # (850 + 2760) / 4000
        assert unjudged == "0.3%"
        assert tokens == "102"
        assert (cost, latency) == ("$0.0123", "1.42s")
        painted = rendered(screen, "#profiles-table")
        assert "gpt-[bold]4o[/] [link=x]" in painted  # literally, no markup (then ellipsised)
        assert "1.42s" in painted  # the last column fits at 120 columns
        judge, *_, cost, latency = rows[1]
        assert (judge, cost, latency) == ("openai-compat (simulated)\nbeta-judge", "–", "–")
        beta_low, beta_high = profiles[1].tpr_ci
        assert rows[1][3] == f"0.85\n[{beta_low:.2f}, {beta_high:.2f}]"


async def test_usage_tab_shows_tokens_and_requests() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot)
        usage = app.vet_screen.state.usage
        assert usage is not None
        await show(pilot, screen, "usage")
        text = static_text(screen, "#usage-body")
        assert f"in {usage.tokens_in:,}" in text and f"out {usage.tokens_out:,}" in text
        assert f"{usage.requests:,}" in text and "retries 0" in text
        assert re.search(r"cost\s+\$0$", text, re.M)  # the simulated judge: free, as the header


async def test_refreshes_while_the_run_goes_on() -> None:
    gate = Gate(pause_after=24)
    app = make_app(gate=gate)
    async with app.run_test(size=(80, 24)) as pilot:
        await gate.reached.wait()
        screen = await open_metrics(pilot, wait_for_run=False)
        await show(pilot, screen, "run")
        assert "Run running" in static_text(screen, "#run-caption")
        assert "12/12" not in static_text(screen, "#run-caption")
        gate.release.set()
        await pilot.app.workers.wait_for_complete()
        await wait_until(  # the 1 s refresh timer
            pilot,
            lambda: "Run finished" in static_text(screen, "#run-caption"),
            what="the metrics screen to see the run finish",
        )
        assert "Run finished · 12/12 questions scored" in static_text(screen, "#run-caption")


async def test_interim_pending_scores_count_as_pending() -> None:
    """The pipeline may score a question before all its verdicts are in (badge pending)."""
    quiz = make_quiz()
    gate = Gate(pause_after=0)

    async def start_run() -> AsyncIterator[VetEvent]:
        async for event in synthetic_events(quiz, gate=gate):
            yield event
            if isinstance(event, RunStarted):
                yield QuestionScored(
                    question_id="q1",
                    k=0,
                    n=4,
                    judged=0,
                    badge=Badge.PENDING,
                    confidence=0.95,
                    suggested_option=None,
                    suggested_p=None,
                )

    app = QuiztuiApp(
        quiz,
        AppServices(start_run=start_run, judge_label="SIMULATED judge", simulated=True),
        clock=constant_clock(),
        flush_interval=0.02,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await gate.reached.wait()
        screen = await open_metrics(pilot, wait_for_run=False)
        await show(pilot, screen, "run")
        caption = static_text(screen, "#run-caption")
        assert "0/12 questions scored" in caption and "pending 12" in caption
        k_plot = screen.query_one("#k-plot", Chart)
        assert k_plot.spec is not None and sum(k_plot.spec.series[0].y) == 0
        gate.release.set()


# -- navigation ------------------------------------------------------------------------------


async def test_open_and_close_from_keys_palette_and_help() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        help_lines = [
            (e.keys, e.description, e.binding_id)
            for s in collect_sections(app.screen)
            for e in s.entries
        ]
        assert ("m", "Metrics", "view.metrics") in help_lines
        screen = await open_metrics(pilot, wait_for_run=False)
        await pilot.press("right_square_bracket")
        assert screen.active_tab == "binomial"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert screen.active_tab == "usage"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, VetScreen)
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MetricsScreen)
        await pilot.press("m")  # m toggles back
        await pilot.pause()
        assert isinstance(app.screen, VetScreen)

        provider = QuiztuiCommands(app.screen)
        commands = {title: callback for title, _, callback in provider._commands()}
        # The palette runs a command as the app's next callback (it may be a coroutine).
        app.call_next(commands["View: metrics"])
        await wait_until(pilot, lambda: isinstance(app.screen, MetricsScreen), what="metrics")
        app.call_next(commands["View: metrics"])  # already open: no second copy
        await pilot.pause()
        await pilot.pause()
        assert len([s for s in app.screen_stack if isinstance(s, MetricsScreen)]) == 1
