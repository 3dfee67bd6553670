"""``quiztui grade``: grade candidate answers against references, or benchmark a grader.

- ``quiztui grade FILE [--grader G]``: a CSV/JSONL/JSON answer file; progress on stderr, the
  report (text, Markdown, JSON or CSV) on stdout or ``-o``; ``--tui`` opens the Grade screen.
- ``quiztui grade --question Q --reference R --candidate C``: one answer, graded on the spot.
- ``quiztui grade --benchmark msrpar|answers-students --grader G``: the grader against human
  scores (calibration fitted on train, judged on test), beside the constant-mean baseline and the
  seed's published figures; ``--tui`` shows it as a screen with the confusion matrix and a
  scatter plot.
- ``quiztui grade --benchmark FILE [--scale 0-5] [--columns question=q,answer=ans,score=mark]
  [--fit kfold --folds K --seed N] [--also G2]``: the user's own marked answers; the graders'
  calibrations are fitted on k − 1 folds and judged on the held-out one, beside the constant-mean
  and lexical-overlap baselines on the same folds (:mod:`quiztui.pipeline.grade_fit`). The models
  refitted on all the marks are saved under the data dir as ``calibrations/NAME.json``
  (``--save-calibration NAME``; default: the marked file's stem) and ``quiztui grade ANSWERS
  --calibration NAME|PATH`` (or ``[grade] answers_calibration``) applies them to unmarked answers;
  ``quiztui grade --calibrations`` lists the saved ones.

Exit codes: 0 done (unscored items are reported, not failures), 1 nothing was scored at all, 2 bad
input or configuration (a judge endpoint that cannot be reached too).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from quiztui.assemble.grade import benchmark_events, grade_events
from quiztui.cli._args import Parents, help_for
from quiztui.cli.flags import INT64_MAX, Number
from quiztui.cli.running import run_to_end
from quiztui.config import Config
from quiztui.core.benchmark import CALIBRATIONS
from quiztui.core.grading import GRADER_HELP, GRADERS, LLM_GRADERS, GradeItem
from quiztui.errors import QuiztuiError
from quiztui.report.writers import RAW_CSV_HELP, write_report

NOTHING_SCORED = 1  # the exit code when every answer is unscored


def register(sub: Any, parents: Parents) -> None:
    common, judge = parents.common, parents.judge
    from quiztui.formats.benchmarks import DATASETS

    g = sub.add_parser(
        "grade",
        parents=[common, judge],
        help=help_for("grade"),
        description="Grade candidate answers against reference answers. Graders: "
        + "; ".join(f"{k}: {v}" for k, v in GRADER_HELP.items()),
    )
    g.set_defaults(handler=cmd_grade)
    g.add_argument(
        "file",
        nargs="?",
        type=Path,
        help="answers: CSV/JSONL/JSON with question, reference, candidate[, human]",
    )
    g.add_argument("--grader", choices=GRADERS, help="default: [grade] grader (rubric10)")
    g.add_argument(
        "--benchmark",
        metavar="NAME|FILE",
        help=f"score the grader against human marks: {' or '.join(DATASETS)}, or a CSV/TSV/JSONL"
        " file of your own marked answers (question, reference, answer, score)",
    )
    g.add_argument(
        "--calibration",
        metavar="KIND|NAME|FILE",
        help=f"benchmark: the raw → 0-5 map ({' or '.join(CALIBRATIONS)}); grading answers: a"
        " calibration saved by --benchmark FILE --fit kfold (its name or file), applied to the"
        " raw scores; none: no calibration (default: [grade] answers_calibration)",
    )
    g.add_argument(
        "--save-calibration",
        metavar="NAME",
        help="kfold: save the fitted calibration under this name (letters, digits, - _ .;"
        " default: the marked file's stem); an existing one is replaced",
    )
    g.add_argument(
        "--calibrations",
        action="store_true",
        help="list the saved calibrations (name, grader, model, scale, marks, fitted, held-out)",
    )
    g.add_argument(
        "--fit",
        choices=("split", "kfold"),
        help="benchmark: split (a built-in's train/test; default there) or kfold (default for a"
        " file)",
    )
    g.add_argument(
        "--folds", action=Number, ge=2, le=100, default=5, help="kfold: number of folds (5)"
    )
    g.add_argument(
        "--seed", action=Number, ge=0, le=INT64_MAX, default=0, help="kfold: fold seed (0)"
    )
    g.add_argument(
        "--scale", default="0-5", help="benchmark FILE: the human scores' range LO-HI (0-5)"
    )
    g.add_argument(
        "--columns",
        help="benchmark FILE: column names, e.g. question=q,reference=ref,answer=ans,score=mark"
        " (also id=, fold=: fixed folds)",
    )
    g.add_argument(
        "--also",
        action="append",
        choices=GRADERS,
        default=[],
        help="kfold: a further grader to fit and combine (repeatable)",
    )
    g.add_argument(
        "--limit",
        action=Number,
        ge=1,
        le=INT64_MAX,
        help="benchmark: a seeded sample of N items per split",
    )
    g.add_argument(
        "--data", type=Path, help="benchmark data folder (default: ../shared/data/grading)"
    )
    g.add_argument("--question", help="grade one answer: the question")
    g.add_argument("--reference", help="grade one answer: the reference answer")
    g.add_argument("--candidate", help="grade one answer: the candidate answer")
    g.add_argument(
        "--format",
        choices=("text", "md", "json", "csv"),
        default="text",
        help="report format (on stdout, or in -o's file)",
    )
    g.add_argument("-o", "--output", type=Path, help="write the report to this file")
    g.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    g.add_argument("--tui", action="store_true", help="open the Grade (or Benchmark) screen")
    g.add_argument(
        "--strict",
        action="store_true",
        help="stop at the answer file's first bad row (exit 2) instead of skipping it"
        " ([formats] strict = true)",
    )


def _items(args: argparse.Namespace, strict: bool = True) -> tuple[list[GradeItem], str | None]:
    one = (args.reference, args.candidate)
    if args.file is not None and any(v is not None for v in one):
        raise QuiztuiError("grade: give a FILE or --reference/--candidate, not both")
    if args.file is not None:
        from quiztui.core.quiz import load_report
        from quiztui.formats.answers import load_answers

        skipped: list[str] = []
        items = load_answers(args.file, strict=strict, skipped=skipped)
        for line in load_report(len(items), skipped):
            print(f"quiztui: {line}", file=sys.stderr)
        return items, str(args.file)
    if args.reference is None or args.candidate is None:
        raise QuiztuiError(
            "grade: give an answer FILE, --benchmark DATASET, or --reference and --candidate"
        )
    return [GradeItem("answer", args.question or "", args.reference, args.candidate)], None


def benchmark_dir(config: Config, args: argparse.Namespace | None = None) -> Path | None:
    if args is not None and args.data is not None:
        return Path(args.data)
    return Path(config.grade.data_dir).expanduser() if config.grade.data_dir else None


def cmd_grade(config: Config, args: argparse.Namespace) -> int:
    from quiztui.store import Store

    grader = args.grader or config.grade.grader
    if args.calibrations:
        from quiztui.cli.grade_fit import list_calibrations

        return list_calibrations(args.format)
    if args.benchmark:
        from quiztui.formats.benchmarks import DATASETS, load_benchmark

        if args.benchmark not in DATASETS or args.fit == "kfold":
            from quiztui.cli.grade_fit import cmd_kfold

            return cmd_kfold(config, args, grader)
    if args.save_calibration is not None:
        raise QuiztuiError("--save-calibration: only with --benchmark FILE|NAME --fit kfold")
    if args.benchmark:
        # A built-in benchmark's train/test split: --calibration is the raw → 0-5 map's kind.
        bench = load_benchmark(args.benchmark, benchmark_dir(config, args), limit=args.limit)
        calibration = args.calibration or config.grade.calibration
        if calibration not in CALIBRATIONS:
            raise QuiztuiError(
                f"--calibration {calibration!r}: a benchmark takes {' or '.join(CALIBRATIONS)}"
            )
        if args.tui:
            return _tui(config, benchmark=(bench, grader, calibration))
        return run_to_end(_benchmark(config, bench, grader, calibration, args))
    calibrated = None
    if args.calibration is not None or args.file is not None:
        from quiztui.assemble.grade import answers_calibration

        calibrated = answers_calibration(config, args.calibration)
        if calibrated is not None:
            if args.grader is not None and args.grader != calibrated.grader:
                raise QuiztuiError(
                    f"{calibrated.label}: fitted for grader {calibrated.grader}, not"
                    f" {args.grader} (--calibration none grades without it)"
                )
            grader = calibrated.grader
    items, source = _items(args, args.strict or config.formats.strict)
    if args.tui:
        return _tui(config, items=(items, source, grader), calibrated=calibrated)
    with Store(config.db_path()) as store:
        return run_to_end(_grade(config, store, items, source, grader, args, calibrated))


async def _grade(
    config: Config,
    store: Any,
    items: list[GradeItem],
    source: str | None,
    grader: str,
    args: argparse.Namespace,
    calibrated: Any = None,
) -> int:
    from quiztui.pipeline.grade import GradeFinished, GradeStarted, ItemGraded
    from quiztui.report import grades as report
    from quiztui.report.progress import Progress

    progress = Progress(sys.stderr, unit="answers", missed="unscored")
    rows: list[tuple[GradeItem, Any]] = []
    label = ""
    summary = None
    unscored = requests = tokens_in = tokens_out = 0
    async for event in grade_events(config, store, items, source, grader):
        if isinstance(event, GradeStarted):
            label = event.judge_label
            print(f"grading {event.items} answers with {grader} · {label}", file=sys.stderr)
            if calibrated is not None:
                print(f"applying {calibrated.label}", file=sys.stderr)
        elif isinstance(event, ItemGraded):
            rows.append((event.item, event.outcome))
            o = event.outcome
            unscored += not o.scored
            requests += o.attempts if grader in LLM_GRADERS else 0
            tokens_in += o.tokens_in
            tokens_out += o.tokens_out
            progress.update(
                len(rows) - unscored, unscored, len(items), requests, 0, tokens_in, tokens_out
            )
        elif isinstance(event, GradeFinished):
            summary = event.summary
            progress.finished(summary)
    order = {item.id: i for i, item in enumerate(items)}
    rows.sort(key=lambda r: order[r[0].id])
    if calibrated is not None:
        from quiztui.cli.grade_fit import calibrated_report

        text = calibrated_report(calibrated, rows, summary, label, args.format)
    elif args.format == "json":
        text = report.grades_json(rows, summary, label)
    elif args.format == "csv":
        text = report.grades_csv(rows)
    elif args.format == "md":
        text = report.grades_markdown(rows, summary, label)
    else:
        text = _grades_text(rows, summary)
    write_report(text, args.output, fmt=args.format, raw_csv=args.raw_csv)
    if summary is not None and summary.total and not summary.scored:
        # Every answer unscored (a dead judge, replies it could not read): not a result.
        print(
            f"quiztui: error: no answer was scored ({summary.unscored} of {summary.total}"
            " unscored; their reasons are in the report)",
            file=sys.stderr,
        )
        return NOTHING_SCORED
    return 0


def _grades_text(rows: list[tuple[GradeItem, Any]], summary: Any) -> str:
    from quiztui.report.grades import fact_text, summary_lines
    from quiztui.report.text import text_table

    table = [
        {
            "id": item.id,
            "score": "—" if o.raw is None else f"{o.raw:.3g}",
            "label": o.label,
            "candidate": _clip(item.candidate, 40),
            "reasoning": _clip(o.reasoning if o.scored else f"UNSCORED: {o.unscored}", 70),
        }
        for item, o in rows
    ]
    out = text_table(table)
    for item, o in rows:
        if o.facts:
            out += f"\n{item.id} facts ({o.label}):\n" + "".join(
                f"  {fact_text(f)}\n" for f in o.facts
            )
    if summary is not None:
        out += "\n" + "\n".join(summary_lines(summary)) + "\n"
    return out


def _clip(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


async def _benchmark(
    config: Config, bench: Any, grader: str, calibration: str, args: argparse.Namespace
) -> int:
    from quiztui.pipeline.grade import BenchmarkScored, GradeFinished, GradeStarted, ItemGraded
    from quiztui.report import grades as report
    from quiztui.report.progress import Progress
    from quiztui.store import Store

    total = len(bench.train) + len(bench.test)
    progress = Progress(sys.stderr, unit="pairs", missed="unscored")
    done = unscored = 0
    label = ""
    with Store(config.db_path()) as store:
        async for event in benchmark_events(config, store, bench, grader, calibration):
            if isinstance(event, GradeStarted):
                label = event.judge_label
                print(
                    f"benchmark {bench.name}: {len(bench.train)} train + {len(bench.test)} test"
                    f" pairs · {grader} · {label}",
                    file=sys.stderr,
                )
            elif isinstance(event, ItemGraded):
                done += 1
                unscored += not event.outcome.scored
                progress.update(done - unscored, unscored, total, 0, 0, 0, 0)
            elif isinstance(event, GradeFinished):
                s = event.summary
                progress.finished(s)
            elif isinstance(event, BenchmarkScored):
                result = event.result
    if args.format == "json":
        text = report.benchmark_json(result, label)
    elif args.format == "md":
        text = report.benchmark_markdown(result, label)
    elif args.format == "csv":
        raise QuiztuiError("grade --benchmark: --format csv is not available (text, md or json)")
    else:
        text = report.benchmark_text(result, label)
    write_report(text, args.output)
    return 0


def _tui(config: Config, **what: Any) -> int:
    """The Grade screen (``items=(items, source, grader)``, ``calibrated``: a saved calibration
    whose scores it shows beside the raw ones) or the Benchmark screen
    (``benchmark=(bench, grader, calibration)``), over the same event streams as the CLI."""
    from quiztui.assemble.grade import grade_calibrations
    from quiztui.store import Store
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.benchmark import BenchmarkScreen
    from quiztui.tui.screens.grade import GradeScreen, calibration_options

    with Store(config.db_path()) as store:
        home: GradeScreen | BenchmarkScreen
        if "benchmark" in what:
            bench, grader, calibration = what["benchmark"]

            def start_benchmark() -> AsyncIterator[Any]:
                return benchmark_events(config, store, bench, grader, calibration)

            home = BenchmarkScreen(
                start_benchmark,
                dataset=bench.name,
                grader=grader,
                calibration=calibration,
                train=len(bench.train),
                test=len(bench.test),
                flush_interval=config.ui.flush_interval,
            )
        else:
            items, source, grader = what["items"]
            # The calibration given (or configured) and the picker over the saved ones.
            calibrations = grade_calibrations(what.get("calibrated"))

            def start_grading(batch: list[GradeItem], chosen: str) -> AsyncIterator[Any]:
                # The loaded file keeps its name as the run's source; a single answer has none.
                return grade_events(
                    config, store, batch, source if batch == items else None, chosen
                )

            home = GradeScreen(
                items,
                start_grading,
                grader=grader,
                source=source,
                flush_interval=config.ui.flush_interval,
                **calibration_options(calibrations),
            )
        GradeApp(home, theme_name=config.ui.theme).run()
    return 0
