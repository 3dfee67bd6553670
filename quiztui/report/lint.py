"""The reports of ``quiztui lint``: text, Markdown, JSON, CSV and SARIF 2.1.0, and the
``--statistics`` table (findings per code) in text, Markdown, JSON and CSV.

Every report names each finding's category (correctness or style) and the rules that ran. SARIF
is for code-scanning tools in CI: one run of the tool ``quiztui`` whose rules are the lint codes
(with their category as a tag, their severity as the default level and ``enabled`` when
selected), one result per finding with the quiz file and, where the format has lines, the line
of its question; findings the quiz itself accepts (``lint_ignore``) are results with an in-source
suppression. Quiz text stays untrusted: the text report escapes control characters, SARIF and
JSON are JSON-escaped (SARIF as ASCII).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from quiztui.core import json_text
from quiztui.core.lint import CODES, LintFinding, LintReport
from quiztui.core.quiz import Quiz
from quiztui.report.text import text_table
from quiztui.report.writers import md_cell

FORMATS = ("text", "md", "json", "csv", "sarif")
STATISTICS_FORMATS = ("text", "md", "json", "csv")
SARIF_VERSION = "2.1.0"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _plain(text: str) -> str:
    """Untrusted text on one terminal line: whitespace collapsed, control characters escaped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", " ".join(text.split()))


def _where(quiz: Quiz) -> str:
    return _plain(quiz.source_path or quiz.title)


def verdict(report: LintReport, fail_on: str) -> str:
    if fail_on == "never":
        return "fail-on never"
    return f"fail-on {fail_on}: {'FAILED' if report.fails(fail_on) else 'passed'}"


def rules_note(report: LintReport) -> str:
    """ "rules: correctness (style not run: --extend-select style)" and the like."""
    style = {c for c, info in CODES.items() if info.category == "style"}
    hint = "" if style & report.selected else " (style not run: --extend-select style)"
    return f"rules: {report.selection()}{hint}"


def _line(f: LintFinding) -> str:
    return "" if f.source_line is None else str(f.source_line)


def report_text(report: LintReport, quiz: Quiz, fail_on: str) -> str:
    rows = [
        {
            "id": f.question_id or "(quiz)",
            "line": _line(f),
            "code": f.code,
            "severity": f.severity,
            "category": f.category,
            "message": _plain(f.message),
        }
        for f in report.findings
    ]
    out = text_table(rows) if rows else "no findings\n"
    disabled = f"; ignored {', '.join(sorted(report.disabled))}" if report.disabled else ""
    return (
        out + f"\n{_where(quiz)}: {report.summary()}; {rules_note(report)}{disabled};"
        f" {verdict(report, fail_on)}\n"
    )


def report_markdown(report: LintReport, quiz: Quiz, fail_on: str) -> str:
    lines = [f"# quiztui lint: {md_cell(quiz.title)}", ""]
    lines.append(f"- Quiz: {md_cell(quiz.source_path or quiz.title)}")
    lines.append(f"- {md_cell(report.summary())}; {verdict(report, fail_on)}")
    lines.append(f"- Rules: {md_cell(report.selection())}")
    if report.disabled:
        lines.append(f"- Ignored: {', '.join(sorted(report.disabled))}")
    lines.append("")
    if report.findings:
        lines += [
            "| id | line | code | severity | category | message |",
            "|---|---|---|---|---|---|",
        ]
        for f in report.findings:
            lines.append(
                f"| {md_cell(f.question_id or '(quiz)')} | {_line(f)} | {f.code} {f.name}"
                f" | {f.severity} | {f.category} | {md_cell(f.message)} |"
            )
    else:
        lines.append("No findings.")
    return "\n".join(lines) + "\n"


def _codes() -> dict[str, dict[str, str]]:
    return {
        c.code: {
            "severity": c.severity,
            "category": c.category,
            "name": c.name,
            "summary": c.summary,
        }
        for c in CODES.values()
    }


def report_json(report: LintReport, quiz: Quiz, fail_on: str) -> str:
    body = {
        "quiz": {"title": quiz.title, "path": quiz.source_path, "format": quiz.format},
        "fail_on": fail_on,
        "failed": report.fails(fail_on),
        "selection": report.selection(),
        **report.to_dict(),
        "codes": _codes(),
    }
    return json_text.dumps(body, indent=2, ensure_ascii=False) + "\n"


