"""Render a RunSummary as JSON, CSV, Markdown, HTML or JUnit XML. Quiz text is data: escaped for
each format (HTML in ``report/html.py``, JUnit in ``report/junit.py``)."""

from __future__ import annotations

import csv
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

from quiztui.core import json_text
from quiztui.core.figures import (
    CONFIDENCE_HELP,
    P_TRUE_HELP,
    cost_text,
    is_partial,
    judge_rates_text,
    prior_text,
    run_state_text,
)
from quiztui.core.terminal import RAW_CSV_HELP, csv_row, terminal_safe
from quiztui.core.wrong_keys import WrongKeys, wrong_keys_of, wrong_keys_text
from quiztui.errors import QuiztuiError
from quiztui.pipeline.events import QuestionSummary, RunSummary
from quiztui.pipeline.summary import summary_to_dict
from quiztui.report.extras import NO_EXTRAS, ReportExtras
from quiztui.report.html import to_html
from quiztui.report.junit import to_junit

__all__ = [
    "FORMATS",
    "NO_EXTRAS",
    "RAW_CSV_HELP",
    "ReportExtras",
    "format_for",
    "render_report",
    "spreadsheet_safe",
    "write_report",
]


def _letter(i: int | None) -> str:
    return "" if i is None else chr(ord("A") + i) if i < 26 else str(i + 1)


def _suggestion(q: QuestionSummary) -> str:
    if q.suggested_option is None:
        return ""
    return f"{_letter(q.suggested_option)}: {q.options[q.suggested_option]} ({q.suggested_p:.2f})"


