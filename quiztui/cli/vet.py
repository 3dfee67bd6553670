"""``quiztui vet QUIZ``: the TUI by default; ``--no-tui`` runs headless (progress on stderr,
report on stdout or ``-o``).

Exit codes: 0 every question good, 1 a question at or past ``--fail-on``, 2 bad input or config,
3 stopped early and ``--resume`` continues (a budget reached, or a provider batch still pending
after ``batch.max_wait``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quiztui.cli import batch as cli_batch
from quiztui.cli import collector
from quiztui.cli import estimate as cli_estimate
from quiztui.cli._args import COLUMNS_HELP, STRICT_HELP, Parents, answers_arguments, help_for
from quiztui.cli.flags import INT64_MAX, Number
from quiztui.cli.running import run_to_end, when_idle
from quiztui.core.kscore import BADGE_SEVERITY, Badge
from quiztui.core.terminal import RAW_CSV_HELP

if TYPE_CHECKING:
    from quiztui.assemble.vet import StartRun, VetRuns
    from quiztui.config import Config
    from quiztui.core.estimate import Estimate
    from quiztui.core.lint_model import LintReport
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.events import RunSummary
    from quiztui.providers.base import Usage
    from quiztui.report.progress import Progress
    from quiztui.store import Store


def register(sub: Any, parents: Parents) -> None:
    vet = sub.add_parser("vet", parents=[parents.common, parents.judge], help=help_for("vet"))
    vet.add_argument(
        "quiz",
        nargs="?",
        type=Path,
        help="quiz file: Quizaic JSON/JSONL, Open Trivia DB JSON, CSV (question,correct,"
        "distractor… or one column per option: question,A,B,C,D,answer), GIFT (.gift), Aiken"
        " (.aiken), Moodle XML (.xml); by extension, .txt and .json by content",
    )
    vet.add_argument(
        "--no-tui", action="store_true", help="run headless: progress on stderr, report on stdout"
    )
    vet.add_argument(
        "--autostart",
        action="store_true",
        help="TUI: start the run with a paid judge at once instead of showing its estimate and"
        " waiting for r ([ui] autostart = true); a simulated judge always starts at once",
    )
    vet.add_argument("--strict", action="store_true", help=STRICT_HELP)
    vet.add_argument("--columns", metavar="ROLE=NAME,...", help=COLUMNS_HELP + " ([import])")
    vet.add_argument(
        "--format",
        choices=("json", "csv", "md", "html", "junit"),
        help="report format (default: from the -o extension, else md)",
    )
    vet.add_argument("-o", "--output", type=Path, help="write the report to this file")
    vet.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    vet.add_argument(
        "--fail-on", choices=("poor", "questionable", "never"), help="exit 1 threshold"
    )
    vet.add_argument(
        "--resume",
        action=Number,
        ge=1,
        le=INT64_MAX,
        metavar="RUN_ID",
        help="continue a stopped run",
    )
    vet.add_argument("--seed", action=Number, key="vet.seed", help="shuffle seed")
    vet.add_argument(
        "--no-cache",
        action="store_true",
        help="ignore cached verdicts (a real judge's: the simulated judge is never cached, it"
        " answers from the quiz's own key)",
    )
    vet.add_argument(
        "--prior",
        metavar="auto|auto+rates|X",
        help="P(a key is correct): auto (the default) estimates it from the run's own verdicts;"
        " auto+rates fits the judge's TPR/TNR from them too; a number in (0, 1) fixes it"
        " (config vet.prior)",
    )
    vet.add_argument(
        "--mode",
        choices=("assertion", "question"),
        help="assertion: batches of true/false assertions; question: one request per question",
    )
    answers_arguments(vet, panel=False)
    cli_estimate.add_arguments(vet)
    cli_batch.add_argument(vet)
    # A headless run turns the garbage collector back on once its first requests are out.
    vet.set_defaults(handler=cmd_vet, releases_collector=True)


def exit_code(badges: Sequence[Badge], fail_on: str) -> int:
    """0 when every question is good; 1 when any reaches the threshold. Incomplete counts as questionable."""
    if fail_on == "never":
        return 0
    threshold = BADGE_SEVERITY[Badge.POOR if fail_on == "poor" else Badge.QUESTIONABLE]
    worst = max(
        (
            BADGE_SEVERITY[Badge.QUESTIONABLE] if b == Badge.INCOMPLETE else BADGE_SEVERITY[b]
            for b in badges
        ),
        default=0,
    )
    return 1 if worst >= threshold else 0


async def on_the_wire(usage: Usage, then: Callable[[], object], poll: float = 0.005) -> None:
    """Call ``then()`` once the run's first requests are on the wire: the provider has counted a
    request and the count held still for one ``poll`` (the first burst, up to the concurrency,
    went out in one go), or a reply came back."""
    seen = -1
    while usage.requests == 0 or usage.requests != seen:
        seen = usage.requests
        await asyncio.sleep(poll)
    then()


async def headless(
    start_run: StartRun,
    progress: Progress,
    *,
    usage: Usage | None = None,
    when_sent: Callable[[], Awaitable[object]] | None = None,
    started: list[int] | None = None,
) -> RunSummary | None:
    """Drive one run to its end, drawing progress; the run's summary.

    ``when_sent``: started as a task once the first requests are on the wire (``usage``: the
    provider's counters), for work that can wait for the judge, never hold up its first request;
    awaited before the summary is returned.
    ``started`` gets the run's id as it starts (for the ``--resume RUN_ID`` an interrupt prints)."""
    from quiztui.pipeline.events import (
        ProviderBatchStatus,
        RunFinished,
        RunStarted,
        UsageUpdated,
    )

    summary = None
    batch_lines = cli_batch.StatusLines(progress.stream)  # batch mode: a line per status change
    pending = [when_sent] if when_sent is not None else []
    watch: asyncio.Task[None] | None = None
    work: list[asyncio.Task[object]] = []

    def sent() -> None:
        collector.release()  # held off since start-up (cli/collector.py)
        if pending:
            work.append(asyncio.ensure_future(pending.pop()()))

    try:
        async for event in start_run():
            if isinstance(event, UsageUpdated):
                sent()  # a reply came back: the requests went out long ago
                progress.usage(event)
            elif isinstance(event, ProviderBatchStatus):
                batch_lines(event)
            elif isinstance(event, RunStarted):
                if started is not None:
                    started.append(event.run_id)
                cli_estimate.print_started(event, progress.stream)
                if pending and usage is not None:
                    watch = asyncio.create_task(on_the_wire(usage, sent))
            elif isinstance(event, RunFinished):
                summary = event.summary
                progress.update(
                    summary.judged,
                    summary.unjudged,
                    summary.judged + summary.unjudged,
                    summary.requests,
                    summary.retries,
                    summary.tokens_in,
                    summary.tokens_out,
                    final=True,
                    estimated=summary.tokens_estimated,
                )
    finally:
        if watch is not None:
            watch.cancel()
        sent()  # a run that ended before any request still gets its report's work
        for task in work:
            await task
    return summary


def simulated_state(provider: Any, quiz: Quiz, config: Config | None = None) -> str:
    """What the SIMULATED judge is and is not, and the one step to a real one (core/figures);
    worded as chosen when ``config`` names it (``--judge simulated``), not fallen back to."""
    from quiztui.core.figures import QUIZ_KEY, simulated_note

    name = Path(quiz.source_path).name if quiz.source_path else "QUIZ"
    chosen = config is not None and config.judge.provider == "simulated"
    return simulated_note(getattr(provider, "truth_source", QUIZ_KEY), name, chosen=chosen)


def resume_hint(run_id: int) -> str:
    """The exact command that continues run ``run_id`` (its own quiz file, headless)."""
    return f"quiztui vet --resume {run_id} --no-tui"


def print_interrupted(run_id: int | None) -> None:
    """Ctrl+C in a headless run: what is kept, and the exact command that continues it."""
    if sys.stderr.isatty():
        print(file=sys.stderr)  # off the progress line
    if run_id is None:
        print("quiztui: interrupted before the run started; nothing to resume", file=sys.stderr)
        return
    print(
        f"quiztui: interrupted; run {run_id}'s verdicts so far are saved. Continue it with:"
        f" {resume_hint(run_id)}",
        file=sys.stderr,
    )


def prior_label(runs: VetRuns) -> str | None:
    """Which prior the last run scored with, as the header names it (core/figures.prior_text):
    the auto estimate once a run has made one, or ``fixed X``."""
    from quiztui.core.figures import prior_text

    if runs.settings.prior_auto:
        estimate = runs.prior_estimate()
        return None if estimate is None else estimate.label
    return prior_text(runs.settings.prior, None)


def build_vet_app(
    config: Config,
    store: Store,
    quiz: Quiz,
    runs: VetRuns,
    *,
    autostart: bool = False,
    resume: int | None = None,
    batch_api: bool = False,
    columns: Mapping[str, Sequence[str]] | None = None,
) -> Any:
    """The vet TUI over ``quiz`` with every tool wired to the configured judge and store."""
    from quiztui.assemble import calibrate, grade, review, robustness
    from quiztui.assemble.common import lint_report
    from quiztui.assemble.review_desk import StoreDecisionBook
    from quiztui.assemble.vet import try_bank
    from quiztui.core.figures import judge_rates_text
    from quiztui.pipeline.history import StoreHistory, newest_review, newest_robustness
    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.services import (
        AppServices,
        CalibrateService,
        GradeService,
        ReviewService,
        RobustnessService,
    )

    robustness_settings = robustness.settings(config)
    latest = store.robustness.latest_fragility(quiz.content_hash())
    services = AppServices(
        start_run=runs.start_run,
        judge_label=runs.provider.label,
        simulated=runs.provider.simulated,
        calibration=judge_rates_text(
            runs.accuracy.tpr,
            runs.accuracy.tnr,
            runs.accuracy.tpr_ci,
            runs.accuracy.tnr_ci,
            runs.accuracy.label,
        ),
        profiles=store.profiles.list(),
        fragility=latest[1] if latest else {},
        bank=try_bank(Path(quiz.source_path) if quiz.source_path else None, columns),
        start_rejudge=runs.start_run,
        start_edited_run=lambda edited: runs.start_run(quiz=edited),
        prior=lambda: prior_label(runs),
        lint=lambda edited: lint_report(config, edited),
        calibrate=CalibrateService(
            calibrate.calibration_starter(config, store),
            batch_size=config.vet.batch_size,
            mode=config.vet.mode,
        ),
        grade=GradeService(
            lambda items, grader: grade.grade_events(config, store, items, None, grader),
            grader=config.grade.grader,
            calibrations=lambda: grade.configured_calibrations(config),
        ),
        robustness=RobustnessService(
            lambda: robustness.robustness_events(config, store, quiz, robustness_settings),
            settings=robustness_settings,
            # a paid judge's label is its provider's, the same as the vet run's
            stored=lambda: newest_robustness(store, quiz, robustness_settings, runs.provider.label),
        ),
        review=ReviewService(
            review.review_starter(config, store),
            mode=config.review.mode,
            low_score=config.review.low_score,
            stored=lambda mode: newest_review(store, quiz, mode, runs.provider.label),
        ),
        runs=StoreHistory(config.db_path()),
        decisions=StoreDecisionBook(store),
        report=lambda run_id, fmt: _stored_report(config, store, run_id, fmt),
        simulated_note=(
            simulated_state(runs.provider, quiz, config) if runs.provider.simulated else ""
        ),
    )
    # A paid judge waits for r, its estimate in the header; a simulated one starts at once.
    autorun = runs.provider.simulated or autostart or config.ui.autostart
    if not autorun:
        from dataclasses import replace

        from quiztui.assemble.estimate import estimate_vet
        from quiztui.errors import QuiztuiError

        def estimate() -> Estimate | None:  # in a worker thread of the TUI; sends nothing
            try:
                return estimate_vet(config, store, quiz, resume, batch_api)[1]
            except QuiztuiError:
                return None  # the header says "cost unknown"; r still starts the run

        services = replace(services, estimate=estimate)
    return QuiztuiApp(
        quiz,
        services,
        autorun=autorun,
        theme_name=config.ui.theme,
        flush_interval=config.ui.flush_interval,
        keymap=config.keys.keymap(),
    )


def recorded_runs(config: Config, quiz: Quiz, store: Store, args: argparse.Namespace) -> VetRuns:
    """``--answers FILE --answers-model NAME``: one model's recorded answers judge the quiz;
    what did not join is said on stderr, a line each."""
    from quiztui.assemble.recorded import read_answers, recorded_vet_runs
    from quiztui.errors import QuiztuiError

    for flag, used in (
        ("--resume", args.resume is not None),
        ("--batch-api", getattr(args, "batch_api", False)),
    ):
        if used:
            raise QuiztuiError(f"--answers asks no model: {flag} does not apply")
    model = args.answers_model
    answers = read_answers(args.answers, quiz, [model] if model else [])
    for line in answers.notes:
        print(f"quiztui: answers: {line}", file=sys.stderr)
    return recorded_vet_runs(config, quiz, store, answers, model)


def wrong_keys_line(summary: RunSummary) -> str:
    """The headless summary's "expect 3.2 wrong keys [1, 6] in 120 questions (95 % interval)"."""
    from quiztui.core.wrong_keys import wrong_keys_of, wrong_keys_text

    return wrong_keys_text(wrong_keys_of([q.confidence for q in summary.questions]))


def _stored_report(
    config: Config, store: Any, run_id: int, fmt: str
) -> tuple[str, tuple[str, ...]]:
    """The TUI export's report: the one ``quiztui report RUN_ID`` writes."""
    from quiztui.report.stored import stored_report

    report = stored_report(config, store, run_id, fmt)
    return report.text, report.notes


async def report_work(config: Config, quiz: Quiz) -> LintReport:
    """What a headless run's report needs besides the verdicts, done while the judge is waited on
    (:func:`headless`'s ``when_sent``): httpx (the replies are read with it), numpy (the judge
    model's, at the run's end), the report writers and the review desk imported, and the quiz's
    lint. On the event loop's thread, a step at a time, each when the loop has nothing else to do
    (:func:`~quiztui.cli.running.when_idle`): a round of replies is read before the next step.
    The largest steps come first, while the first requests are still out: httpx and numpy take
    30-60 ms each, which no reply should wait for; the rest take a few ms at most. Then the
    records imported but not made yet (``core/records.py``), the replies' own classes among them.
    """
    import importlib

    import httpx

    await when_idle()
    import numpy  # the judge model's fit and intervals (pipeline/vet.VetRun._judge_model)

    await when_idle()
    from quiztui.core.records import make_pending

    for _ in make_pending():
        await when_idle()
    from quiztui.providers._http import event_json

    event_json("{}")  # orjson, which reads the streamed replies
    # Each a step of its own, leaves first: numpy.ma is asked for by np.quantile's np.unique
    # (10-20 ms after the last reply else), numpy.random by the judge model's intervals.
    for module in _REPORT_MODULES:
        await when_idle()
        importlib.import_module(module)
    await when_idle()
    from quiztui.assemble.common import lint_report_steps

    del httpx, numpy  # imported, used later
    steps = lint_report_steps(config, quiz)
    while True:  # the lint a few questions at a time: about 1 ms a step
        try:
            next(steps)
        except StopIteration as done:
            collector.settle()  # the modules and the lint made here live to the end
            return done.value  # type: ignore[no-any-return]
        await when_idle()


# What a headless run's end imports, in an order that keeps each import a small step.
_REPORT_MODULES = (
    "numpy.ma",
    "numpy.random",
    "quiztui.core.judges",  # the end's scores (pipeline/vet.VetRun._judge_model)
    "rapidfuzz.distance.Indel",  # the lint's text comparisons (core/textnorm.py)
    "rapidfuzz.fuzz",
    "rapidfuzz.process",
    "quiztui.core.textnorm",
    "quiztui.core.lint_items",
    "quiztui.core.lint",
    "quiztui.core.decisions",
    "quiztui.assemble.review_desk",
    "xml.etree.ElementTree",
    "quiztui.report.junit",
    "quiztui.report.svg",
    "quiztui.report.html",
    "quiztui.report.extras",
    "quiztui.report.writers",
)


def cmd_vet(config: Config, args: argparse.Namespace) -> int:
    # Only what the first request needs is imported before it leaves (no numpy, no report
    # writers, no lint, no TUI: tests/test_vet_imports.py); the rest loads while the judge works.
    from quiztui.assemble.vet import open_quiz, vet_runs
    from quiztui.cli._quiz import quiz_columns
    from quiztui.errors import QuiztuiError
    from quiztui.report.progress import Progress

    if not args.no_tui or args.estimate:
        collector.release()  # no headless run's requests to wait for
    columns = quiz_columns(config, args.columns)
    store, quiz = open_quiz(config, args.quiz, args.resume, strict=args.strict, columns=columns)
    for line in quiz.load_report():
        print(f"quiztui: {line}", file=sys.stderr)
    try:
        if args.estimate and getattr(args, "answers", None):
            raise QuiztuiError("--answers asks no model: --estimate does not apply")
        if args.estimate:
            return cli_estimate.cmd_estimate(config, args, store, quiz)
        if args.resume is not None:
            # One process per run: a live holder is an error (exit 2); a dead one is taken over.
            _, note = store.leases.acquire(args.resume)
            if note:
                print(f"quiztui: {note}", file=sys.stderr)
        answers = getattr(args, "answers", None)
        if answers:
            runs = recorded_runs(config, quiz, store, args)
        else:
            runs = vet_runs(
                config,
                quiz,
                store,
                args.resume,
                getattr(args, "batch_api", False),
                live=not args.no_tui,  # headless: no live view, only the final scores
            )
        if not args.no_tui:
            app = build_vet_app(
                config,
                store,
                quiz,
                runs,
                autostart=args.autostart or bool(answers),  # nothing to pay: start at once
                resume=args.resume,
                batch_api=getattr(args, "batch_api", False),
                columns=columns,
            )
            app.run()
            if app.interrupted_run is not None:  # quit mid-run: the terminal is back, say how
                print(
                    f"quiztui: run {app.interrupted_run} stopped before its end; its verdicts so"
                    f" far are saved. Continue it with: quiztui vet --resume {app.interrupted_run}",
                    file=sys.stderr,
                )
            return 0
        if runs.provider.simulated or answers:
            print(f"quiztui: judging with the {runs.provider.label}", file=sys.stderr)
            print(f"quiztui: {simulated_state(runs.provider, quiz, config)}", file=sys.stderr)
        # The report's lint and modules need no model: they are made once the first requests are
        # on the wire, on the event loop's own thread while it has nothing to do but wait for
        # the judge (a thread beside it would hold the GIL whenever a reply arrives).
        lint: list[Future[LintReport]] = []
        started: list[int] = []

        async def prepare_report() -> None:
            done: Future[LintReport] = Future()
            try:
                done.set_result(await report_work(config, quiz))
            except Exception as exc:  # raised after the run, where the report needs it
                done.set_exception(exc)
            lint.append(done)

        try:
            summary = run_to_end(
                headless(
                    runs.start_run,
                    Progress(sys.stderr),
                    usage=runs.provider.usage,
                    when_sent=prepare_report,
                    started=started,
                )
            )
        except KeyboardInterrupt:
            print_interrupted(started[-1] if started else None)
            return 130
        assert summary is not None
        from quiztui.assemble.review_desk import decisions_for
        from quiztui.report import render_report
        from quiztui.report.writers import ReportExtras, format_for

        if (prior := runs.prior_estimate()) is not None:
            print(f"quiztui: run {summary.run_id}: prior {prior.label}", file=sys.stderr)
        print(f"quiztui: run {summary.run_id}: {wrong_keys_line(summary)}", file=sys.stderr)
        extras = ReportExtras(
            unjudged=quiz.unjudged, lint=lint[0].result(), decisions=decisions_for(store, quiz)
        )
        fmt = format_for(args.output, args.format)
        report = render_report(summary, fmt, extras, raw_csv=args.raw_csv)
        if args.output:
            args.output.write_text(report, encoding="utf-8")
            print(
                f"quiztui: run {summary.run_id}: report written to {args.output}", file=sys.stderr
            )
        else:
            sys.stdout.write(report)
        if summary.status == "failed":
            print(f"quiztui: error: {summary.error}", file=sys.stderr)
            return 2
        if summary.status == "stopped":
            return cli_estimate.report_stopped(summary, sys.stderr)
        return exit_code([q.badge for q in summary.questions], config.vet.fail_on)
    finally:
        store.close()
