"""``quiztui robustness QUIZ``: how each question stands up to being asked in other words.

MultiQ&A (seed 002): every question is rewritten v ways in one request, then the original and
each rewrite are answered by independent requests; the answers give per-question and per-quiz
metrics (A, Ω, O, Ŷ, µD, Hη, M2, Fleiss' κ, Cronbach's α) and a fragility flag per question.
Progress goes to stderr, the report (text, Markdown, JSON or CSV) to stdout or ``-o``; ``--tui``
opens the Robustness screen.

Exit codes: 0 done (refusals and unanswered forms are reported, not failures), 1 with
``--fail-on-fragile`` when a question is fragile, 2 bad input or configuration.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from quiztui.assemble import robustness as robustness_assembly
from quiztui.assemble.robustness import robustness_events
from quiztui.cli._args import Parents, help_for, quiz_arguments
from quiztui.cli._quiz import load_input
from quiztui.cli.flags import INT64_MAX, Number
from quiztui.cli.running import run_to_end
from quiztui.config import Config
from quiztui.core import json_text
from quiztui.core.paraphrase import ANSWERED, QuestionRobustness
from quiztui.report.writers import RAW_CSV_HELP, write_report

METRIC_NAMES = (
    ("accuracy", "A", "accuracy of the original question"),
    ("worst", "Ω", "worst case: every form answered right"),
    ("best", "O", "best case: some form answered right"),
    ("plurality", "Ŷ", "the forms' plurality answer is right"),
    ("difficulty", "µD", "item difficulty: share of right answers"),
    ("certainty", "Hη", "mean normalised certainty (1 − H/Hmax)"),
    ("m2", "M2", "Gibbs' M2 (1: no variation)"),
    ("fleiss_kappa", "κ", "Fleiss' κ among the forms (complete questions)"),
    (
        "cronbach_alpha",
        "α",
        "Cronbach's α / KR-20 as the MultiQ&A paper writes it (questions as items)",
    ),
    ("cronbach_alpha_forms", "αf", "Cronbach's α / KR-20 with the forms as items"),
)


def register(sub: Any, parents: Parents) -> None:
    common, judge = parents.common, parents.judge
    r = sub.add_parser(
        "robustness",
        parents=[common, judge],
        help=help_for("robustness"),
        description="MultiQ&A robustness: a question whose rewrites get different answers is"
        " ambiguous or badly written, even when its key is right.",
    )
    r.set_defaults(handler=cmd_robustness)
    quiz_arguments(r)
    r.add_argument(
        "--variants",
        "-v",
        action=Number,
        key="robustness.variants",
        help="rewrites per question (default 5)",
    )
    r.add_argument(
        "--answer-format",
        choices=("multiple-choice", "abstractive"),
        help="answer with the options shown, or the question alone",
    )
    r.add_argument("--match", choices=("normalised", "embedding"), help="abstractive grouping")
    r.add_argument("--limit", action=Number, ge=1, le=INT64_MAX, help="only the first N questions")
    r.add_argument(
        "--format",
        choices=("text", "md", "json", "csv"),
        default="text",
        help="report format (on stdout, or in -o's file)",
    )
    r.add_argument("-o", "--output", type=Path, help="write the report to this file")
    r.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)
    r.add_argument("--tui", action="store_true", help="open the Robustness screen")
    r.add_argument(
        "--fail-on-fragile", action="store_true", help="exit 1 when any question is fragile"
    )


def settings(config: Config, args: argparse.Namespace | None = None) -> Any:
    """The run settings with the flags the user typed."""
    return robustness_assembly.settings(
        config,
        variants=getattr(args, "variants", None),
        answer_format=getattr(args, "answer_format", None),
        match=getattr(args, "match", None),
    )


def load(config: Config, args: argparse.Namespace) -> Any:
    from quiztui.core.quiz import Quiz

    quiz: Quiz = load_input(config, args)
    if args.limit is not None:
        quiz = quiz.model_copy(update={"questions": quiz.questions[: args.limit]})
    return quiz


def cmd_robustness(config: Config, args: argparse.Namespace) -> int:
    from quiztui.store import Store

    quiz = load(config, args)
    run_settings = settings(config, args)
    if args.tui:
        return _tui(config, quiz, run_settings)
    with Store(config.db_path()) as store:
        return run_to_end(_run(config, store, quiz, run_settings, args))


async def _run(
    config: Config, store: Any, quiz: Any, run_settings: Any, args: argparse.Namespace
) -> int:
    from quiztui.pipeline.robustness import (
        FormAnswered,
        QuestionMeasured,
        RobustnessFinished,
        RobustnessStarted,
    )
    from quiztui.report.progress import Progress

    progress = Progress(sys.stderr, unit="answers", missed="no answer")
    total = len(quiz.questions) * (run_settings.variants + 1)
    results: dict[int, QuestionRobustness] = {}
    summary = None
    label = ""
    answered = missed = 0
    async for event in robustness_events(config, store, quiz, run_settings):
        if isinstance(event, RobustnessStarted):
            label = event.judge_label
            print(
                f"robustness of {event.questions} questions × {event.variants + 1} forms"
                f" ({event.format}) · {label}",
                file=sys.stderr,
            )
        elif isinstance(event, FormAnswered):
            answered += event.answer.status == ANSWERED
            missed += event.answer.status != ANSWERED
            progress.update(answered, missed, total, answered + missed, 0, 0, 0)
        elif isinstance(event, QuestionMeasured):
            results[event.position] = event.result
        elif isinstance(event, RobustnessFinished):
            summary = event.summary
            progress.update(
                summary.statuses.get(ANSWERED, 0),
                total - summary.statuses.get(ANSWERED, 0),
                total,
                summary.rewrite.requests + summary.answer.requests,
                summary.retries,
                summary.rewrite.tokens_in + summary.answer.tokens_in,
                summary.rewrite.tokens_out + summary.answer.tokens_out,
                final=True,
            )
    ordered = [results[i] for i in sorted(results)]
    text = render(args.format, ordered, summary, label, quiz.title)
    write_report(text, args.output, fmt=args.format, raw_csv=args.raw_csv)
    if summary is not None and summary.stopped:
        print(f"quiztui: robustness stopped: {summary.stopped}", file=sys.stderr)
    return 1 if args.fail_on_fragile and any(r.fragile for r in ordered) else 0


# --- reports -----------------------------------------------------------------------------------


def _num(value: Any, digits: int = 3) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def question_rows(results: Sequence[QuestionRobustness]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        m = r.metrics
        answers = " ".join(
            (r.categories[a.code] if a.code >= 0 else "?") if a.status == ANSWERED else "·"
            for a in r.answers
        )
        rows.append(
            {
                "id": r.question_id,
                "fragile": "FRAGILE" if r.fragile else "",
                "answers": answers,
                "A": _num(m.get("accuracy"), 0),
                "Ŷ": _num(m.get("plurality"), 0),
                "µD": _num(m.get("difficulty"), 2),
                "Hη": _num(m.get("certainty"), 2),
                "M2": _num(m.get("m2"), 2),
                "P": _num(m.get("agreement"), 2),
                "refused": str(r.count("refused") + r.count("filtered")),
                "why": r.fragile_reason,
            }
        )
    return rows


def summary_lines(summary: Any, label: str) -> list[str]:
    q = summary.quiz
    lines = [f"judge: {label}"]
    lines.append(
        f"questions {summary.questions} · measured {summary.measured} · fragile {summary.fragile}"
        f" · complete (all forms answered) {q.complete_questions}"
    )
    lines.append(
        "  ".join(f"{sym} {_num(getattr(q, name))}" for name, sym, _ in METRIC_NAMES)
        + f"  (Ω ≤ min(Ŷ,A) ≤ max(Ŷ,A) ≤ O {'holds' if q.ordering_holds else 'FAILS'})"
    )
    st = summary.statuses
    lines.append(
        "answers: "
        + " · ".join(f"{k} {v}" for k, v in st.items() if v or k in ("answered", "refused"))
        + "  (refusals and filtered replies are counted apart, never as wrong)"
    )
    for stage in ("rewrite", "answer"):
        u = getattr(summary, stage)
        lines.append(
            f"tokens {stage:<8} requests {u.requests:>6} · prompt {u.tokens_in:>8}"
            f" · completion {u.tokens_out:>7}"
        )
    lines.append(
        f"retries {summary.retries} · asked again {summary.reasks} · {summary.seconds:.1f}s"
        + (f" · STOPPED: {summary.stopped}" if summary.stopped else "")
    )
    return lines


def render(
    fmt: str, results: Sequence[QuestionRobustness], summary: Any, label: str, title: str
) -> str:
    if fmt == "json":
        return json_report(results, summary, label, title)
    if fmt == "csv":
        buffer = io.StringIO()
        rows = question_rows(results)
        writer = csv.DictWriter(
            buffer, fieldnames=list(rows[0]) if rows else ["id"], lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue()
    if fmt == "md":
        from quiztui.report.writers import md_cell

        rows = question_rows(results)
        head = list(rows[0]) if rows else ["id"]
        out = [f"# Robustness: {md_cell(title)}", ""]
        if summary is not None:
            out += [f"- {md_cell(line)}" for line in summary_lines(summary, label)] + [""]
            out += ["| metric | value | meaning |", "|---|---|---|"]
            out += [
                f"| {sym} | {_num(getattr(summary.quiz, name))} | {what} |"
                for name, sym, what in METRIC_NAMES
            ] + [""]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(md_cell(str(r[h])) for h in head) + " |" for r in rows]
        return "\n".join(out) + "\n"
    from quiztui.report.text import text_table

    rows = question_rows(results)
    for row in rows:
        row["why"] = _clip(row["why"], 60)
    text = text_table(rows)
    if summary is not None:
        text += "\n" + "\n".join(summary_lines(summary, label)) + "\n"
    return text


def json_report(results: Sequence[QuestionRobustness], summary: Any, label: str, title: str) -> str:
    from dataclasses import asdict

    questions = []
    for r in results:
        item = asdict(r)
        questions.append(item)
    doc = {
        "quiz": title,
        "judge": label,
        "summary": summary.as_dict() if summary is not None else None,
        "questions": questions,
    }
    return json_text.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _clip(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _tui(config: Config, quiz: Any, run_settings: Any) -> int:
    from quiztui.store import Store
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.robustness import RobustnessScreen

    with Store(config.db_path()) as store:

        def start() -> AsyncIterator[Any]:
            return robustness_events(config, store, quiz, run_settings)

        home = RobustnessScreen(
            quiz, start, settings=run_settings, flush_interval=config.ui.flush_interval
        )
        GradeApp(home, theme_name=config.ui.theme, title="quiztui robustness").run()
    return 0
