"""``quiztui convert IN OUT``: a quiz from any format to any other.

Formats in: Quizaic JSON/JSONL, Open Trivia DB, CSV, Moodle GIFT, Aiken, Moodle XML (detected by
extension and content, or ``--from``); out: the same six (by OUT's extension, or ``--to``).
Items the output format cannot hold (an essay written as Aiken, several right answers written
as CSV, a calculated question written as GIFT) are left out, each named on stderr with its file,
line, type and why, then a count; the rest is written (exit 0). ``--strict`` refuses the whole
conversion instead (exit 2), as it refuses a bad input item. A cloze question written as GIFT
is left out (GIFT has no embedded answers) unless ``--gift-cloze`` asks for quiztui's own GIFT
extension. Images (``<img>`` with ``<file>`` attachments) cannot travel into GIFT, Aiken or the
flat formats: each such question says ``[image]`` where one was, and the questions are listed.

``--annotate`` writes the newest finished vet run of the quiz (matched by its content) into the
output: a ``// quiztui: badge=… confidence=…`` comment in GIFT, ``quiztui:badge=…`` tags in Moodle
XML. ``--fail-on SEVERITY`` lints the converted quiz too. Exit codes: 0 written (and no lint
finding at or above ``--fail-on``); 1 written, with lint findings at or above ``--fail-on``; 2 bad
input (unreadable quiz, unknown format, with ``--strict``, an item the output cannot
hold; no vet run to annotate from).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quiztui.cli._args import COLUMNS_HELP, Parents, help_for
from quiztui.config import Config
from quiztui.core.bank import Bank, bank_quiz, item_index, without_images
from quiztui.core.lint import FAIL_ON as LINT_FAIL_ON
from quiztui.core.question_mode import LETTERS
from quiztui.errors import QuiztuiError


def register(sub: Any, parents: Parents) -> None:
    common = parents.common
    p = sub.add_parser(
        "convert",
        parents=[common],
        help=help_for("convert"),
        description="Convert a quiz file to another format. Types the vet pipeline does not"
        " judge (essays, matching, numerical, ...) are kept when the output format can hold them.",
        epilog="Exit codes: 0 written; 1 written, with lint findings at or above --fail-on;"
        " 2 bad input (the message names file, line and field).",
    )
    p.set_defaults(handler=cmd_convert)
    p.add_argument(
        "input",
        type=Path,
        help="quiz file to read: Quizaic JSON/JSONL, Open Trivia DB JSON, CSV, GIFT, Aiken,"
        " Moodle XML; by extension, .txt and .json by content (or --from)",
    )
    p.add_argument("output", type=Path, help="file to write ('-' for stdout, with --to)")
    p.add_argument("--from", dest="from_format", metavar="FMT", help="input format name")
    p.add_argument(
        "--to",
        metavar="FMT",
        help="output format: quizaic, opentdb, csv, gift, aiken, moodle_xml (default: by extension)",
    )
    p.add_argument(
        "--annotate",
        action="store_true",
        help="write badges and confidence of the newest vet run (GIFT comments, Moodle XML tags)",
    )
    p.add_argument(
        "--drop-unsupported",
        action="store_true",
        help="(the default now) leave out items the output format cannot hold, each named",
    )
    p.add_argument(
        "--gift-cloze",
        action="store_true",
        help="write cloze (embedded answers) questions into GIFT as {1:SA:...} blanks: a quiztui"
        " extension that Moodle's GIFT importer does not read (default: leave them out)",
    )
    p.add_argument("--db", type=Path, help="SQLite run store (for --annotate)")
    p.add_argument(
        "--strict",
        action="store_true",
        help="stop at the input's first bad item, and refuse to convert when an item has no"
        " form in the output format (exit 2), instead of leaving it out ([formats] strict = true)",
    )
    p.add_argument(
        "--columns",
        metavar="ROLE=NAME,...",
        help=COLUMNS_HELP + " ([import])",
    )
    p.add_argument(
        "--fail-on",
        dest="convert_fail_on",
        choices=LINT_FAIL_ON,
        default="never",
        help="lint the converted quiz and exit 1 when a finding is at least this severe"
        " (default: never)",
    )


def annotations_for(bank: Bank, config: Config) -> dict[int, dict[str, str]]:
    """Item index -> annotation from the newest finished vet run of this quiz's content."""
    from quiztui.store import Store

    quiz = bank_quiz(bank)
    with Store(config.db_path()) as store:
        run = store.latest_vet_run(quiz.content_hash())
    if run is None or not run.summary:
        raise QuiztuiError(
            f"--annotate: no finished vet run of {bank.source_path} in {config.db_path()}"
            " (run `quiztui vet QUIZ --no-tui` first)"
        )
    out: dict[int, dict[str, str]] = {}
    for q in run.summary.get("questions", []):
        annotation = {
            "badge": str(q["badge"]),
            "k": f"{q['k']}/{len(q['options'])}",
            "confidence": f"{float(q['confidence']):.2f}",
        }
        suggested = q.get("suggested_option")
        if suggested is not None:
            annotation["likely"] = LETTERS[int(suggested)]
        annotation["run"] = str(run.id)
        out[item_index(str(q["question_id"]))] = annotation
    return out


