"""The self-contained HTML report (S5): content, no external references, escaping, and how it
renders in headless Chromium (skipped when Chromium is not installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from report_helpers import (
    EVIL_ITEM,
    EVIL_OPTION,
    EVIL_QUESTION,
    EVIL_REASON,
    EVIL_TITLE,
    evil_quiz,
    read_png,
    simulated_run,
    walk,
)

from quiztui.core.kscore import Badge
from quiztui.core.lint import lint_quiz
from quiztui.report import render_report
from quiztui.report.extras import ReportExtras

CHROMIUM = next(
    (p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None
)
# Tags that fetch or run something; none belongs in the report.
ACTIVE_TAGS = {"script", "link", "img", "iframe", "object", "embed", "audio", "video", "source",
               "image", "use", "base", "form", "frame", "track", "picture"}  # fmt: skip
URL_ATTRS = {"src", "href", "srcset", "action", "formaction", "poster", "xlink:href", "data",
             "background", "ping"}  # fmt: skip


async def _report(tmp_path: Path, n: int = 12) -> tuple[str, int]:
    quiz = evil_quiz(n)
    summary = await simulated_run(quiz, tmp_path / "runs.db")
    extras = ReportExtras(unjudged=quiz.unjudged, lint=lint_quiz(quiz))
    return render_report(summary, "html", extras), len(summary.questions)


async def test_html_report_has_the_summary_plots_and_one_row_per_question(tmp_path: Path) -> None:
    quiz = evil_quiz(12)
    summary = await simulated_run(quiz, tmp_path / "runs.db")
    html = render_report(summary, "html", ReportExtras(unjudged=quiz.unjudged))
    page = walk(html)
    ids = {attrs.get("id") for _, attrs in page.tags}
    assert {"summary", "metrics", "questions", "questions-table", "not-judged"} <= ids
    rows = [a for t, a in page.tags if t == "tr" and "q" in (a.get("class") or "").split()]
    assert len(rows) == len(summary.questions) == 12
    # Each row carries its badge as a class and as text; counts match the run.
    for badge in (Badge.GOOD, Badge.QUESTIONABLE, Badge.POOR):
        in_rows = sum(f"b-{badge.value}" in (a.get("class") or "") for a in rows)
        assert in_rows == summary.badge_counts.get(badge.value, 0)
    assert sum(summary.badge_counts.get(b, 0) for b in ("questionable", "poor")) >= 3
    assert [t for t, _ in page.tags].count("svg") == 3
    text = " ".join(page.text)
    for title in ("Questions per badge", "Confidence that the key is right", "k of n"):
        assert title in text
    assert "SIMULATED judge." in text and "Cost $0" in text  # free, as every face says
    assert f"seed {summary.seed}" in text and f"{summary.judged} judged" in text
    suggested = [q for q in summary.questions if q.suggested_option is not None]
    assert suggested, "the wrong keys draw a suggestion"
    q = suggested[0]
    letter = chr(ord("A") + q.suggested_option)  # type: ignore[operator]
    assert re.search(rf"judge thinks\s+{letter}\s+\({q.suggested_p:.2f}\)", text)
    assert "not judged (type)" in text and "essay" in text


async def test_html_report_loads_nothing_from_anywhere(tmp_path: Path) -> None:
    html, _ = await _report(tmp_path)
    page = walk(html)
    assert not {t for t, _ in page.tags} & ACTIVE_TAGS
    for tag, attrs in page.tags:
        assert not set(attrs) & URL_ATTRS, (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    assert "url(" not in page.style and "@import" not in page.style
    assert "http://" not in html and "https://" not in html
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert csp and "default-src 'none'" in (csp[0].get("content") or "")


async def test_untrusted_text_is_escaped_and_shown_verbatim(tmp_path: Path) -> None:
    html, _ = await _report(tmp_path)
    for raw in (EVIL_QUESTION, EVIL_OPTION, EVIL_REASON, EVIL_ITEM, "<script>alert(0)</script>"):
        assert raw not in html
    page = walk(html)
    assert "script" not in {t for t, _ in page.tags} and "img" not in {t for t, _ in page.tags}
    text = page.text
    for raw in (EVIL_QUESTION, EVIL_OPTION, EVIL_REASON, EVIL_ITEM, EVIL_TITLE):
        assert raw in text, raw  # the parser reads the exact text back: escaped, not dropped
    assert f"quiztui vet report: {EVIL_TITLE}" in text  # the <title>


async def test_lint_findings_appear_per_question_and_in_their_section(tmp_path: Path) -> None:
    quiz = evil_quiz(12)
    summary = await simulated_run(quiz, tmp_path / "runs.db")
    lint = lint_quiz(quiz)
    assert lint.findings, "the fixture quiz has at least one lint finding"
    html = render_report(summary, "html", ReportExtras(lint=lint))
    page = walk(html)
    codes = [t for t, a in page.tags if t == "span" and a.get("class") == "lint"]
    per_question = [f for f in lint.findings if f.question_id]
    assert len(codes) == len(per_question)
    assert any(a.get("id") == "lint" for _, a in page.tags)
    assert lint.findings[0].message in page.text


async def test_a_stopped_run_says_so(tmp_path: Path) -> None:
    import dataclasses

    quiz = evil_quiz(4)
    summary = await simulated_run(quiz, tmp_path / "runs.db")
    stopped = dataclasses.replace(
        summary, status="cancelled", error="budget reached", not_run=5, cost=0.25, simulated=False
    )
    text = " ".join(walk(render_report(stopped, "html")).text)
    partial = "incomplete (cancelled) · not run: 5 · k/confidence partial"
    assert f"Run {partial}." in text and "budget reached." in text
    assert "$0.25" in text  # core/figures.cost_text, as the header and the Usage tab say it


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
async def test_html_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    html, n = await _report(tmp_path, 20)
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    png = tmp_path / "report.png"
    shot = _chromium(
        "--window-size=1280,1600", f"--screenshot={png}", page.as_uri(), profile=tmp_path / "p1"
    )
    assert png.is_file(), shot.stderr[-2000:]
    pixels = read_png(png)
    assert pixels.shape[:2] == (1600, 1280)
    rgb = pixels[:, :, :3].reshape(-1, 3)
    colours = {tuple(c) for c in np.unique(rgb, axis=0)}
    assert len(colours) > 200, "a rendered page has text, charts and badges, not a blank fill"
    # The badge chips and chart bars are drawn: the good green and the poor red are on screen.
    assert (67, 160, 71) in colours and (229, 57, 53) in colours
    assert (rgb != 255).any(axis=1).mean() > 0.05

    dom = _chromium("--dump-dom", page.as_uri(), profile=tmp_path / "p2").stdout
    rendered = walk(dom)
    ids = {a.get("id") for _, a in rendered.tags}
    assert {"summary", "metrics", "questions-table"} <= ids
    rows = [a for t, a in rendered.tags if t == "tr" and "q" in (a.get("class") or "").split()]
    assert len(rows) == n
    assert EVIL_QUESTION in rendered.text  # shown as text after the browser parsed it
    assert "script" not in {t for t, _ in rendered.tags}
