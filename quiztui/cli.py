"""Command line: ``quiztui QUIZ`` opens the TUI; ``quiztui vet QUIZ --no-tui`` runs headless.

Exit codes: 0 every question good, 1 a question at or past ``--fail-on``, 2 bad input or config,
3 stopped early and ``--resume`` continues (a provider batch still pending after
``batch.max_wait``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TextIO

from quiztui import (
    __version__,
    cli_batch,
    cli_calibrate,
    cli_convert,
    cli_estimate,
    cli_generate,
    cli_grade,
    cli_lint,
    cli_report,
    cli_review,
    cli_robustness,
    cli_runs,
)
from quiztui.config import Config, load_config, write_default_config
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.kscore import BADGE_SEVERITY, Badge
from quiztui.core.quiz import Quiz
from quiztui.errors import QuizFormatError, QuiztuiError
from quiztui.locations import config_path, data_dir
from quiztui.pipeline.events import ProviderBatchStatus, UsageUpdated

COMMANDS = (
    "vet",
    "config",
    "locate",
    "runs",
    "calibrate",
    "profiles",
    "panel",
    "grade",
    "review",
    "generate",
    "robustness",
    "convert",
    "lint",
    "report",
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="quiztui",
        description="Vet quizzes with LLM judges. `quiztui QUIZ` opens the TUI.",
    )
    p.add_argument("--version", action="version", version=f"quiztui {__version__}")
    p.add_argument("--config", type=Path, help="config file (default: the XDG config path)")
    sub = p.add_subparsers(dest="command")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, default=argparse.SUPPRESS, help="config file")

    judge = argparse.ArgumentParser(add_help=False)
    judge.add_argument(
        "--judge",
        choices=("auto", "simulated", "openai-compat", "anthropic", "gemini"),
        help="judge provider",
    )
    judge.add_argument("--model", help="judge model")
    judge.add_argument("--base-url", help="the judge API's base URL")
    judge.add_argument("--batch-size", type=int, help="assertions per request")
    judge.add_argument("--concurrency", type=int, help="requests in flight")
    judge.add_argument("--db", type=Path, help="SQLite run store")
    judge.add_argument("--sim-latency", type=float, help="simulated judge: seconds per request")

    vet = sub.add_parser(
        "vet", parents=[common, judge], help="judge every option of every question"
    )
    vet.add_argument(
        "quiz",
        nargs="?",
        type=Path,
        help="quiz file (Quizaic JSON/JSONL, Open Trivia DB JSON, CSV)",
    )
    vet.add_argument(
        "--no-tui", action="store_true", help="run headless: progress on stderr, report on stdout"
    )
    vet.add_argument(
        "--format",
        choices=("json", "csv", "md", "html", "junit"),
        help="report format (default: from the -o extension, else md)",
    )
    vet.add_argument("-o", "--output", type=Path, help="write the report to this file")
    vet.add_argument(
        "--fail-on", choices=("poor", "questionable", "never"), help="exit 1 threshold"
    )
    vet.add_argument("--resume", type=int, metavar="RUN_ID", help="continue a stopped run")
    vet.add_argument("--seed", type=int, help="shuffle seed")
    vet.add_argument("--no-cache", action="store_true", help="ignore cached verdicts")
    vet.add_argument(
        "--mode",
        choices=("assertion", "question"),
        help="assertion: batches of true/false assertions; question: one request per question",
    )
    cli_estimate.add_arguments(vet)
    cli_batch.add_argument(vet)

    cfg = sub.add_parser("config", parents=[common], help="configuration file")
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True)
    init = cfg_sub.add_parser("init", parents=[common], help="write a commented default config")
    init.add_argument("--force", action="store_true")
    cfg_sub.add_parser("show", parents=[common], help="print the effective configuration")

    loc = sub.add_parser("locate", parents=[common], help="print where quiztui keeps a file")
    loc.add_argument("what", choices=("config", "data", "db"))

    cli_runs.add_parser(sub, common)
    cli_calibrate.add_parsers(sub, common, judge)
    cli_calibrate.add_panel_parser(sub, common, judge)
    cli_grade.add_parser(sub, common, judge)
    cli_review.add_parser(sub, common, judge)
    cli_generate.add_parser(sub, common, judge)
    cli_robustness.add_parser(sub, common, judge)
    cli_convert.add_parser(sub, common)
    cli_lint.add_parser(sub, common)
    cli_report.add_parser(sub, common)
    return p


def _apply_flags(config: Config, args: argparse.Namespace) -> Config:
    judge = config.judge.model_copy()
    vet = config.vet.model_copy()
    sim = config.simulated.model_copy()
    store = config.store.model_copy()
    if getattr(args, "judge", None):
        judge.provider = args.judge
    if getattr(args, "model", None):
        judge.model = args.model
    if getattr(args, "base_url", None):
        judge.base_url = args.base_url
    if getattr(args, "concurrency", None):
        judge.concurrency = args.concurrency
    if getattr(args, "batch_size", None):
        vet.batch_size = args.batch_size
    if getattr(args, "mode", None) and args.command == "vet":
        vet.mode = args.mode
    if getattr(args, "seed", None) is not None:
        vet.seed = args.seed
    if getattr(args, "fail_on", None):
        vet.fail_on = args.fail_on
    if getattr(args, "budget", None) is not None and args.command == "vet":
        vet.budget = args.budget
    if getattr(args, "no_cache", False):
        vet.cache = False
    if getattr(args, "sim_latency", None) is not None:
        sim.latency = args.sim_latency
    if getattr(args, "db", None):
        store.path = str(args.db)
    return config.model_copy(update={"judge": judge, "vet": vet, "simulated": sim, "store": store})


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


class Progress:
    """One progress line on stderr: redrawn in place on a terminal, every 10 % otherwise."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "assertions",
        missed: str = "unjudged",
    ) -> None:
        self.stream = stream
        self.unit = unit
        self.missed = missed
        self.tty = stream.isatty()
        self.clock = clock
        self.start = clock()
        self.last_draw = 0.0
        self.last_decile = -1
        self.last_line = ""

    def usage(self, event: UsageUpdated, final: bool = False) -> None:
        self.update(
            event.judged,
            event.unjudged,
            event.total,
            event.requests,
            event.retries,
            event.tokens_in,
            event.tokens_out,
            final=final,
        )

    def update(
        self,
        judged: int,
        unjudged: int,
        total: int,
        requests: int,
        retries: int,
        tokens_in: int,
        tokens_out: int,
        final: bool = False,
    ) -> None:
        done = judged + unjudged
        now = self.clock()
        frac = done / total if total else 1.0
        line = (
            f"{done}/{total} {self.unit} ({frac:.0%}) · {self.missed} {unjudged} · requests {requests}"
            f" · retries {retries} · tokens {tokens_in}/{tokens_out} · {now - self.start:.1f}s"
        )
        if self.tty:
            if final or now - self.last_draw >= 0.1:
                width = 30
                bar = "█" * int(frac * width) + "░" * (width - int(frac * width))
                self.stream.write(f"\r{bar} {line}\x1b[K" + ("\n" if final else ""))
                self.stream.flush()
                self.last_draw = now
        else:
            decile = int(frac * 10)
            same = line.rsplit(" · ", 1)[0] == self.last_line
            if (final and not same) or decile > self.last_decile:
                self.last_decile = decile
                self.last_line = line.rsplit(" · ", 1)[0]
                self.stream.write(line + "\n")
                self.stream.flush()


