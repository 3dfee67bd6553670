"""``quiztui lint QUIZ``: item-writing flaws found offline, with no model.

The rules and their codes are in ``quiztui.core.lint`` (``CODES``); ``[lint]`` in the config sets
the thresholds, the codes to skip (``disable``) and ``fail_on``. The report (text table, Markdown,
JSON or CSV) goes to stdout or ``-o FILE``.

Exit codes: 0 no finding at or above ``--fail-on`` (default ``[lint] fail_on``, warning); 1 there
is one; 2 bad input (an unreadable or invalid quiz, an unknown code in ``--disable`` or the
config).
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path
from typing import Any

from quiztui.assemble.common import lint_report
from quiztui.cli._args import COLUMNS_HELP, STRICT_HELP, Parents, help_for
from quiztui.config import Config
from quiztui.core.lint import FAIL_ON as LINT_FAIL_ON
from quiztui.core.quiz import Quiz
from quiztui.errors import ConfigError
from quiztui.report import json_text
from quiztui.report.writers import RAW_CSV_HELP, md_cell, write_report

FORMATS = ("text", "md", "json", "csv")
FAIL_ON = LINT_FAIL_ON
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def register(sub: Any, parents: Parents) -> None:
    common = parents.common
    p = sub.add_parser(
        "lint",
        parents=[common],
        help=help_for("lint"),
        description="Lint a quiz without a model: ambiguous or duplicate options, the key in the"
        " stem, all/none of the above, unemphasised negatives, long keys, key-position and"
        " longest-key bias, True/False imbalance, duplicate questions, one question answering"
        " another, short stems, leftover HTML.",
        epilog="Exit codes: 0 no finding at or above --fail-on; 1 there is one; 2 bad input or"
        " configuration.",
    )
    p.set_defaults(handler=cmd_lint)
    p.add_argument(
        "quiz",
        type=Path,
        nargs="?",
        help="quiz file: Quizaic JSON/JSONL, Open Trivia DB JSON, CSV (question,correct,"
        "distractor… or one column per option: question,A,B,C,D,answer), GIFT (.gift), Aiken"
        " (.aiken), Moodle XML (.xml); by extension, .txt and .json by content; not needed with"
        " --explain",
    )
    p.add_argument(
        "--explain",
        metavar="CODE",
        help="print what a lint code finds and why it has its severity ('all': every code)",
    )
    p.add_argument("--format", choices=FORMATS, default="text", help="report format")
    p.add_argument(
        "--strict",
        action="store_true",
        help=STRICT_HELP,
    )
    p.add_argument(
        "--columns",
        metavar="ROLE=NAME,...",
        help=COLUMNS_HELP + " ([import])",
    )
    p.add_argument("-o", "--output", type=Path, help="write the report to this file")
    p.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    p.add_argument(
        "--fail-on",
        dest="lint_fail_on",
        choices=FAIL_ON,
        help="exit 1 when a finding is at least this severe (default: [lint] fail_on, warning)",
    )
    p.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="CODE",
        help="skip a lint code (repeat, or comma-separate: --disable L106,L107)",
    )


def disabled_codes(values: list[str]) -> list[str]:
    """``--disable`` values split at commas; an unknown code is an error naming it."""
    from quiztui.core.lint import check_codes

    codes = [code for value in values for code in value.replace(",", " ").split()]
    try:
        return sorted(check_codes(codes))
    except ConfigError as exc:
        raise ConfigError(f"--disable: {exc}") from None


def explain(code: str) -> str:
    """Each named code's severity, name, what it finds and why it has that severity."""
    from quiztui.core.lint import CODES, check_codes

    wanted = sorted(CODES) if code.strip().lower() == "all" else None
    if wanted is None:
        try:
            wanted = sorted(check_codes([code]))
        except ConfigError as exc:
            raise ConfigError(f"--explain: {exc}") from None
    blocks = []
    for name in wanted:
        info = CODES[name]
        blocks.append(
            f"{info.code} {info.name} ({info.severity}): {info.summary}\n  {info.rationale}"
        )
    return "\n".join(blocks) + "\n"


