"""A vet run as JUnit XML, so CI systems show flagged questions as failing tests.

One ``<testsuites>`` holding one ``<testsuite>`` (the quiz) with one ``<testcase>`` per question:

- good → a passing test case;
- questionable / poor → ``<failure type="questionable|poor">``, the message giving k/n and the
  judge's suggested option, the body every option's verdict and reason;
- incomplete (some option never got a verdict: a failed request, a stopped run, the budget) →
  ``<error type="incomplete">``: the question was not fully vetted, which is a problem of the
  run rather than a verdict on the question, and CI should not let it pass silently (a skip is
  easy to overlook);
- an item of a type the judge does not vet (``ReportExtras.unjudged``) → ``<skipped>``.

The document satisfies both the Ant-derived ``JUnit.xsd`` (which requires ``package``, ``id``,
``hostname``, ``timestamp``, ``<properties>``, ``<system-out>`` and ``<system-err>`` and allows no
attributes on ``<testsuites>``) and the Jenkins xUnit ``junit-10.xsd``; both are vendored under
``tests/fixtures/junit/`` and checked by ``tests/test_reports_junit.py``. Per-question times
are not measured, so every ``<testcase time>`` is 0; the suite's time is the run's elapsed time.
Text from a quiz or a model goes through ElementTree (which escapes it) after the characters
XML 1.0 forbids are removed.
"""

from __future__ import annotations

import re
import socket
import time
import xml.etree.ElementTree as ET

from quiztui.core.figures import judge_rates_text, prior_text, run_state_text
from quiztui.core.kscore import Badge
from quiztui.core.terminal import terminal_safe
from quiztui.core.wrong_keys import wrong_keys_of, wrong_keys_text
from quiztui.pipeline.events import QuestionSummary, RunSummary
from quiztui.report.extras import ReportExtras

NAME_CHARS = 80
# Everything outside XML 1.0's Char production: C0 controls but tab/LF/CR, lone surrogates,
# U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_NOT_CLASS = re.compile(r"[^A-Za-z0-9_]+")


def xml_text(text: object) -> str:
    """Untrusted text made safe for XML 1.0 (ElementTree escapes markup, not these)."""
    return _NOT_XML.sub("", str(text))


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else str(i + 1)


def _one_line(text: str) -> str:
    # Made visible before it is cut, so a name stays within NAME_CHARS after the report's own
    # terminal-safe pass (which then finds nothing left to escape).
    return " ".join(terminal_safe(xml_text(text)).split())


def case_name(q: QuestionSummary) -> str:
    """``q12: question text`` cut to about 80 characters."""
    name = f"{_one_line(q.question_id)}: {_one_line(q.text)}"
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1].rstrip() + "…"


def classname(title: str) -> str:
    """A dotted class name CI tools group by: ``quiztui.<quiz title as an identifier>``."""
    slug = _NOT_CLASS.sub("_", xml_text(title)).strip("_") or "quiz"
    return f"quiztui.{slug[:60]}"


def _suggestion(q: QuestionSummary) -> str:
    if q.suggested_option is None or q.suggested_option >= len(q.options):
        return ""
    p = "" if q.suggested_p is None else f" ({q.suggested_p:.2f})"
    return f"judge thinks {_letter(q.suggested_option)}{p}: {q.options[q.suggested_option]}"


def _message(q: QuestionSummary) -> str:
    if q.badge == Badge.INCOMPLETE:
        missing = sum(v is None for v in q.verdicts)
        text = f"incomplete: {missing} of {len(q.options)} options unjudged"
    else:
        text = f"{q.badge.value}: k {q.k}/{len(q.options)}, confidence {q.confidence:.3f}"
    suggestion = _suggestion(q)
    return _one_line(f"{text}; {suggestion}" if suggestion else text)


def _body(q: QuestionSummary, extras: ReportExtras) -> str:
    """Every option with its verdict and reason, then k/n, confidence and the suggestion."""
    lines = [f"{q.question_id}: {q.text}"]
    for i, option in enumerate(q.options):
        verdict = q.verdicts[i] if i < len(q.verdicts) else None
        said = "unjudged" if verdict is None else "true" if verdict else "false"
        reason = q.reasons[i] if i < len(q.reasons) else ""
        key = " [key]" if i == q.key else ""
        lines.append(
            f"  {_letter(i)}. {option}{key} — judge: {said}" + (f" — {reason}" if reason else "")
        )
    interval = "" if q.interval is None else f" [{q.interval[0]:.3f}, {q.interval[1]:.3f}]"
    lines.append(f"k {q.k}/{len(q.options)}, confidence {q.confidence:.3f}{interval}")
    if q.suggested_option is not None:
        lines.append(_suggestion(q))
    codes = extras.lint_codes(q.question_id)
    if codes:
        lines.append(f"lint: {codes}")
    return xml_text("\n".join(lines)) + "\n"