def _open(config: Config, args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from quiztui.formats import load_quiz
    from quiztui.store import Store

    store = Store(config.db_path())
    quiz_path = args.quiz
    if args.resume is not None and quiz_path is None:
        record = store.get_run(args.resume)
        if not record.quiz_path:
            raise QuiztuiError(f"run {args.resume} has no quiz path; pass the quiz file")
        quiz_path = Path(record.quiz_path)
    if quiz_path is None:
        raise QuiztuiError("no quiz given: quiztui vet QUIZ")
    quiz = load_quiz(quiz_path)
    return store, quiz


def vet_settings(config: Config):  # type: ignore[no-untyped-def]
    from quiztui.pipeline.vet import VetSettings

    return VetSettings(
        batch_size=config.vet.batch_size,
        concurrency=config.judge.concurrency,
        seed=config.vet.seed,
        max_reasks=config.vet.max_reasks,
        prior=config.vet.prior,
        temperature=config.judge.temperature,
        max_tokens=config.judge.max_tokens,
        use_cache=config.vet.cache,
        mode=config.vet.mode,
        logprobs=config.judge.logprobs != "off",
    )


def judge_accuracy(store, provider, prompt, settings) -> JudgeAccuracy:  # type: ignore[no-untyped-def]
    """The newest profile measured for exactly this judge set-up, else the uncalibrated defaults."""
    profile = store.profiles.match(
        provider=provider.name,
        model=provider.model,
        prompt_hash=prompt.hash,
        batch_size=settings.batch_size if settings.mode == "assertion" else 1,
        mode=settings.mode,
    )
    return profile.accuracy() if profile is not None else JudgeAccuracy()


def _make_run_factory(  # type: ignore[no-untyped-def]
    config: Config, quiz, store, resume: int | None, batch_api: bool = False
):
    from quiztui.locations import config_dir
    from quiztui.pipeline.prompts import load_prompt, prompt_for_mode
    from quiztui.pipeline.vet import VetRun
    from quiztui.providers.factory import build_provider

    batch = cli_batch.batch_mode(store, resume, batch_api)  # a provider batch API (--batch-api)
    provider = cli_batch.build_provider(config) if batch else build_provider(config, quiz)
    settings = vet_settings(config)
    if batch:
        settings = cli_batch.batch_settings(settings, quiz, store, resume)
    prompt = load_prompt(prompt_for_mode(settings.mode), config_dir() / "prompts")
    accuracy = judge_accuracy(store, provider, prompt, settings)
    cli_estimate.run_options(config, store, provider, prompt, settings)  # a budget needs a price
    pending_resume = [resume]

    def start_run(only: Quiz | None = None) -> AsyncIterator:  # type: ignore[type-arg]
        """A run over the quiz, or over ``only`` (an edited question, re-judged alone)."""
        # Looked up at every start: a calibration made in the TUI applies to the next run.
        current = judge_accuracy(store, provider, prompt, settings)
        options = cli_estimate.run_options(config, store, provider, prompt, settings)
        if only is not None:
            teach_simulated_judge(provider, only)
            options["budget"] = None  # one edited question: priced, never stopped
            return VetRun(only, provider, store, prompt, settings, current, **options).events()
        run = VetRun(
            quiz,
            provider,
            store,
            prompt,
            settings,
            current,
            resume_run_id=pending_resume[0],
            **options,
        )
        pending_resume[0] = None
        return run.events()

    return provider, accuracy, start_run


def teach_simulated_judge(provider, quiz: Quiz) -> None:  # type: ignore[no-untyped-def]
    """The simulated judge answers from a truth table made at start; an edited question's new
    assertions join it (true as keyed), so re-judging an edit works offline too."""
    from quiztui.providers.simulated import SimulatedProvider
    from quiztui.simulate.vet import truth_table

    if isinstance(provider, SimulatedProvider):
        for text, truth in truth_table(quiz).items():
            provider.truth.setdefault(text, truth)


def _try_bank(path: Path | None):  # type: ignore[no-untyped-def]
    """The quiz file as a bank, for writing edits back (None when it cannot be read as one)."""
    from quiztui.formats.bank_io import load_bank

    if path is None:
        return None
    try:
        return load_bank(path)
    except QuiztuiError:
        return None


async def _headless(start_run, progress: Progress):  # type: ignore[no-untyped-def]
    from quiztui.pipeline.events import RunFinished, RunStarted

    summary = None
    batch_lines = cli_batch.StatusLines(progress.stream)  # batch mode: a line per status change
    async for event in start_run():
        if isinstance(event, UsageUpdated):
            progress.usage(event)
        elif isinstance(event, ProviderBatchStatus):
            batch_lines(event)
        elif isinstance(event, RunStarted):
            cli_estimate.print_started(event, progress.stream)
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
            )
    return summary


