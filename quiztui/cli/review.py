"""``quiztui rate QUIZ`` (``review`` until renamed): rate every question 1–5 on five criteria
(MIRROR).

- ``--mode direct``: one judge, one pass; ``--mode feedback`` (default, ``[review] mode``): two
  judges exchange strengths and flaws until their scores agree twice in a row or
  ``--max-iterations`` ratings were made (then *not converged*).
- Judge 2 is the configured judge with ``--judge2-model`` / ``[review] judge2_model`` (and
  ``judge2_base_url``) when set; the simulated provider's judge 2 is the simulated reviewer with the
  next seed, so the two disagree at first.
- ``--humans FILE`` (CSV/JSONL/JSON: question id, rater, the five criteria) adds Pearson r, exact
  match and the raters' Fleiss' κ per criterion, beside the paper's published GPT-4 figures.

Progress goes to stderr, the report (text, Markdown, JSON or CSV; ``-o FILE``) to stdout; ``--tui``
opens the Review screen. Exit codes: 0 done (unscored and unconverged questions are reported, not
failures), 2 bad input or configuration.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quiztui.assemble.review import StartReview, review_starter, settings
from quiztui.cli._args import Parents, help_for, quiz_arguments
from quiztui.cli._quiz import load_input
from quiztui.cli.flags import INT64_MAX, Number
from quiztui.cli.running import run_to_end
from quiztui.config import Config
from quiztui.core import json_text
from quiztui.core.quiz import Quiz
from quiztui.core.review import CRITERIA, MODES, SHORT
from quiztui.report.writers import RAW_CSV_HELP, write_report


def register(sub: Any, parents: Parents) -> None:
    common, judge = parents.common, parents.judge
    p = sub.add_parser(
        "rate",
        parents=[common, judge],
        help=help_for("rate"),
        description="Rate question quality (the MIRROR method: two judges exchange feedback)."
        " direct: one judge rates each"
        " question once; feedback: two judges exchange strengths and flaws until their scores"
        " agree on two consecutive iterations, or the iteration cap is reached.",
        epilog="Exit codes: 0 done (unscored and unconverged questions are reported);"
        " 2 bad input or configuration.",
    )
    p.set_defaults(handler=cmd_review)
    quiz_arguments(p)
    p.add_argument("--mode", choices=MODES, help="default: [review] mode (feedback)")
    p.add_argument(
        "--max-iterations",
        action=Number,
        key="review.max_iterations",
        metavar="N",
        help="feedback: iteration cap (default 5)",
    )
    p.add_argument("--judge2-model", metavar="MODEL", help="feedback: the second judge's model")
    p.add_argument("--judge2-base-url", metavar="URL", help="feedback: the second judge's URL")
    p.add_argument(
        "--humans",
        type=Path,
        metavar="FILE",
        help="human ratings (CSV/JSONL/JSON: question id, rater, the five criteria 1-5)",
    )
    p.add_argument(
        "--limit",
        action=Number,
        ge=1,
        le=INT64_MAX,
        metavar="N",
        help="review the first N questions only",
    )
    p.add_argument(
        "--format",
        choices=("text", "md", "json", "csv"),
        default="text",
        help="report format (on stdout, or in -o's file)",
    )
    p.add_argument("-o", "--output", type=Path, help="write the report to this file")
    p.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    p.add_argument("--tui", action="store_true", help="open the Review screen")


def review_config(config: Config, args: argparse.Namespace) -> Config:
    """The config with the review flags the user typed applied."""
    review = config.review.model_copy()
    if getattr(args, "mode", None):
        review.mode = args.mode
    if getattr(args, "max_iterations", None) is not None:
        review.max_iterations = args.max_iterations
    if getattr(args, "judge2_model", None):
        review.judge2_model = args.judge2_model
    if getattr(args, "judge2_base_url", None):
        review.judge2_base_url = args.judge2_base_url
    return config.model_copy(update={"review": review})


def cmd_review(config: Config, args: argparse.Namespace) -> int:
    from quiztui.pipeline.review import check_settings
    from quiztui.store import Store

    config = review_config(config, args)
    quiz = load_input(config, args)
    humans = None
    if args.humans is not None:
        from quiztui.formats.ratings import load_ratings, resolve

        humans = resolve(load_ratings(args.humans), quiz)
    mode = config.review.mode
    check_settings(settings(config, mode))  # bad settings fail here, before anything is sent
    source = str(args.humans) if args.humans is not None else None
    with Store(config.db_path()) as store:
        start = review_starter(config, store, limit=args.limit, humans=humans, humans_source=source)
        if args.tui:
            from quiztui.tui.review_app import ReviewApp
            from quiztui.tui.screens.review import ReviewScreen

            screen = ReviewScreen(
                quiz,
                start,
                mode=mode,
                low_score=config.review.low_score,
                limit=args.limit,
                flush_interval=config.ui.flush_interval,
            )
            ReviewApp(screen, theme_name=config.ui.theme).run()
            return 0
        return run_to_end(_headless(quiz, start, mode, args))


async def _headless(quiz: Quiz, start: StartReview, mode: str, args: argparse.Namespace) -> int:
    from quiztui.pipeline.review import (
        QuestionReviewed,
        ReviewFinished,
        ReviewRetried,
        ReviewStarted,
    )
    from quiztui.report.progress import Progress

    progress = Progress(sys.stderr, unit="questions", missed="unscored")
    started: ReviewStarted | None = None
    rows: list[QuestionReviewed] = []
    summary = None
    unscored = requests = retries = total = 0
    async for event in start(quiz, mode):
        if isinstance(event, ReviewStarted):
            started = event
            judges = event.judge_label + (f" ⇄ {event.judge2_label}" if event.judge2_label else "")
            cap = f", at most {event.max_iterations} iterations" if mode == "feedback" else ""
            print(
                f"reviewing {event.questions} questions ({mode}{cap}) · {judges}", file=sys.stderr
            )
            total = event.questions
        elif isinstance(event, ReviewRetried):
            retries += 1
        elif isinstance(event, QuestionReviewed):
            rows.append(event)
            unscored += not event.outcome.scored
            requests += sum(it.attempts for it in event.outcome.iterations)
            progress.update(len(rows) - unscored, unscored, total, requests, retries, 0, 0)
        elif isinstance(event, ReviewFinished):
            summary = event.summary
            progress.finished(summary)
    assert started is not None and summary is not None
    rows.sort(key=lambda r: r.position)
    if args.format == "json":
        text = report_json(rows, summary, started)
    elif args.format == "csv":
        text = report_csv(rows)
    elif args.format == "md":
        text = report_markdown(rows, summary, started)
    else:
        text = report_text(rows, summary, started)
    write_report(text, args.output, fmt=args.format, raw_csv=args.raw_csv)
    if summary.stopped:
        print(f"quiztui: error: {summary.stopped}", file=sys.stderr)
        return 2
    return 0


# --- reports ---------------------------------------------------------------------------------


def _clip(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _judges(started: Any) -> list[str]:
    lines = [f"judge 1: {started.judge_label}"]
    if started.judge2_label:
        lines.append(f"judge 2: {started.judge2_label}")
    return lines


def _score_cells(scores: Sequence[int] | None) -> dict[str, str]:
    return {SHORT[c]: ("—" if scores is None else str(scores[i])) for i, c in enumerate(CRITERIA)}


def report_text(rows: Sequence[Any], summary: Any, started: Any) -> str:
    from quiztui.pipeline.review import AGREEMENT_NOTES, agreement_rows, converged_text
    from quiztui.pipeline.review import summary_lines as lines_of
    from quiztui.report.text import text_table

    table = []
    for r in rows:
        o = r.outcome
        table.append(
            {
                "id": r.question.id,
                **_score_cells(o.scores),
                "converged": converged_text(o),
                "rewrite?": "REWRITE" if r.rewrite else "",
                "question": _clip(r.question.text, 50)
                + (f"  [UNSCORED: {_clip(o.unscored or '', 60)}]" if not o.scored else ""),
            }
        )
    out = "\n".join(_judges(started)) + "\n\n" + text_table(table)
    if summary.mode == "feedback":
        out += "\ntrajectories (iteration, judge, scores g a r n c, points; + strength, - flaw):\n"
        for r in rows:
            out += f"{r.question.id}  {_clip(r.question.text, 70)}  [{converged_text(r.outcome)}]\n"
            for it in r.outcome.iterations:
                scores = " ".join(str(v) for v in it.scores) if it.scores else "— — — — —"
                note = f"  UNPARSED: {_clip(it.unparsed, 70)}" if it.unparsed else ""
                out += f"  {it.number}  J{it.judge}  {scores}{note}\n"
                out += "".join(f"       + {_clip(p, 100)}\n" for p in it.strengths)
                out += "".join(f"       - {_clip(p, 100)}\n" for p in it.flaws)
    out += "\n" + "\n".join(lines_of(summary)) + "\n"
    if summary.agreement is not None:
        a = summary.agreement
        out += (
            f"\nagreement with human ratings ({summary.humans_source}: {a.raters} raters,"
            f" {a.questions} questions)\n"
        )
        out += text_table(agreement_rows(a))
        out += "".join(f"  {note}\n" for note in AGREEMENT_NOTES)
    return out


def report_markdown(rows: Sequence[Any], summary: Any, started: Any) -> str:
    from quiztui.pipeline.review import AGREEMENT_NOTES, agreement_rows, converged_text
    from quiztui.pipeline.review import summary_lines as lines_of
    from quiztui.report.writers import md_cell

    heads = ["id", *(SHORT[c] for c in CRITERIA), "converged", "rewrite?", "question"]
    out = ["# Question review", ""]
    out += [f"- {md_cell(line)}" for line in _judges(started)]
    out += ["", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for r in rows:
        o = r.outcome
        cells = [
            md_cell(r.question.id),
            *_score_cells(o.scores).values(),
            converged_text(o),
            "**REWRITE**" if r.rewrite else "",
            md_cell(r.question.text)
            + ("" if o.scored else f" (unscored: {md_cell(o.unscored or '')})"),
        ]
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "## Summary", ""] + [md_cell(line) for line in lines_of(summary, md=True)]
    if summary.agreement is not None:
        a = summary.agreement
        table = agreement_rows(a)
        out += [
            "",
            "## Agreement with human ratings",
            "",
            f"{md_cell(str(summary.humans_source))}: {a.raters} raters, {a.questions} questions.",
            "",
            "| " + " | ".join(table[0]) + " |",
            "|" + "---|" * len(table[0]),
        ]
        out += ["| " + " | ".join(md_cell(v) for v in row.values()) + " |" for row in table]
        out += [""] + [f"- {md_cell(note)}" for note in AGREEMENT_NOTES]
    out += ["", "## Trajectories", ""]
    for r in rows:
        o = r.outcome
        out += [f"### {md_cell(r.question.id)}: {md_cell(r.question.text)}", ""]
        if r.question.context:
            out += [f"Context: {md_cell(r.question.context)}", ""]
        out += [f"Converged: {converged_text(o)}.", ""]
        out += [
            "| it | judge | " + " | ".join(SHORT[c] for c in CRITERIA) + " | strengths | flaws |"
        ]
        out += ["|" + "---|" * (len(CRITERIA) + 4)]
        for it in o.iterations:
            scores = _score_cells(it.scores).values()
            strengths = "<br>".join(md_cell(p) for p in it.strengths) or "—"
            flaws = "<br>".join(md_cell(p) for p in it.flaws) or "—"
            if it.unparsed:
                flaws = f"UNPARSED: {md_cell(it.unparsed)}"
            out.append(
                f"| {it.number} | {it.judge} | "
                + " | ".join(scores)
                + f" | {strengths} | {flaws} |"
            )
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def report_json(rows: Sequence[Any], summary: Any, started: Any) -> str:
    from quiztui.core.review import PAPER_EXACT_MATCH_DIRECT, PAPER_EXPERT_KAPPA
    from quiztui.pipeline.review import outcome_dict, summary_dict

    body = {
        "judge": started.judge_label,
        "judge2": started.judge2_label,
        "simulated": started.simulated,
        "mode": summary.mode,
        "max_iterations": started.max_iterations,
        "summary": summary_dict(summary),
        "paper_figures": {
            "source": "the MIRROR paper, GPT-4 on EduProbe/SciQ with three educators",
            "exact_match_direct_percent": PAPER_EXACT_MATCH_DIRECT,
            "expert_fleiss_kappa": PAPER_EXPERT_KAPPA,
        },
        "questions": [outcome_dict(r.question, r.outcome, r.rewrite) for r in rows],
    }
    return json_text.dumps(body, indent=2, ensure_ascii=False) + "\n"


def report_csv(rows: Sequence[Any]) -> str:
    """One row per iteration (the whole trajectory), with the question's final result."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        [
            "question_id",
            "question",
            "iteration",
            "judge",
            "model",
            *CRITERIA,
            "strengths",
            "flaws",
            "unparsed",
            *(f"final_{c}" for c in CRITERIA),
            "converged",
            "rewrite",
        ]
    )
    for r in rows:
        o = r.outcome
        final = list(o.scores) if o.scores else [""] * len(CRITERIA)
        converged = "" if o.converged is None else str(o.converged).lower()
        for it in o.iterations or ():
            scores = list(it.scores) if it.scores else [""] * len(CRITERIA)
            w.writerow(
                [
                    r.question.id,
                    r.question.text,
                    it.number,
                    it.judge,
                    it.model,
                    *scores,
                    " | ".join(it.strengths),
                    " | ".join(it.flaws),
                    it.unparsed or "",
                    *final,
                    converged,
                    str(r.rewrite).lower(),
                ]
            )
        if not o.iterations:
            w.writerow(
                [
                    r.question.id,
                    r.question.text,
                    "",
                    "",
                    "",
                    *[""] * len(CRITERIA),
                    "",
                    "",
                    o.unscored or "",
                    *final,
                    converged,
                    str(r.rewrite).lower(),
                ]
            )
    return out.getvalue()
