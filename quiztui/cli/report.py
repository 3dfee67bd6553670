"""``quiztui report RUN_ID``: the report of a stored vet run, in any report format, again.

The run's summary is read back from the store (``summary_from_dict``), so a report can be made
long after the run, in another format, with no judge and no network. When the quiz file the run
judged is still where it was and unchanged (same content hash), the report also lists its
not-judged items and its lint findings, as the report written at the end of ``quiztui vet`` does.

Exit codes: 0 the report was written; 2 no such run, a run with no summary (it never finished a
first pass), no run store, or an unwritable output file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from quiztui.cli._args import Parents, help_for
from quiztui.cli.flags import INT64_MAX, Number
from quiztui.config import Config
from quiztui.errors import QuiztuiError
from quiztui.report.writers import EXTENSIONS, FORMATS, RAW_CSV_HELP


def register(sub: Any, parents: Parents) -> None:
    common = parents.common
    p = sub.add_parser(
        "report",
        parents=[common],
        help=help_for("report"),
        description="Write the report of a stored vet run. Without --format the format follows"
        " the -o extension ("
        + ", ".join(f"{ext} → {fmt}" for ext, fmt in EXTENSIONS.items())
        + "); otherwise Markdown.",
        epilog="Exit codes: 0 written; 2 unknown run, run without a summary, or bad output path.",
    )
    p.set_defaults(handler=cmd_report)
    p.add_argument(
        "run_id",
        action=Number,
        ge=1,
        le=INT64_MAX,
        metavar="RUN_ID",
        help="the run's id (see `quiztui runs`)",
    )
    p.add_argument("--format", choices=tuple(FORMATS), help="report format (default: from -o)")
    p.add_argument("-o", "--output", type=Path, help="write the report to this file")
    p.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    p.add_argument("--db", type=Path, help="SQLite run store")


def _extras(config: Config, record: Any) -> Any:
    """Not-judged items and lint of the run's quiz, when its file is still there unchanged."""
    from quiztui.assemble.common import lint_report
    from quiztui.formats import load_quiz
    from quiztui.report.extras import ReportExtras

    extras = ReportExtras(created_at=record.created_at)
    if not record.quiz_path or not Path(record.quiz_path).is_file():
        return extras
    try:
        quiz = load_quiz(record.quiz_path, strict=config.formats.strict)  # as vet loaded it
    except QuiztuiError:
        return extras  # the file changed into something unreadable: report the run alone
    if quiz.content_hash() != record.quiz_hash:
        return extras
    return ReportExtras(
        unjudged=quiz.unjudged,
        lint=lint_report(config, quiz),
        created_at=record.created_at,
    )


def cmd_report(config: Config, args: argparse.Namespace) -> int:
    from dataclasses import replace

    from quiztui.assemble.review_desk import decisions_for, run_quiz
    from quiztui.pipeline.summary import summary_from_dict
    from quiztui.report.writers import format_for, render_report, write_report
    from quiztui.store import Store

    db = config.db_path()
    if not Path(db).is_file():
        raise QuiztuiError(f"{db}: no run store here (run `quiztui vet` first, or pass --db)")
    with Store(db) as store:
        record = store.get_run(args.run_id)  # StoreError (exit 2) names an unknown id
        decisions = decisions_for(store, run_quiz(store, args.run_id))  # the review desk's
    if record.summary is None:
        raise QuiztuiError(
            f"run {args.run_id} ({record.status}) has no summary to report: it never finished"
            f" a first pass (resume it with `quiztui vet --resume {args.run_id}`)"
        )
    try:
        summary = summary_from_dict(record.summary)
    except (KeyError, TypeError, ValueError) as exc:
        raise QuiztuiError(f"run {args.run_id}: its stored summary is unreadable: {exc}") from None
    fmt = format_for(args.output, args.format)
    extras = replace(_extras(config, record), decisions=decisions)
    report = render_report(summary, fmt, extras, raw_csv=args.raw_csv)
    write_report(report, args.output)
    return 0