def cmd_lint(config: Config, args: argparse.Namespace) -> int:
    from quiztui.formats import load_quiz

    if args.explain is not None:
        write_report(explain(args.explain), args.output)
        return 0
    if args.quiz is None:
        raise ConfigError("lint: a quiz file is needed (or --explain CODE)")
    extra = disabled_codes(args.disable)
    fail_on = args.lint_fail_on or config.lint.fail_on
    from quiztui.cli._quiz import quiz_columns

    columns = quiz_columns(config, args.columns)
    quiz = load_quiz(args.quiz, strict=args.strict or config.formats.strict, columns=columns)
    for line in quiz.load_report():
        print(f"quiztui: {line}", file=sys.stderr)
    report = lint_report(config, quiz, extra)
    render = {"text": report_text, "md": report_markdown, "json": report_json, "csv": report_csv}
    write_report(
        render[args.format](report, quiz, fail_on),
        args.output,
        fmt=args.format,
        raw_csv=args.raw_csv,
    )
    return 1 if report.fails(fail_on) else 0


# --- reports ---------------------------------------------------------------------------------


def _plain(text: str) -> str:
    """Untrusted text on one terminal line: whitespace collapsed, control characters escaped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", " ".join(text.split()))


def _where(quiz: Quiz) -> str:
    return _plain(quiz.source_path or quiz.title)


def _verdict(report: Any, fail_on: str) -> str:
    if fail_on == "never":
        return "fail-on never"
    return f"fail-on {fail_on}: {'FAILED' if report.fails(fail_on) else 'passed'}"


def report_text(report: Any, quiz: Quiz, fail_on: str) -> str:
    from quiztui.report.text import text_table

    rows = [
        {
            "id": f.question_id or "(quiz)",
            "line": "" if f.source_line is None else str(f.source_line),
            "code": f.code,
            "severity": f.severity,
            "message": _plain(f.message),
        }
        for f in report.findings
    ]
    out = text_table(rows) if rows else "no findings\n"
    disabled = f"; disabled {', '.join(sorted(report.disabled))}" if report.disabled else ""
    return out + f"\n{_where(quiz)}: {report.summary()}{disabled}; {_verdict(report, fail_on)}\n"


def report_markdown(report: Any, quiz: Quiz, fail_on: str) -> str:
    from quiztui.core.lint import CODES

    lines = [f"# quiztui lint: {md_cell(quiz.title)}", ""]
    lines.append(f"- Quiz: {md_cell(quiz.source_path or quiz.title)}")
    lines.append(f"- {md_cell(report.summary())}; {_verdict(report, fail_on)}")
    if report.disabled:
        lines.append(f"- Disabled: {', '.join(sorted(report.disabled))}")
    lines.append("")
    if report.findings:
        lines += ["| id | line | code | severity | message |", "|---|---|---|---|---|"]
        for f in report.findings:
            line = "" if f.source_line is None else str(f.source_line)
            lines.append(
                f"| {md_cell(f.question_id or '(quiz)')} | {line} | {f.code} {CODES[f.code].name}"
                f" | {f.severity} | {md_cell(f.message)} |"
            )
    else:
        lines.append("No findings.")
    return "\n".join(lines) + "\n"


def report_json(report: Any, quiz: Quiz, fail_on: str) -> str:
    from quiztui.core.lint import CODES

    body = {
        "quiz": {"title": quiz.title, "path": quiz.source_path, "format": quiz.format},
        "fail_on": fail_on,
        "failed": report.fails(fail_on),
        **report.to_dict(),
        "codes": {
            c.code: {"severity": c.severity, "name": c.name, "summary": c.summary}
            for c in CODES.values()
        },
    }
    return json_text.dumps(body, indent=2, ensure_ascii=False) + "\n"


def report_csv(report: Any, quiz: Quiz, fail_on: str) -> str:
    del quiz, fail_on
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["question_id", "source_line", "code", "name", "severity", "message"])
    for f in report.findings:
        w.writerow(
            [
                f.question_id or "",
                "" if f.source_line is None else f.source_line,
                f.code,
                f.name,
                f.severity,
                f.message,
            ]
        )
    return out.getvalue()