def build_vet_app(config: Config, store, quiz: Quiz, provider, accuracy, start_run):  # type: ignore[no-untyped-def]
    """The vet TUI over ``quiz`` with every tool wired to the configured judge and store."""
    from quiztui.pipeline.history import StoreHistory
    from quiztui.tui.app import QuiztuiApp

    robustness_settings = cli_robustness.settings(config)
    latest = store.robustness.latest_fragility(quiz.content_hash())
    return QuiztuiApp(
        quiz,
        start_run,
        judge_label=provider.label,
        simulated=provider.simulated,
        calibration=accuracy.label,
        theme_name=config.ui.theme,
        flush_interval=config.ui.flush_interval,
        profiles=store.profiles.list(),
        start_calibration=cli_calibrate.calibration_starter(config, store),
        default_batch_size=config.vet.batch_size,
        default_mode=config.vet.mode,
        start_grading=lambda items, grader: cli_grade.grade_events(
            config, store, items, None, grader
        ),
        default_grader=config.grade.grader,
        start_robustness=lambda: cli_robustness.robustness_events(
            config, store, quiz, robustness_settings
        ),
        robustness_settings=robustness_settings,
        fragility=latest[1] if latest else None,
        start_review=cli_review.review_starter(config, store),
        review_mode=config.review.mode,
        review_low_score=config.review.low_score,
        bank=_try_bank(Path(quiz.source_path) if quiz.source_path else None),
        lint=lambda edited: cli_lint.lint_report(config, edited),
        start_rejudge=start_run,
        runs=StoreHistory(config.db_path()),
    )