def report_csv(report: LintReport, quiz: Quiz, fail_on: str) -> str:
    del quiz, fail_on
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["question_id", "source_line", "code", "name", "severity", "category", "message"])
    for f in report.findings:
        w.writerow(
            [
                f.question_id or "",
                _line(f),
                f.code,
                f.name,
                f.severity,
                f.category,
                f.message,
            ]
        )
    return out.getvalue()


# --- SARIF 2.1.0 ------------------------------------------------------------------------------


def artifact_uri(path: str | PurePath, base: Path | None = None) -> str:
    """The quiz file as a SARIF artifact URI: relative to ``base`` (the working directory) when
    it is under it, in POSIX form and percent-encoded; else an absolute ``file:`` URI."""
    p = Path(path)
    if not p.is_absolute():
        return quote(p.as_posix())
    root = (base or Path.cwd()).resolve()
    resolved = p.resolve()
    if resolved.is_relative_to(root):
        return quote(resolved.relative_to(root).as_posix())
    return resolved.as_uri()


def _rule(code: str, report: LintReport) -> dict[str, Any]:
    info = CODES[code]
    return {
        "id": code,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.rationale},
        "defaultConfiguration": {
            "level": _LEVEL[info.severity],
            "enabled": code in report.selected,
        },
        "properties": {"category": info.category, "tags": [info.category]},
    }


def _result(f: LintFinding, index: dict[str, int], uri: str, suppressed: bool) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "index": 0}}
    if f.source_line is not None and f.source_line >= 1:
        physical["region"] = {"startLine": f.source_line}
    location: dict[str, Any] = {"physicalLocation": physical}
    if f.question_id is not None:
        location["logicalLocations"] = [{"name": f.question_id, "kind": "object"}]
    result: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": _LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [location],
        "properties": {"category": f.category, "questionId": f.question_id},
    }
    if suppressed:
        result["suppressions"] = [
            {"kind": "inSource", "justification": "lint_ignore in the quiz file"}
        ]
    return result


def report_sarif(report: LintReport, quiz: Quiz, fail_on: str, *, uri: str | None = None) -> str:
    """A SARIF 2.1.0 log of one run (``uri``: the quiz file's artifact URI, ``artifact_uri``)."""
    from quiztui import __version__

    del fail_on
    where = uri if uri is not None else artifact_uri(quiz.source_path or quiz.title)
    codes = sorted(CODES)
    index = {code: i for i, code in enumerate(codes)}
    results = [_result(f, index, where, False) for f in report.findings]
    results += [_result(f, index, where, True) for f in report.suppressed]
    log = {
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "quiztui",
                        "version": __version__,
                        "rules": [_rule(code, report) for code in codes],
                    }
                },
                "artifacts": [{"location": {"uri": where}}],
                "results": results,
                "properties": {
                    "questions": report.questions,
                    "selection": report.selection(),
                },
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=True) + "\n"


# --- --statistics -----------------------------------------------------------------------------


def _statistics_rows(report: LintReport) -> list[dict[str, Any]]:
    return [
        {
            "count": n,
            "code": code,
            "name": CODES[code].name,
            "severity": CODES[code].severity,
            "category": CODES[code].category,
        }
        for code, n in report.statistics()
    ]


def statistics(report: LintReport, quiz: Quiz, fail_on: str, fmt: str) -> str:
    """Findings per code, most first (``ruff --statistics``), in ``fmt``."""
    rows = _statistics_rows(report)
    if fmt == "json":
        body = {"selection": report.selection(), "failed": report.fails(fail_on), "codes": rows}
        return json.dumps(body, indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["count", "code", "name", "severity", "category"])
        w.writerows(
            [[r[k] for k in ("count", "code", "name", "severity", "category")] for r in rows]
        )
        return out.getvalue()
    if fmt == "md":
        lines = [
            f"# quiztui lint statistics: {md_cell(quiz.title)}",
            "",
            f"- {md_cell(report.summary())}; {verdict(report, fail_on)}",
            f"- Rules: {md_cell(report.selection())}",
            "",
            "| count | code | name | severity | category |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['count']} | {r['code']} | {r['name']} | {r['severity']} | {r['category']} |"
            for r in rows
        ]
        return "\n".join(lines) + "\n"
    table = text_table([{k: str(v) for k, v in r.items()} for r in rows]) if rows else ""
    table = table or "no findings\n"
    return (
        f"{table}\n{_where(quiz)}: {report.summary()}; {rules_note(report)};"
        f" {verdict(report, fail_on)}\n"
    )


RENDER = {
    "text": report_text,
    "md": report_markdown,
    "json": report_json,
    "csv": report_csv,
    "sarif": report_sarif,
}
