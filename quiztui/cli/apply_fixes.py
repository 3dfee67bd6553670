"""``quiztui apply-fixes RUN``: write the review desk's fixes into the quiz file of a vet run.

Every question of the quiz decided *fix* in the review desk (``quiztui QUIZ``, then ``o``) whose
key is not the chosen option yet gets that option as its key, in the file's own format; only the
fixed questions' items are rewritten and the file as it was is kept beside it as
``<file>.bak``. Decisions are found by each question's content hash, so a fix made while looking
at an earlier run of the same quiz counts, and a question edited since is left alone.

Exit codes: 0 written (or nothing to write, or ``--dry-run``); 2 no such run, no run store, no
quiz file, or a file that cannot be read or written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quiztui.cli._args import COLUMNS_HELP, Parents, help_for
from quiztui.cli.flags import INT64_MAX, Number
from quiztui.config import Config
from quiztui.errors import QuiztuiError


def register(sub: Any, parents: Parents) -> None:
    p = sub.add_parser(
        "apply-fixes",
        parents=[parents.common],
        help=help_for("apply-fixes"),
        description="Write the keys chosen in the review desk (fix decisions) into the quiz file"
        " of a vet run, in its own format, keeping the old file as <file>.bak.",
        epilog="Exit codes: 0 written or nothing to write; 2 unknown run, missing or unreadable"
        " quiz file.",
    )
    p.set_defaults(handler=cmd_apply_fixes)
    p.add_argument(
        "run_id",
        action=Number,
        ge=1,
        le=INT64_MAX,
        metavar="RUN",
        help="the vet run whose quiz file to fix (see `quiztui runs`)",
    )
    p.add_argument("quiz", nargs="?", type=Path, help="the quiz file (default: the run's own)")
    p.add_argument("--dry-run", action="store_true", help="list the fixes, write nothing")
    p.add_argument("--db", type=Path, help="SQLite run store")
    p.add_argument(
        "--columns", metavar="ROLE=NAME,...", help=COLUMNS_HELP + " (as the run read the file)"
    )


def cmd_apply_fixes(config: Config, args: argparse.Namespace) -> int:
    from quiztui.assemble.review_desk import apply_fixes, decisions_for
    from quiztui.cli._quiz import quiz_columns
    from quiztui.core.decisions import option_letter, pending_fixes
    from quiztui.formats import load_quiz
    from quiztui.formats.bank_io import load_bank
    from quiztui.store import Store

    columns = quiz_columns(config, args.columns)  # a CSV's roles, as the run read them
    db = config.db_path()
    if not Path(db).is_file():
        raise QuiztuiError(f"{db}: no run store here (run `quiztui vet` first, or pass --db)")
    with Store(db) as store:
        record = store.get_run(int(args.run_id))  # StoreError (exit 2) names an unknown id
        path = args.quiz or (Path(record.quiz_path) if record.quiz_path else None)
        if path is None:
            raise QuiztuiError(f"run {args.run_id} has no quiz path; pass the quiz file")
        if not path.is_file():
            raise QuiztuiError(f"{path}: the quiz file of run {args.run_id} is not there")
        # the questions as the vet screen reads them
        quiz = load_quiz(path, strict=False, columns=columns)
        decisions = decisions_for(store, quiz)
    fixes = pending_fixes(quiz, decisions)
    if not fixes:
        decided = sum(1 for d in decisions.values() if d.action == "fix")
        print(
            f"quiztui: no fix to apply to {path.name}"
            + (f" ({decided} fix(es) already in the file)" if decided else ""),
            file=sys.stderr,
        )
        return 0
    for question, key in fixes:
        line = f" (line {question.source_line})" if question.source_line else ""
        print(
            f"{question.id}{line}: key {option_letter(question.key)}"
            f" {question.options[question.key]!r} -> {option_letter(key)}"
            f" {question.options[key]!r}"
        )
    if args.dry_run:
        print(f"quiztui: {len(fixes)} fix(es) not written (--dry-run)", file=sys.stderr)
        return 0
    bank = load_bank(path, strict=False, columns=columns)  # skipped items keep their bytes
    try:
        applied = apply_fixes(bank, quiz, decisions)
    except OSError as exc:
        raise QuiztuiError(f"{path}: cannot write the fixes: {exc.strerror or exc}") from None
    assert applied is not None
    print(
        f"quiztui: wrote {len(applied.fixed)} fixed key(s) to {applied.path}"
        f" (backup: {applied.backup.name})",
        file=sys.stderr,
    )
    return 0
