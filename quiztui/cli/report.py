"""``quiztui report RUN_ID``: the report of a stored vet run, in any report format, again.

The report is ``report/stored.stored_report``'s, the same as ``quiztui runs show N`` and the
TUI's export: the stored summary (a run that stored none rebuilt from its verdicts, said on
stderr), the review desk's decisions and, when the quiz file is unchanged, its not-judged items
and lint findings. No judge, no network.

Exit codes: 0 the report was written; 2 no such run, no run store, or an unwritable output file.
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


def cmd_report(config: Config, args: argparse.Namespace) -> int:
    import sys

    from quiztui.report.stored import stored_report
    from quiztui.report.writers import format_for, write_report
    from quiztui.store import Store

    db = config.db_path()
    if not Path(db).is_file():
        raise QuiztuiError(f"{db}: no run store here (run `quiztui vet` first, or pass --db)")
    fmt = format_for(args.output, args.format)
    with Store(db) as store:  # StoreError (exit 2) names an unknown id
        report = stored_report(config, store, args.run_id, fmt, raw_csv=args.raw_csv)
    for note in report.notes:
        print(f"quiztui: {note}", file=sys.stderr)
    write_report(report.text, args.output)
    return 0
