"""``quiztui lint QUIZ``: item-writing flaws found offline, with no model.

The rules and their codes are in ``quiztui.core.lint`` (``CODES``, each with a severity and a
category: correctness or style). Which rules run: ``--select`` (codes or categories; default
``[lint] select``, the correctness category), plus ``--extend-select`` and ``[lint]
extend_select``, less ``--ignore`` (``--disable`` is its old name) and ``[lint] ignore``; a
question's own ``lint_ignore`` (GIFT ``// quiztui: ignore L106``, JSON ``lint_ignore``) accepts
its findings of those codes. ``[lint]`` also sets the thresholds and ``fail_on``. The report
(text table, Markdown, JSON, CSV or SARIF 2.1.0; ``--statistics``: the count per code) goes to
stdout or ``-o FILE``; the renderers are in ``quiztui.report.lint``.

Exit codes: 0 no finding at or above ``--fail-on`` (default ``[lint] fail_on``, warning); 1 there
is one; 2 bad input (an unreadable or invalid quiz, an unknown code or category in a flag, the
config or the quiz's ``lint_ignore``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quiztui.assemble.common import lint_report
from quiztui.cli._args import COLUMNS_HELP, STRICT_HELP, Parents, help_for
from quiztui.config import Config
from quiztui.core.lint import FAIL_ON as LINT_FAIL_ON
from quiztui.errors import ConfigError
from quiztui.report.lint import FORMATS, STATISTICS_FORMATS, report_text
from quiztui.report.writers import RAW_CSV_HELP, write_report

FAIL_ON = LINT_FAIL_ON
__all__ = ["FAIL_ON", "FORMATS", "cmd_lint", "explain", "register", "report_text", "rule_flags"]
_RULES = "codes (L106) or categories (correctness, style, all); repeat, or comma-separate"


def register(sub: Any, parents: Parents) -> None:
    common = parents.common
    p = sub.add_parser(
        "lint",
        parents=[common],
        help=help_for("lint"),
        description="Lint a quiz without a model. Correctness rules (run by default): no key,"
        " ambiguous, repeated or near-duplicate options, the key in the stem, an empty stem,"
        " duplicate questions, one question answering another, leftover HTML. Style rules"
        " (--extend-select style, or --select all): all/none of the above, unemphasised"
        " negatives, long keys, short stems, key-position, longest-key and True/False"
        " patterns. A question accepts a finding in the quiz itself: a GIFT line"
        " '// quiztui: ignore L106' above it, a JSON/JSONL \"lint_ignore\" field.",
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
        help="print what a lint code finds, its category and why it has its severity"
        " ('all': every code; a category: its codes)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="report format (sarif: SARIF 2.1.0 for code-scanning tools)",
    )
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
        "--select",
        action="append",
        default=[],
        metavar="RULES",
        help=f"the rules to run instead of [lint] select (default: correctness): {_RULES}",
    )
    p.add_argument(
        "--extend-select",
        action="append",
        default=[],
        metavar="RULES",
        help=f"rules to run as well, e.g. --extend-select style: {_RULES}",
    )
    p.add_argument(
        "--ignore",
        "--disable",
        dest="ignore",
        action="append",
        default=[],
        metavar="RULES",
        help=f"rules to leave out (wins over select; --disable is its old name): {_RULES}",
    )
    p.add_argument(
        "--statistics",
        action="store_true",
        help="print the number of findings per code instead of the findings",
    )


def rule_flags(values: list[str], flag: str) -> list[str]:
    """A rule flag's values split at commas; an unknown code or category is an error naming it."""
    from quiztui.core.lint import check_selectors, split_selectors

    try:
        return list(check_selectors(split_selectors(values)))
    except ConfigError as exc:
        raise ConfigError(f"{flag}: {exc}") from None


def explain(code: str) -> str:
    """Each named code's severity, category, name, what it finds and why it has that severity."""
    from quiztui.core.lint import CODES, codes_of

    try:
        wanted = sorted(codes_of([code]))
    except ConfigError as exc:
        raise ConfigError(f"--explain: {exc}") from None
    blocks = []
    for name in wanted:
        info = CODES[name]
        blocks.append(
            f"{info.code} {info.name} ({info.severity}, {info.category}): {info.summary}\n"
            f"  {info.rationale}"
        )
    return "\n".join(blocks) + "\n"


def cmd_lint(config: Config, args: argparse.Namespace) -> int:
    from quiztui.formats import load_quiz
    from quiztui.report.lint import RENDER, artifact_uri, report_sarif, statistics

    if args.explain is not None:
        write_report(explain(args.explain), args.output)
        return 0
    if args.quiz is None:
        raise ConfigError("lint: a quiz file is needed (or --explain CODE)")
    select = rule_flags(args.select, "--select")
    extend = rule_flags(args.extend_select, "--extend-select")
    ignore = rule_flags(args.ignore, "--ignore")
    if args.statistics and args.format not in STATISTICS_FORMATS:
        raise ConfigError(
            f"--statistics: --format {args.format} is not a statistics format"
            f" ({', '.join(STATISTICS_FORMATS)})"
        )
    fail_on = args.lint_fail_on or config.lint.fail_on
    from quiztui.cli._quiz import quiz_columns

    columns = quiz_columns(config, args.columns)
    quiz = load_quiz(args.quiz, strict=args.strict or config.formats.strict, columns=columns)
    for line in quiz.load_report():
        print(f"quiztui: {line}", file=sys.stderr)
    report = lint_report(config, quiz, ignore, select=select, extend_select=extend)
    if args.statistics:
        text = statistics(report, quiz, fail_on, args.format)
    elif args.format == "sarif":
        text = report_sarif(report, quiz, fail_on, uri=artifact_uri(args.quiz))
    else:
        text = RENDER[args.format](report, quiz, fail_on)
    write_report(text, args.output, fmt=args.format, raw_csv=args.raw_csv)
    return 1 if report.fails(fail_on) else 0
