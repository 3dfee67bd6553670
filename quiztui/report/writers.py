"""Render a RunSummary as JSON, CSV or Markdown. Quiz text is data: escaped for each format."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable

from quiztui.pipeline.events import QuestionSummary, RunSummary
from quiztui.pipeline.vet import summary_to_dict


def _letter(i: int | None) -> str:
    return "" if i is None else chr(ord("A") + i) if i < 26 else str(i + 1)


def _suggestion(q: QuestionSummary) -> str:
    if q.suggested_option is None:
        return ""
    return f"{_letter(q.suggested_option)}: {q.options[q.suggested_option]} ({q.suggested_p:.2f})"


def to_json(summary: RunSummary) -> str:
    return json.dumps(summary_to_dict(summary), indent=2, ensure_ascii=False) + "\n"


def to_csv(summary: RunSummary) -> str:
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
            "suggested",
            "suggested_p",
            "unjudged",
        ]
    )
    for q in summary.questions:
        w.writerow(
            [
                q.question_id,
                q.text,
                q.options[q.key],
                q.k,
                len(q.options),
                q.badge.value,
                f"{q.confidence:.4f}",
                "" if q.suggested_option is None else q.options[q.suggested_option],
                "" if q.suggested_p is None else f"{q.suggested_p:.4f}",
                sum(v is None for v in q.verdicts),
            ]
        )
    return out.getvalue()


def _md(text: str) -> str:
    """Escape text for a Markdown table cell."""
    text = " ".join(text.split())
    for ch in "\\`*_[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text


def to_markdown(summary: RunSummary) -> str:
    s = summary
    judge = ("**SIMULATED** " if s.simulated else "") + _md(s.judge_label)
    lines = [
        f"# quiztui vet report: {_md(s.quiz_title)}",
        "",
        f"- Run: {s.run_id} ({s.status}), seed {s.seed}, batch size {s.batch_size}",
        f"- Judge: {judge}",
        f"- Confidence model: TPR {s.tpr:g}, TNR {s.tnr:g}, prior {s.prior:g} ({_md(s.calibration)})",
        f"- Assertions: {s.judged} judged, {s.unjudged} unjudged, {s.cached} from cache",
        f"- Requests {s.requests}, retries {s.retries}, re-asked {s.reasked},"
        f" tokens in {s.tokens_in} / out {s.tokens_out}",
        "- Badges: " + ", ".join(f"{k} {v}" for k, v in sorted(s.badge_counts.items())),
        "",
        "| # | question | key | k | badge | confidence | judge suggests |",
        "|---|---|---|---|---|---|---|",
    ]
    for q in s.questions:
        lines.append(
            f"| {_md(q.question_id)} | {_md(q.text)} | {_md(q.options[q.key])} | {q.k}/{len(q.options)}"
            f" | {q.badge.value} | {q.confidence:.3f} | {_md(_suggestion(q))} |"
        )
    if s.error:
        lines += ["", f"Run stopped: {_md(s.error)}"]
    return "\n".join(lines) + "\n"


FORMATS: dict[str, Callable[[RunSummary], str]] = {
    "json": to_json,
    "csv": to_csv,
    "md": to_markdown,
}


def render_report(summary: RunSummary, fmt: str) -> str:
    return FORMATS[fmt](summary)