def cmd_convert(config: Config, args: argparse.Namespace) -> int:
    from dataclasses import replace

    from quiztui.formats.bank_io import (
        known_input,
        load_bank,
        output_format,
        unsupported_items,
        write_bank,
    )

    if args.db:
        config = config.model_copy(
            update={"store": config.store.model_copy(update={"path": str(args.db)})}
        )
    if args.output != Path("-") and args.output.resolve() == args.input.resolve():
        raise QuiztuiError(f"{args.output}: the output would overwrite the input")
    if args.output == Path("-") and not args.to:
        raise QuiztuiError("writing to stdout: name the output format with --to")
    fmt = output_format(args.output, args.to)
    strict = args.strict or config.formats.strict
    from quiztui.cli._quiz import quiz_columns

    columns = quiz_columns(config, args.columns)
    bank = load_bank(args.input, known_input(args.from_format), strict=strict, columns=columns)
    for line in bank.load_report():
        print(f"quiztui: {line}", file=sys.stderr)
    annotations = annotations_for(bank, config) if args.annotate else None
    options = {"gift_cloze": bool(args.gift_cloze)}
    blocked = unsupported_items(bank, fmt, **options)
    if blocked and strict:
        lines = [f"{_where(args.input, bank, i)}: {why}" for i, why in blocked]
        raise QuiztuiError(
            f"{len(blocked)} item(s) cannot be written as {fmt} (without --strict they are left"
            " out):\n  " + "\n  ".join(lines)
        )
    if blocked:
        dropped = {i for i, _ in blocked}
        for i, why in blocked:
            print(f"quiztui: left out {_where(args.input, bank, i)}: {why}", file=sys.stderr)
        print(
            f"quiztui: left out {len(blocked)} of {len(bank.items)} item(s) that {fmt} cannot"
            " hold (--strict refuses the conversion instead)",
            file=sys.stderr,
        )
        kept = [i for i in range(len(bank.items)) if i not in dropped]
        if annotations is not None:
            annotations = {n: annotations[i] for n, i in enumerate(kept) if i in annotations}
        bank = replace(bank, items=tuple(bank.items[i] for i in kept))
    if fmt != "moodle_xml":
        bank, pictured = without_images(bank)
        if pictured:
            listed = ", ".join(_where(args.input, bank, i) for i in pictured[:10])
            more = f" and {len(pictured) - 10} more" if len(pictured) > 10 else ""
            print(
                f"quiztui: {len(pictured)} question(s) lost their images ({fmt} cannot carry"
                f" files; the text says [image] where one was): {listed}{more}",
                file=sys.stderr,
            )
    text = write_bank(bank, fmt, annotations, **options)
    if args.output == Path("-"):
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        print(
            f"wrote {len(bank.items)} item(s) as {fmt} to {args.output}"
            + (f" ({len(annotations)} annotated)" if annotations else ""),
            file=sys.stderr,
        )
    return lint_exit(config, bank, args.convert_fail_on)


def lint_exit(config: Config, bank: Bank, fail_on: str) -> int:
    """With ``--fail-on``: the converted quiz's lint findings on stderr, exit 1 at the threshold."""
    if fail_on == "never":
        return 0
    from quiztui.assemble.common import lint_report

    report = lint_report(config, bank_quiz(bank))
    for f in report.findings:
        where = f.question_id or "quiz"
        print(f"quiztui: lint {where} {f.code} {f.severity}: {f.message}", file=sys.stderr)
    print(f"quiztui: lint {report.summary()}", file=sys.stderr)
    return 1 if report.fails(fail_on) else 0


def _where(path: Path, bank: Bank, index: int) -> str:
    """``quiz.xml:120: item 7 (multichoiceset)``: file, line, item number and type."""
    item = bank.items[index]
    line = f":{item.line}" if item.line is not None else ""
    return f"{path}{line}: item {index + 1} ({item.type})"
