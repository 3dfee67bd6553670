"""``quiztui runs``: the run history — list, show one run's report, compare two runs.

``quiztui runs``                 a table of the newest runs of every kind: vet, calibrate, panel,
                                 grade, review, robustness, generate (``--kind``, ``--quiz``,
                                 ``--limit``)
``quiztui runs show ID``         the run's report (Markdown by default), as ``vet`` prints it
``quiztui runs show kfold:N``    a k-fold fit's fold table, as ``grade --benchmark FILE --fit
                                 kfold`` printed it (text by default; ``--format md|json``)
``quiztui runs compare A B``     verdict agreement, Cohen's κ and the questions they disagree on
``quiztui runs --tui``           the Runs screen on its own (``h`` in the vet app opens it too)

Unknown ids and runs of different quiz versions are ``QuiztuiError`` (exit 2).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from quiztui.cli._args import Parents, help_for
from quiztui.cli.flags import INT64_MAX, Number
from quiztui.config import Config
from quiztui.core import json_text
from quiztui.core.compare import Comparison
from quiztui.core.figures import INCOMPLETE, is_partial, run_state_text
from quiztui.core.terminal import RAW_CSV_HELP
from quiztui.errors import ConfigError, QuiztuiError
from quiztui.store.history import KFOLD, KINDS, RUNS_TABLE_KINDS, listing_key
from quiztui.store.runs import RunListing

DASH = "—"
LIST_BADGES = ("good", "questionable", "poor")
BADGE_ORDER = ("good", "questionable", "poor", "incomplete", "pending")


class RunRef(Number):
    """``runs show``'s run: an id of the ``runs`` table (vet, calibrate, panel), or ``kfold:N``
    (a k-fold fit); the number is bounded as every run id is. Sets ``run_kind`` ("" or "kfold")."""

    SHOWN = (KFOLD,)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        kind, sep, number = str(values).partition(":")
        if not sep:
            kind, number = "", str(values)
        elif kind not in self.SHOWN:
            raise ConfigError(
                f"{self.metavar or self.dest.upper()} {values}: runs show takes a run id or"
                f" {', '.join(f'{k}:N' for k in self.SHOWN)} (open other kinds with quiztui runs"
                " --tui)"
            )
        try:
            super().__call__(parser, namespace, number, option_string)
        except ConfigError as exc:  # name the run as it was typed: "RUN_ID kfold:0: …"
            raise ConfigError(str(exc).replace(f" {number}:", f" {values}:", 1)) from None
        namespace.run_kind = kind


def register(sub: Any, parents: Parents) -> None:
    common = parents.common
    runs = sub.add_parser("runs", parents=[common], help=help_for("runs"))
    runs.set_defaults(handler=cmd_runs)
    runs.add_argument("--db", type=Path, help="SQLite run store")
    runs.add_argument("--kind", choices=KINDS, help="only runs of a kind")
    runs.add_argument("--quiz", type=Path, help="only runs of this quiz file (same content)")
    runs.add_argument(
        "--limit",
        action=Number,
        ge=1,
        le=INT64_MAX,
        default=50,
        help="newest N runs (default 50)",
    )
    runs.add_argument("--tui", action="store_true", help="open the Runs screen")
    runs_sub = runs.add_subparsers(dest="runs_command")
    # --db after the subcommand too; SUPPRESS keeps a --db given before it.
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--db", type=Path, default=argparse.SUPPRESS, help="SQLite run store")
    show = runs_sub.add_parser("show", parents=[common, db], help="print a stored run's report")
    show.add_argument("run_id", action=RunRef, ge=1, le=INT64_MAX, help="ID or kfold:N")
    show.add_argument(
        "--format",
        choices=("md", "json", "csv", "text"),
        help="md (a run's default), json, csv; text (a kfold fit's default)",
    )
    show.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    compare = runs_sub.add_parser(
        "compare", parents=[common, db], help="compare two runs of the same quiz"
    )
    compare.add_argument("run_a", action=Number, ge=1, le=INT64_MAX, help="the first vet run's id")
    compare.add_argument("run_b", action=Number, ge=1, le=INT64_MAX, help="the second vet run's id")
    compare.add_argument("--json", action="store_true", help="machine-readable output")


def cmd_runs(config: Config, args: argparse.Namespace) -> int:
    command = getattr(args, "runs_command", None)
    if command == "show":
        if getattr(args, "run_kind", "") == KFOLD:
            return cmd_show_kfold(config, args.run_id, args.format or "text")
        if args.format == "text":
            raise QuiztuiError(
                "runs show: a run's report is md, json or csv (text is a kfold fit's)"
            )
        return cmd_show(config, args.run_id, args.format or "md", raw_csv=args.raw_csv)
    if command == "compare":
        return cmd_compare(config, args.run_a, args.run_b, as_json=args.json)
    if getattr(args, "tui", False):
        return runs_tui(config)
    return cmd_list(config, args)


# -- list ---------------------------------------------------------------------------------------


def when(timestamp: float) -> str:
    return time.strftime("%m-%d %H:%M", time.localtime(timestamp))


def cost_text(listing: RunListing) -> str:
    """The run's cost in the reports' wording (core/figures.cost_text); — when none is stored
    or no price is known (the column has no room for the reason)."""
    from quiztui.core.figures import cost_text as wording

    if listing.simulated:
        return wording(None, simulated=True)
    return DASH if listing.cost is None else wording(listing.cost)


def badge_triplet(listing: RunListing) -> str:
    """good/questionable/poor from the stored summary; — for a run that stored none, and for
    grade, review and robustness runs (badges are a vet run's)."""
    if not listing.has_summary or listing.kind not in RUNS_TABLE_KINDS:
        return DASH
    return "/".join(str(listing.badge_counts.get(b, 0)) for b in LIST_BADGES)


WIDTH = 80  # every line of `quiztui runs` fits a standard terminal
INDENT = " " * 15  # the second line of a run: under the date
LIST_HEADER = (
    f"{'run':>13}  {'date':<11} {'kind':<10} {'status':<13} {'qs':>4} {'good/q/p':>8}"
    f" {'unj':>4} {'cost':>8}"
)


def listing_line(r: RunListing) -> str:
    """One run in lines of at most 80 columns: its id as ``runs show`` takes it (``kind:N``
    beside the vet/calibrate/panel sequence, so two kinds never show the same bare id), date,
    kind, status and counts; under it the quiz and the judge; a partial run's state last, in
    the wording of the TUI and the reports (core/figures.run_state_text)."""
    status = INCOMPLETE if is_partial(r.status, r.not_run) else r.status
    first = (
        f"{_clip(listing_key(r), 13):>13}  {when(r.created_at):<11} {r.kind:<10}"
        f" {_clip(status, 13):<13} {r.questions:>4} {badge_triplet(r):>8} {r.unjudged:>4}"
        f" {cost_text(r):>8}"
    )
    room = WIDTH - len(INDENT)
    quiz = _clip(r.quiz_title, room // 2)
    # the simulated judge by its settings, as the Runs screen names it (its label is a sentence)
    judge = f"SIMULATED {r.model.removeprefix('simulated-')}" if r.simulated else r.judge_label
    lines = [first, INDENT + _clip(f"{quiz} · {' '.join(judge.split())}", room)]
    if is_partial(r.status, r.not_run):
        lines.append(INDENT + _clip(run_state_text(r.status, r.not_run), room))
    return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())  # quiz titles are untrusted: one line, no control characters
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= width else text[: width - 1] + "…"


def cmd_list(config: Config, args: argparse.Namespace) -> int:
    from quiztui.store import Store
    from quiztui.store.history import run_history

    quiz_hash = None
    if getattr(args, "quiz", None) is not None:
        from quiztui.formats import load_quiz

        # As vet loaded it: the items that read well unless [formats] strict.
        quiz_hash = load_quiz(args.quiz, strict=config.formats.strict).content_hash()
    limit = getattr(args, "limit", 50)
    if limit < 1:
        raise QuiztuiError(f"--limit must be at least 1, got {limit}")
    with Store(config.db_path()) as store:
        listings = run_history(store, limit, kind=getattr(args, "kind", None), quiz_hash=quiz_hash)
        if not listings:
            print(f"no runs stored in {config.db_path()}", file=sys.stderr)
        else:
            print(LIST_HEADER)
            for listing in listings:
                print(listing_line(listing))
        from quiztui.cli.batch import print_pending

        print_pending(store, sys.stdout)  # provider batches submitted and not yet collected
    return 0


# -- show ---------------------------------------------------------------------------------------


def cmd_show(config: Config, run_id: int, fmt: str, *, raw_csv: bool = False) -> int:
    """What ``quiztui report RUN_ID --format FMT`` prints: one code path (report/stored)."""
    from quiztui.report.stored import stored_report
    from quiztui.store import Store

    with Store(config.db_path()) as store:
        report = stored_report(config, store, run_id, fmt, raw_csv=raw_csv)
    for note in report.notes:
        print(f"quiztui: {note}", file=sys.stderr)
    sys.stdout.write(report.text)
    return 0


def cmd_show_kfold(config: Config, fit_id: int, fmt: str) -> int:
    """A stored k-fold fit's report, as the run printed it; a partial fit says so on stderr."""
    from quiztui.pipeline.history import load_kfold
    from quiztui.report import grade_fit as report
    from quiztui.report.writers import write_report
    from quiztui.store import Store

    if fmt == "csv":
        raise QuiztuiError(
            f"runs show kfold:{fit_id}: --format csv is not available (text, md or json)"
        )
    with Store(config.db_path()) as store:
        stored = load_kfold(store, fit_id, replay=False)
    if stored.scored is None:
        state = stored.state or stored.record.status
        raise QuiztuiError(f"kfold:{fit_id} is {state}: it stored no fold table")
    if stored.state:
        print(f"quiztui: kfold:{fit_id} is {stored.state}", file=sys.stderr)
    render = {"json": report.kfold_json, "md": report.kfold_markdown}.get(fmt, report.kfold_text)
    scored, record = stored.scored, stored.record
    text = render(scored.result, scored.scale, record.judge_label, record.calibration_path)
    write_report(text, None)
    return 0


# -- compare ------------------------------------------------------------------------------------


def _num(value: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _verdict(value: bool | None) -> str:
    return "unjudged" if value is None else "TRUE" if value else "FALSE"


def _letter(index: int | None) -> str:
    return DASH if index is None else chr(ord("A") + index) if index < 26 else str(index + 1)


def comparison_text(c: Comparison, quiz_title: str) -> str:
    """The comparison as a plain-text report (quiz text is untrusted: printed one line, literal)."""
    lines = [
        f"run {c.run_a} vs run {c.run_b} · {_clip(quiz_title, 60)}",
        f"  A  run {c.run_a}: {_clip(c.judge_a, 100)}",
        f"  B  run {c.run_b}: {_clip(c.judge_b, 100)}",
        f"questions {c.questions} · assertions {c.assertions} · judged by both {c.both_judged}"
        f" · left out (unjudged by either) {c.unjudged_pairs}",
        f"verdict agreement {_num(c.agreement)} ({c.agreed}/{c.both_judged})"
        f" · Cohen's kappa {_num(c.kappa)}"
        f" · badge agreement {_num(c.badge_agreement)} ({c.badges_agreed}/{c.questions})",
        f"  A TRUE/B TRUE {c.tt} · A TRUE/B FALSE {c.tf} · A FALSE/B TRUE {c.ft}"
        f" · A FALSE/B FALSE {c.ff}",
    ]
    for name, counts in (("A", c.badge_counts_a), ("B", c.badge_counts_b)):
        order = [b for b in BADGE_ORDER if b in counts] + sorted(set(counts) - set(BADGE_ORDER))
        shown = " · ".join(f"{k} {counts[k]}" for k in order)
        lines.append(f"  badges {name}: {shown or DASH}")
    if c.only_in_a or c.only_in_b:
        lines.append(
            f"not compared: {len(c.only_in_a)} question(s) only in A, {len(c.only_in_b)} only in B"
        )
    lines.append(f"disagreements: {len(c.disagreements)} question(s)")
    for d in c.disagreements:
        lines.append(f"  {_clip(d.question_id, 20)}  {_clip(d.text, 90)}")
        lines.append(
            f"      key {_letter(d.key)} · badge {d.badge_a} / {d.badge_b}"
            f" · suggested {_letter(d.suggested_a)} / {_letter(d.suggested_b)}"
        )
        for i, option in enumerate(d.options):
            mark = "  ≠" if i in d.differing_options else ""
            lines.append(
                f"      {_letter(i)} {_clip(option, 30):<30} A {_verdict(d.verdicts_a[i]):<8}"
                f" B {_verdict(d.verdicts_b[i]):<8}{mark}"
            )
    return "\n".join(lines) + "\n"


def comparison_dict(c: Comparison) -> dict[str, Any]:
    def num(value: float) -> float | None:
        return None if math.isnan(value) else value

    return {
        "run_a": c.run_a,
        "run_b": c.run_b,
        "judge_a": c.judge_a,
        "judge_b": c.judge_b,
        "questions": c.questions,
        "assertions": c.assertions,
        "both_judged": c.both_judged,
        "agreed": c.agreed,
        "agreement": num(c.agreement),
        "kappa": num(c.kappa),
        "confusion": {"tt": c.tt, "tf": c.tf, "ft": c.ft, "ff": c.ff},
        "badges_agreed": c.badges_agreed,
        "badge_agreement": num(c.badge_agreement),
        "badge_counts_a": c.badge_counts_a,
        "badge_counts_b": c.badge_counts_b,
        "only_in_a": list(c.only_in_a),
        "only_in_b": list(c.only_in_b),
        "disagreements": [
            {
                "question_id": d.question_id,
                "text": d.text,
                "options": list(d.options),
                "key": d.key,
                "badge_a": d.badge_a,
                "badge_b": d.badge_b,
                "suggested_a": d.suggested_a,
                "suggested_b": d.suggested_b,
                "verdicts_a": list(d.verdicts_a),
                "verdicts_b": list(d.verdicts_b),
                "differing_options": list(d.differing_options),
            }
            for d in c.disagreements
        ],
    }


def cmd_compare(config: Config, run_a: int, run_b: int, *, as_json: bool = False) -> int:
    from quiztui.pipeline.history import compare_stored
    from quiztui.store import Store

    with Store(config.db_path()) as store:
        result = compare_stored(store, run_a, run_b)
    for loaded in (result.a, result.b):
        if loaded.note:
            print(f"quiztui: {loaded.note}", file=sys.stderr)
    if as_json:
        print(json_text.dumps(comparison_dict(result.comparison), indent=2))
    else:
        sys.stdout.write(comparison_text(result.comparison, result.a.record.quiz_title))
    return 0


# -- TUI ----------------------------------------------------------------------------------------


def runs_tui(config: Config) -> int:
    from quiztui.assemble.grade import configured_calibrations
    from quiztui.pipeline.history import StoreHistory
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.runs import RunsScreen

    home = RunsScreen(
        StoreHistory(config.db_path()), calibrations=lambda: configured_calibrations(config)
    )
    GradeApp(home, theme_name=config.ui.theme, title="quiztui runs").run()
    return 0


__all__ = ["register", "cmd_runs", "comparison_dict", "comparison_text"]