def cmd_vet(config: Config, args: argparse.Namespace, tui: bool) -> int:
    from quiztui.report import render_report
    from quiztui.report.writers import ReportExtras, format_for

    store, quiz = _open(config, args)
    try:
        if args.estimate:
            return cli_estimate.cmd_estimate(config, args, store, quiz)
        provider, accuracy, start_run = _make_run_factory(
            config, quiz, store, args.resume, getattr(args, "batch_api", False)
        )
        if tui:
            build_vet_app(config, store, quiz, provider, accuracy, start_run).run()
            return 0
        if provider.simulated:
            print(f"quiztui: judging with the {provider.label}", file=sys.stderr)
        summary = asyncio.run(_headless(start_run, Progress(sys.stderr)))
        assert summary is not None
        extras = ReportExtras(unjudged=quiz.unjudged, lint=cli_lint.lint_report(config, quiz))
        report = render_report(summary, format_for(args.output, args.format), extras)
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


def _first_positional(argv: Sequence[str]) -> int | None:
    """Index of the first argument that is neither an option nor an option's value."""
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--config":
            skip = True
        elif not arg.startswith("-"):
            return i
    return None


# Subcommands run as handler(config, args) -> exit code; `vet` (the default) is handled in main.
TOOL_COMMANDS: dict[str, Callable[[Config, argparse.Namespace], int]] = {
    "calibrate": cli_calibrate.cmd_calibrate,
    "profiles": cli_calibrate.cmd_profiles,
    "panel": cli_calibrate.cmd_panel,
    "grade": cli_grade.cmd_grade,
    "review": cli_review.cmd_review,
    "generate": cli_generate.cmd_generate,
    "robustness": cli_robustness.cmd_robustness,
    "convert": cli_convert.cmd_convert,
    "lint": cli_lint.cmd_lint,
    "report": cli_report.cmd_report,
    "runs": cli_runs.cmd_runs,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `quiztui QUIZ [options]` is `quiztui vet QUIZ [options]` in the TUI.
    position = _first_positional(argv)
    if position is not None and argv[position] not in COMMANDS:
        argv.insert(position, "vet")
    args = _parser().parse_args(argv)
    try:
        if args.command is None:
            _parser().print_help()
            return 0
        if args.command == "locate":
            config = load_config(args.config)
            print(
                {
                    "config": args.config or config_path(),
                    "data": data_dir(),
                    "db": config.db_path(),
                }[args.what]
            )
            return 0
        if args.command == "config":
            path = args.config or config_path()
            if args.config_command == "init":
                print(write_default_config(path, force=args.force))
                return 0
            import tomli_w

            print(tomli_w.dumps(load_config(args.config).model_dump(exclude_none=True)), end="")
            return 0
        config = _apply_flags(load_config(args.config), args)
        handler = TOOL_COMMANDS.get(args.command)
        if handler is not None:
            return handler(config, args)
        return cmd_vet(config, args, tui=not args.no_tui)
    except QuizFormatError as exc:
        # Every problem on its own self-contained line: file, location, field, message.
        for line in exc.all_lines():
            print(f"quiztui: error: {line}", file=sys.stderr)
        return exc.exit_code
    except QuiztuiError as exc:
        print(f"quiztui: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            "quiztui: interrupted; judged verdicts are saved (resume with --resume)",
            file=sys.stderr,
        )
        return 130


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
