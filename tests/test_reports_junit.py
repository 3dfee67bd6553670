"""The JUnit XML report (S5): valid against the JUnit schemas CI systems use, one test case per
question, questionable/poor as failures, incomplete as errors, untrusted text made XML-safe."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pipeline_helpers import collect, make_quiz
from report_helpers import EVIL_OPTION, EVIL_QUESTION, EVIL_REASON, evil_quiz, simulated_run

from quiztui.core.kscore import Badge
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.report import render_report
from quiztui.report.extras import ReportExtras
from quiztui.report.junit import NAME_CHARS, case_name, xml_text
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

SCHEMAS = Path(__file__).parent / "fixtures" / "junit"


def validate(xml: str) -> None:
    """Against the Ant-derived JUnit.xsd and the Jenkins xUnit junit-10.xsd (SOURCE.md)."""
    xmlschema = pytest.importorskip("xmlschema")
    for name in ("ant-JUnit.xsd", "jenkins-junit-10.xsd"):
        xmlschema.XMLSchema(SCHEMAS / name).validate(xml)


def suite_of(xml: str) -> ET.Element:
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    return suites[0]


async def test_junit_is_valid_and_has_one_case_per_question(tmp_path: Path) -> None:
    quiz = evil_quiz(16)
    summary = await simulated_run(quiz, tmp_path / "runs.db")
    xml = render_report(summary, "junit", ReportExtras(unjudged=quiz.unjudged))
    validate(xml)
    suite = suite_of(xml)
    cases = suite.findall("testcase")
    assert len(cases) == len(summary.questions) + len(quiz.unjudged) == 17
    flagged = [q for q in summary.questions if q.badge in (Badge.QUESTIONABLE, Badge.POOR)]
    assert len(flagged) >= 3
    assert int(suite.get("tests", "")) == 17
    assert int(suite.get("failures", "")) == len(flagged) == len(suite.findall("testcase/failure"))
    assert int(suite.get("errors", "")) == 0 and int(suite.get("skipped", "")) == 1
    for q, case in zip(summary.questions, cases, strict=False):
        assert case.get("name", "").startswith(f"{q.question_id}: ")
        failure = case.find("failure")
        if q in flagged:
            assert failure is not None and failure.get("type") == q.badge.value
            assert f"k {q.k}/{len(q.options)}" in (failure.get("message") or "")
            body = failure.text or ""
            for i, option in enumerate(q.options):
                assert f"{chr(65 + i)}. {option}" in body
            if q.suggested_option is not None:
                assert f"judge thinks {chr(65 + q.suggested_option)}" in (
                    failure.get("message") or ""
                )
        else:
            assert failure is None and case.find("error") is None
    skipped = cases[-1].find("skipped")
    assert skipped is not None and "essay" in (skipped.get("message") or "")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["seed"] == str(summary.seed) and props["simulated"] == "true"
    assert props["judge"] == summary.judge_label and props["calibration"] == "uncalibrated"


async def test_untrusted_text_round_trips_through_the_xml(tmp_path: Path) -> None:
    quiz = evil_quiz(8)
    summary = await simulated_run(quiz, tmp_path / "runs.db")
    q1 = dataclasses.replace(summary.questions[0], badge=Badge.POOR)  # so its body is written
    summary = dataclasses.replace(summary, questions=(q1, *summary.questions[1:]))
    xml = render_report(summary, "junit", ReportExtras())
    assert EVIL_QUESTION not in xml and EVIL_OPTION not in xml  # escaped on the wire
    case = suite_of(xml).findall("testcase")[0]
    assert case.get("name") == f"q1: {EVIL_QUESTION}"[:NAME_CHARS]
    body = case.findtext("failure") or ""
    assert EVIL_QUESTION in body and EVIL_OPTION in body and EVIL_REASON in body
    validate(xml)


async def test_control_characters_are_stripped_and_names_truncated(tmp_path: Path) -> None:
    quiz = make_quiz(3)
    summary = await simulated_run(quiz, tmp_path / "runs.db")
    nasty = "What\x00 is\x1b[31m 1\x0b+\x7f1?\ufffe " + "very long " * 20
    q1 = dataclasses.replace(summary.questions[0], text=nasty, badge=Badge.QUESTIONABLE)
    summary = dataclasses.replace(summary, questions=(q1, *summary.questions[1:]), error="a\x01b")
    xml = render_report(summary, "junit", ReportExtras())
    for ch in ("\x00", "\x1b", "\x0b", "\ufffe", "\x01"):
        assert ch not in xml
    validate(xml)
    name = suite_of(xml).findall("testcase")[0].get("name", "")
    # DEL is not XML-forbidden; the terminal sanitiser shows it as a visible escape.
    assert name.startswith("q1: What is[31m 1+\\u007f1?") and len(name) == NAME_CHARS
    assert name.endswith("…")
    assert xml_text("tab\tnew\nline\rok\U0001f600") == "tab\tnew\nline\rok\U0001f600"
    assert case_name(q1) == name


async def test_incomplete_questions_are_errors(tmp_path: Path) -> None:
    quiz = make_quiz(6)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        server.inject("refusal", times=1)  # the first batch, not asked again: unjudged
        provider = OpenAICompatProvider(
            base_url=server.base_url,
            model="fake-judge",
            retry=RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02),
        )
        _, summary = await collect(
            quiz,
            provider,
            tmp_path / "q.db",
            settings=VetSettings(batch_size=12, concurrency=1, max_reasks=0),
        )
    incomplete = [q for q in summary.questions if q.badge == Badge.INCOMPLETE]
    assert incomplete and summary.unjudged == 12 and summary.judged == 12
    xml = render_report(summary, "junit", ReportExtras())
    validate(xml)
    suite = suite_of(xml)
    errors = suite.findall("testcase/error")
    assert int(suite.get("errors", "")) == len(errors) == len(incomplete)
    assert all(e.get("type") == "incomplete" for e in errors)
    assert all("unjudged" in (e.get("message") or "") for e in errors)
    assert "judge: unjudged" in (errors[0].text or "")