def _properties(suite: ET.Element, s: RunSummary) -> None:
    props = ET.SubElement(suite, "properties")
    values = {
        "run_id": s.run_id,
        "judge": s.judge_label,
        "simulated": str(s.simulated).lower(),
        "seed": s.seed,
        "mode": s.mode,
        "batch_size": s.batch_size,
        "calibration": s.calibration,
        "tpr": f"{s.tpr:.4g}",
        "tnr": f"{s.tnr:.4g}",
        "prior": f"{s.prior:g}",
        # the words the TUI and the other reports use (core/figures)
        "judge_rates": judge_rates_text(s.tpr, s.tnr, s.tpr_ci, s.tnr_ci, s.calibration),
        "prior_used": prior_text(s.prior, s.prior_label),
        "expected_wrong_keys": wrong_keys_text(wrong_keys_of([q.confidence for q in s.questions])),
        "status": s.status,
        "run_state": run_state_text(s.status, s.not_run),
        "cost_usd": "unknown" if s.cost is None else f"{s.cost:.4f}",
    }
    for name, value in values.items():
        ET.SubElement(props, "property", name=name, value=xml_text(value))


def _stdout(s: RunSummary) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(s.badge_counts.items()))
    return xml_text(
        f"quiztui vet run {s.run_id} ({run_state_text(s.status, s.not_run)}) of {s.quiz_title}\n"
        f"judge: {s.judge_label}\n"
        f"judge rates: {judge_rates_text(s.tpr, s.tnr, s.tpr_ci, s.tnr_ci, s.calibration)}\n"
        f"badges: {counts}\n"
        f"wrong keys: {wrong_keys_text(wrong_keys_of([q.confidence for q in s.questions]))}\n"
        f"assertions: {s.judged} judged, {s.unjudged} unjudged, {s.not_run} not run,"
        f" {s.cached} cached\n"
        f"requests {s.requests}, retries {s.retries}, tokens in {s.tokens_in} / out {s.tokens_out}\n"
    )


def to_junit(summary: RunSummary, extras: ReportExtras) -> str:
    s = summary
    failed = sum(q.badge in (Badge.QUESTIONABLE, Badge.POOR) for q in s.questions)
    errors = sum(q.badge in (Badge.INCOMPLETE, Badge.PENDING) for q in s.questions)
    stamp = extras.created_at if extras.created_at is not None else time.time()
    root = ET.Element("testsuites")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=_one_line(s.quiz_title) or "quiz",
        package=classname(s.quiz_title),
        id="0",
        hostname=socket.gethostname() or "localhost",  # the host that wrote this report
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(stamp)),
        tests=str(len(s.questions) + len(extras.unjudged)),
        failures=str(failed),
        errors=str(errors),
        skipped=str(len(extras.unjudged)),
        time=f"{s.elapsed:.3f}",
    )
    _properties(suite, s)
    cls = classname(s.quiz_title)
    for q in s.questions:
        case = ET.SubElement(suite, "testcase", classname=cls, name=case_name(q), time="0")
        if q.badge in (Badge.QUESTIONABLE, Badge.POOR):
            tag = "failure"
        elif q.badge in (Badge.INCOMPLETE, Badge.PENDING):
            tag = "error"
        else:
            continue
        problem = ET.SubElement(case, tag, message=_message(q), type=q.badge.value)
        problem.text = _body(q, extras)
    for u in extras.unjudged:
        name = f"{_one_line(u.id)}: {_one_line(u.text)}"
        if len(name) > NAME_CHARS:
            name = name[: NAME_CHARS - 1].rstrip() + "…"
        case = ET.SubElement(suite, "testcase", classname=cls, name=name, time="0")
        ET.SubElement(case, "skipped", message=_one_line(f"not judged: {u.type} item"))
    ET.SubElement(suite, "system-out").text = _stdout(s)
    ET.SubElement(suite, "system-err").text = xml_text(s.error or "")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