def _p(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _p_true_list(q: QuestionSummary, sep: str, unknown: str, digits: int = 2) -> str:
    """P(true) per option, in option order ("" when the judge sent no logprobs at all)."""
    if all(p is None for p in q.p_true):
        return ""
    return sep.join(unknown if p is None else f"{p:.{digits}f}" for p in q.p_true)


def to_json(summary: RunSummary, extras: ReportExtras = NO_EXTRAS) -> str:
    data = summary_to_dict(summary)
    data["judge_rates"] = summary_rates(summary)  # the same words as the TUI and other reports
    data["run_state"] = run_state_text(summary.status, summary.not_run)
    data["prior_used"] = prior_text(summary.prior, summary.prior_label)
    data["expected_wrong_keys"] = summary_wrong_keys(summary).to_dict()
    data["not_judged"] = [
        {"question_id": u.id, "text": u.text, "type": u.type, "source_line": u.source_line}
        for u in extras.unjudged
    ]
    if extras.lint is not None:
        data["lint"] = extras.lint.to_dict()
    if extras.decisions:
        data["review"] = _review_list(summary, extras)
    return json_text.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _review_list(summary: RunSummary, extras: ReportExtras) -> list[dict[str, object]]:
    """The review desk's decisions, in quiz order (``quiztui QUIZ``: y / o / t / d)."""
    out: list[dict[str, object]] = []
    for q in summary.questions:
        decision = extras.decisions.get(q.question_id)
        if decision is None:
            continue
        action, option, note = extras.review_cells(q.question_id, q.options)
        out.append(
            {
                "question_id": q.question_id,
                "decision": action,
                "option": decision.option,
                "option_text": option or None,
                "note": note,
                "run_id": decision.run_id,
                "decided_at": decision.decided_at,
            }
        )
    return out


def to_csv(summary: RunSummary, extras: ReportExtras = NO_EXTRAS, *, raw: bool = False) -> str:
    """Spreadsheet-safe cells (``core/terminal.csv_row``) unless ``raw`` (``--raw-csv``)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        [
            "question_id",
            "question",
            "key",
            "k",
            "n",
            "badge",
            "confidence",
            "confidence_lo",
            "confidence_hi",
            "suggested",
            "suggested_p",
            "unjudged",
            "graded",
            "p_true",
            "lint",
            "review",
            "review_option",
            "review_note",
        ]
    )
    for q in summary.questions:
        w.writerow(
            csv_row(
                [
                    q.question_id,
                    q.text,
                    q.options[q.key],
                    q.k,
                    len(q.options),
                    q.badge.value,
                    f"{q.confidence:.4f}",
                    "" if q.interval is None else f"{q.interval[0]:.4f}",
                    "" if q.interval is None else f"{q.interval[1]:.4f}",
                    "" if q.suggested_option is None else q.options[q.suggested_option],
                    "" if q.suggested_p is None else f"{q.suggested_p:.4f}",
                    sum(v is None for v in q.verdicts),
                    _p(q.graded, 4),
                    _p_true_list(q, ";", "", 4),
                    extras.lint_codes(q.question_id),
                    *extras.review_cells(q.question_id, q.options),
                ],
                raw=raw,
            )
        )
    for u in extras.unjudged:  # badge "not judged (type)"; the judged columns stay empty
        row = [
            u.id,
            u.text,
            "",
            "",
            "",
            f"not judged ({u.type})",
            *[""] * 8,
            extras.lint_codes(u.id),
            *[""] * 3,
        ]
        w.writerow(csv_row(row, raw=raw))
    return out.getvalue()


def md_cell(text: str) -> str:
    """Escape text for a Markdown table cell."""
    text = " ".join(text.split())
    for ch in "\\`*_[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text


def _confidence(q: QuestionSummary) -> str:
    if q.interval is None:
        return f"{q.confidence:.3f}"
    return f"{q.confidence:.3f} [{q.interval[0]:.3f}, {q.interval[1]:.3f}]"


def summary_wrong_keys(s: RunSummary) -> WrongKeys:
    """The expected number of wrong keys over the run's questions, with its 95 % interval
    (core/wrong_keys: each question's P(key wrong) is 1 − its confidence)."""
    return wrong_keys_of([q.confidence for q in s.questions])


def summary_rates(s: RunSummary) -> str:
    """The judge's rates as every face shows them (core/figures.judge_rates_text)."""
    return judge_rates_text(s.tpr, s.tnr, s.tpr_ci, s.tnr_ci, s.calibration)


def to_markdown(summary: RunSummary, extras: ReportExtras = NO_EXTRAS) -> str:
    s = summary
    partial = " (partial)" if is_partial(s.status, s.not_run) else ""
    judge = ("**SIMULATED** " if s.simulated else "") + md_cell(s.judge_label)
    lines = [
        f"# quiztui vet report: {md_cell(s.quiz_title)}",
        "",
        f"- Run: {s.run_id} ({md_cell(run_state_text(s.status, s.not_run))}), seed {s.seed}, "
        + ("per-question mode" if s.mode == "question" else f"batch size {s.batch_size}"),
        f"- Judge: {judge}",
        f"- Judge rates: {md_cell(summary_rates(s))}",
        f"- Prior: {md_cell(prior_text(s.prior, s.prior_label))}",
        f"- Wrong keys: {md_cell(wrong_keys_text(summary_wrong_keys(s)))}",
        f"- Assertions: {s.judged} judged, {s.unjudged} unjudged"
        + (f" (of which {s.not_run} not run)" if s.not_run else "")
        + f", {s.cached} from cache",
        f"- Requests {s.requests}, retries {s.retries}, re-asked {s.reasked},"
        f" tokens in {s.tokens_in} / out {s.tokens_out}"
        + (" (estimated: the server sent no usage)" if s.tokens_estimated else "")
        + ", cost "
        + cost_text(s.cost, s.simulated),
        "- Badges: " + ", ".join(f"{k} {v}" for k, v in sorted(s.badge_counts.items())),
        "- Graded: P(key is the answer) from the judge's token P(true) per option (A / B / …),"
        " where it sent logprobs",
        f"- {md_cell(CONFIDENCE_HELP)}",
        f"- {md_cell(P_TRUE_HELP)}",
        "",
        f"| # | question | key | k{partial} | badge | confidence{partial} | judge suggests | graded"
        " | P(true) | lint |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for q in s.questions:
        lines.append(
            f"| {md_cell(q.question_id)} | {md_cell(q.text)} | {md_cell(q.options[q.key])} | {q.k}/{len(q.options)}"
            f" | {q.badge.value} | {_confidence(q)} | {md_cell(_suggestion(q))}"
            f" | {_p(q.graded, 3)} | {_p_true_list(q, ' / ', '—')}"
            f" | {md_cell(extras.lint_codes(q.question_id))} |"
        )
    if s.error:
        lines += ["", f"Run stopped: {md_cell(s.error)}"]
    if extras.decisions:
        lines += ["", "## Review", "", "| # | question | decision | right option | note |"]
        lines.append("|---|---|---|---|---|")
        for q in s.questions:
            action, option, note = extras.review_cells(q.question_id, q.options)
            if action:
                lines.append(
                    f"| {md_cell(q.question_id)} | {md_cell(q.text)} | {action}"
                    f" | {md_cell(option)} | {md_cell(note)} |"
                )
    if extras.unjudged:
        lines += ["", "## Not judged", "", "| # | line | type | item |", "|---|---|---|---|"]
        for u in extras.unjudged:
            line = "" if u.source_line is None else str(u.source_line)
            lines.append(f"| {md_cell(u.id)} | {line} | {md_cell(u.type)} | {md_cell(u.text)} |")
    if extras.lint is not None:
        lines += ["", "## Lint", "", f"{md_cell(extras.lint.summary())}"]
        if extras.lint.findings:
            lines += ["", "| # | code | severity | finding |", "|---|---|---|---|"]
            for f in extras.lint.findings:
                lines.append(
                    f"| {md_cell(f.question_id or 'quiz')} | {f.code} | {f.severity}"
                    f" | {md_cell(f.message)} |"
                )
    return "\n".join(lines) + "\n"


FORMATS: dict[str, Callable[[RunSummary, ReportExtras], str]] = {
    "json": to_json,
    "csv": to_csv,
    "md": to_markdown,
    "html": to_html,
    "junit": to_junit,
}
# `-o FILE` without `--format`: the format its extension names.
EXTENSIONS = {".json": "json", ".csv": "csv", ".md": "md", ".html": "html", ".htm": "html",
              ".xml": "junit"}  # fmt: skip


def format_for(output: Path | None, fmt: str | None, default: str = "md") -> str:
    """The report format: ``fmt`` when given, else the one ``output``'s extension names."""
    if fmt:
        return fmt
    if output is not None:
        return EXTENSIONS.get(output.suffix.lower(), default)
    return default


def render_report(
    summary: RunSummary, fmt: str, extras: ReportExtras = NO_EXTRAS, *, raw_csv: bool = False
) -> str:
    """The report in ``fmt``, terminal-safe (``core/terminal.terminal_safe``) in every format."""
    if fmt == "csv":
        return terminal_safe(to_csv(summary, extras, raw=raw_csv))
    return terminal_safe(FORMATS[fmt](summary, extras))


def spreadsheet_safe(text: str) -> str:
    """A CSV text made by ``csv.writer``, with every cell through ``core/terminal.csv_cell``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in csv.reader(io.StringIO(text, newline="")):
        writer.writerow(csv_row(row))
    return out.getvalue()


def write_report(
    text: str,
    output: Path | None,
    *,
    fmt: str | None = None,
    raw_csv: bool = False,
    alerts: tuple[str, ...] = (),
) -> None:
    """A report to stdout, or to ``output`` with a note on stderr; a write error names the file.

    The text is made terminal-safe here too, whichever writer made it (lint, grade, review, …),
    and a CSV (``fmt="csv"``) spreadsheet-safe unless ``raw_csv``. Lines that start with one of
    ``alerts`` are printed in red on a terminal (not under ``NO_COLOR``; the words say it too).
    """
    if fmt == "csv" and not raw_csv:
        text = spreadsheet_safe(text)
    text = terminal_safe(text)
    if output is None:
        if alerts and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
            # the text is terminal-safe already: only these colour codes go to the terminal
            # beneath the CLI's safe stdout (core/terminal.terminal_stream)
            red = "".join(
                f"\x1b[31m{line.rstrip(chr(10))}\x1b[0m\n" if line.startswith(alerts) else line
                for line in text.splitlines(keepends=True)
            )
            getattr(sys.stdout, "unfiltered", sys.stdout).write(red)
            return
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise QuiztuiError(f"{output}: cannot write the report: {exc.strerror or exc}") from None
    print(f"report written to {output}", file=sys.stderr)
