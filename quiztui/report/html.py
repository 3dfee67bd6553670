"""A vet run as one self-contained HTML file: summary, metrics, SVG plots, the questions table.

The file loads nothing: the stylesheet is inline, the plots are inline SVG drawn here, there is
no script, and a Content-Security-Policy meta tag forbids scripts and every external load, so a
report stays readable offline, in a mail attachment or a CI artifact. Everything that comes from
a quiz or a model (titles, questions, options, reasons, the judge label, lint messages) is
untrusted and passes through ``html.escape``; only constant strings of this module are markup.

The page is built as a list of strings joined once, so 10,000 questions stay quick
(``bench/report_size.py`` measures it).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from html import escape

from quiztui import __version__
from quiztui.core.figures import (
    CONFIDENCE_HELP,
    P_TRUE_HELP,
    cost_text,
    is_partial,
    judge_rates_text,
    prior_text,
    run_state_text,
)
from quiztui.core.kscore import Badge
from quiztui.core.wrong_keys import wrong_keys_of, wrong_keys_text
from quiztui.pipeline.events import QuestionSummary, RunSummary
from quiztui.report.extras import ReportExtras
from quiztui.report.html_style import STYLE
from quiztui.report.svg import Bar, Segment, bar_chart, legend

BADGE_ORDER = (Badge.GOOD, Badge.QUESTIONABLE, Badge.POOR, Badge.INCOMPLETE, Badge.PENDING)
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
BINS = 10


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def letter(i: int | None) -> str:
    return "" if i is None else chr(ord("A") + i) if i < 26 else str(i + 1)


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval(pair: tuple[float, float] | None, digits: int = 3) -> str:
    return "" if pair is None else f"[{pair[0]:.{digits}f}, {pair[1]:.{digits}f}]"


def _badge(badge: str) -> str:
    return f'<span class="badge b-{_e(badge)}">{_e(badge)}</span>'


# -- summary -------------------------------------------------------------------------------------


def _rates(s: RunSummary) -> str:
    """The judge's rates as every face shows them (core/figures.judge_rates_text)."""
    return _e(judge_rates_text(s.tpr, s.tnr, s.tpr_ci, s.tnr_ci, s.calibration))


def _elapsed(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def _facts(rows: Iterable[tuple[str, str]]) -> str:
    """A definition list; values are already-escaped HTML."""
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _summary(s: RunSummary, extras: ReportExtras) -> str:
    mode = "per-question mode" if s.mode == "question" else f"batch size {s.batch_size}"
    judge = _e(s.judge_label) + (' <span class="tag sim">SIMULATED</span>' if s.simulated else "")
    state = run_state_text(s.status, s.not_run)
    status = _e(state) + (f' — <span class="err">{_e(s.error)}</span>' if s.error else "")
    counts = Counter(q.badge for q in s.questions)  # the same count as the plots and the table
    chips = "".join(
        f'<li class="chip b-{b.value}"><span class="n">{counts[b]}</span> {b.value}</li>'
        for b in BADGE_ORDER
        if b != Badge.PENDING or counts[b]
    )
    if extras.unjudged:
        chips += (
            f'<li class="chip b-skip"><span class="n">{len(extras.unjudged)}</span>'
            " not judged (type)</li>"
        )
    rows = [
        ("Judge", judge),
        ("Judge rates", _rates(s)),
        ("Prior", _e(prior_text(s.prior, s.prior_label))),
        ("Wrong keys", _e(wrong_keys_text(wrong_keys_of([q.confidence for q in s.questions])))),
        ("Seed / batching", f"seed {s.seed} · {mode}"),
        ("Status", status),
        (
            "Assertions",
            f"{s.judged} judged · {s.unjudged} unjudged · {s.not_run} not run · {s.cached} cached",
        ),
        ("Requests", f"{s.requests} · {s.retries} retries · {s.reasked} re-asked"),
        (
            "Tokens",
            f"{s.tokens_in:,} in · {s.tokens_out:,} out"
            + (" (estimated)" if s.tokens_estimated else ""),
        ),
        ("Cost", cost_text(s.cost, s.simulated)),
        ("Elapsed", _elapsed(s.elapsed)),
    ]
    return (
        '<section id="summary"><h2>Summary</h2>'
        f'<ul class="chips" aria-label="questions per badge">{chips}</ul>'
        f"{_facts(rows)}</section>"
    )


# -- metrics and plots ---------------------------------------------------------------------------


def _scored(s: RunSummary) -> list[QuestionSummary]:
    return [q for q in s.questions if q.badge in (Badge.GOOD, Badge.QUESTIONABLE, Badge.POOR)]


def _metrics(s: RunSummary) -> str:
    scored = _scored(s)
    flagged = sum(q.badge in (Badge.QUESTIONABLE, Badge.POOR) for q in s.questions)
    judged = sum(v is not None for q in s.questions for v in q.verdicts)
    agreeing = sum(q.k for q in s.questions)
    confidences = sorted(q.confidence for q in scored)
    graded = [q.graded for q in s.questions if q.graded is not None]
    share = f" ({100 * flagged / len(s.questions):.1f} %)" if s.questions else ""
    rows = [
        ("Questions", f"{len(s.questions)} ({len(scored)} judged in full)"),
        ("Flagged", f"{flagged} questionable or poor{share}"),
        (
            "Verdicts agreeing with the key",
            f"{agreeing} of {judged}" + (f" ({100 * agreeing / judged:.1f} %)" if judged else ""),
        ),
        (
            "Confidence (key is right)",
            f"mean {sum(confidences) / len(confidences):.3f} · median "
            f"{confidences[len(confidences) // 2]:.3f} · lowest {confidences[0]:.3f}"
            if confidences
            else "—",
        ),
        (
            "Judge suggests another option",
            str(sum(q.suggested_option is not None for q in s.questions)),
        ),
    ]
    if graded:
        rows.append(("Graded (from logprobs)", f"mean {sum(graded) / len(graded):.3f}"))
    return f'<section id="metrics"><h2>Metrics</h2>{_facts(rows)}{_plots(s)}</section>'


def _segments(counts: Counter[Badge]) -> tuple[Segment, ...]:
    return tuple(Segment(counts[b], f"fill-{b.value}", b.value) for b in BADGE_ORDER if counts[b])


def _plots(s: RunSummary) -> str:
    by_badge = Counter(q.badge for q in s.questions)
    badge_bars = [
        Bar(b.value, (Segment(by_badge[b], f"fill-{b.value}", "questions"),))
        for b in BADGE_ORDER
        if b != Badge.PENDING or by_badge[b]
    ]
    bins: list[Counter[Badge]] = [Counter() for _ in range(BINS)]
    for q in s.questions:
        bins[min(BINS - 1, max(0, int(q.confidence * BINS)))][q.badge] += 1
    hist = [Bar(f"{i / BINS:.1f}–{(i + 1) / BINS:.1f}", _segments(c)) for i, c in enumerate(bins)]
    edges = [f"{i / BINS:.1f}" if i % 2 == 0 else "" for i in range(BINS + 1)]
    kn: dict[tuple[int, int], Counter[Badge]] = {}
    for q in s.questions:
        kn.setdefault((len(q.options), q.k), Counter())[q.badge] += 1
    kn_bars = [
        Bar(f"{k}/{n}", _segments(kn[(n, k)])) for n, k in sorted(kn, key=lambda p: (p[0], -p[1]))
    ]
    present = [b for b in BADGE_ORDER if by_badge[b]]
    figures = [
        bar_chart(
            "Questions per badge",
            badge_bars,
            xlabel="badge",
            ylabel="questions",
            chart_id="plot-badges",
        ),
        bar_chart(
            "Confidence that the key is right",
            hist,
            xlabel="confidence",
            ylabel="questions",
            edges=edges,
            chart_id="plot-confidence",
        ),
        bar_chart(
            "Options agreeing with the key (k of n)",
            kn_bars,
            xlabel="k / n",
            ylabel="questions",
            chart_id="plot-k",
        ),
    ]
    figs = "".join(f"<figure>{svg}</figure>" for svg in figures)
    return f'<div class="figs">{figs}</div>' + legend(
        [(f"fill-{b.value}", b.value) for b in present]
    )


# -- the questions table -------------------------------------------------------------------------


def _option(q: QuestionSummary, i: int, text: str) -> str:
    keyed = i == q.key
    verdict = q.verdicts[i] if i < len(q.verdicts) else None
    reason = q.reasons[i] if i < len(q.reasons) else ""
    if verdict is None:
        mark = '<span class="v v-none">unjudged</span>'
    elif verdict:  # the table header says what ✓ and ✗ mean; no per-mark title (file size)
        mark = '<span class="v v-yes">✓</span>'
    else:
        mark = '<span class="v v-no">✗</span>'
    cls = ["opt"]
    if keyed:
        cls.append("key")
    if verdict is not None and verdict != keyed:
        cls.append("disagree")
    p = q.p_true[i] if i < len(q.p_true) else None
    return (
        f'<li class="{" ".join(cls)}"><span class="l">{letter(i)}</span>'
        f'<span class="ot">{_e(text)}</span>'
        + (' <span class="tag key">key</span>' if keyed else "")
        + f" {mark}"
        + (
            f' <span class="pt" title="{_e(P_TRUE_HELP)}">P(true) {p:.2f}</span>'
            if p is not None
            else ""
        )
        + (f'<div class="why">{_e(reason)}</div>' if reason else "")
        + "</li>"
    )


def _suggestion(q: QuestionSummary) -> str:
    if q.suggested_option is None:
        return ""
    text = q.options[q.suggested_option] if q.suggested_option < len(q.options) else ""
    p = "" if q.suggested_p is None else f" ({q.suggested_p:.2f})"
    return f'judge thinks <b>{letter(q.suggested_option)}</b>{p}<div class="sub">{_e(text)}</div>'


def _row(q: QuestionSummary, extras: ReportExtras) -> str:
    options = "".join(_option(q, i, text) for i, text in enumerate(q.options))
    conf = _num(q.confidence)
    if q.interval is not None:
        conf += f'<div class="sub">{_interval(q.interval)}</div>'
    if q.graded is not None:
        conf += f'<div class="sub">graded {q.graded:.3f}</div>'
    findings = extras.lint.findings_for(q.question_id) if extras.lint is not None else ()
    lint = " ".join(
        f'<span class="lint" title="{_e(f.message)}">{_e(f.code)}</span>' for f in findings
    )
    return (
        f'<tr class="q b-{q.badge.value}"><td class="num" data-label="#">{_e(q.question_id)}</td>'
        f'<td class="qt" data-label="question"><div class="stem">{_e(q.text)}</div>'
        f'<ol class="opts">{options}</ol></td>'
        f'<td class="kn" data-label="k/n">{q.k}/{len(q.options)}</td>'
        f'<td class="bd" data-label="badge">{_badge(q.badge.value)}</td>'
        f'<td class="conf" data-label="confidence">{conf}</td>'
        f'<td class="sugg" data-label="judge suggests">{_suggestion(q)}</td>'
        f'<td class="lintc" data-label="lint">{lint}</td></tr>'
    )


def _table(s: RunSummary, extras: ReportExtras) -> str:
    partial = " (partial)" if is_partial(s.status, s.not_run) else ""
    head = "".join(
        f'<th scope="col" class="{cls}">{name}</th>'
        for cls, name in (
            ("num", "#"),
            ("qt", "question and options (✓ judge says correct · ✗ judge says wrong)"),
            ("kn", "k/n" + partial),
            ("bd", "badge"),
            ("conf", f'<abbr title="{_e(CONFIDENCE_HELP)}">confidence</abbr>{partial}'),
            ("sugg", "judge suggests"),
            ("lintc", "lint"),
        )
    )
    body = "".join(_row(q, extras) for q in s.questions)
    return (
        f'<section id="questions"><h2>Questions <span class="count">{len(s.questions)}</span></h2>'
        '<div class="tablewrap"><table id="questions-table" class="qs">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></section>"
    )


def _review(s: RunSummary, extras: ReportExtras) -> str:
    """The review desk's decisions (accept / fix / rewrite / drop, the note), in quiz order."""
    rows = "".join(
        f"<tr><td>{_e(q.question_id)}</td><td>{_e(q.text)}</td><td>{_e(action)}</td>"
        f"<td>{_e(option)}</td><td>{_e(note)}</td></tr>"
        for q in s.questions
        for action, option, note in [extras.review_cells(q.question_id, q.options)]
        if action
    )
    if not rows:
        return ""
    return (
        '<section id="review"><h2>Review</h2><p class="note">What the reviewer decided: accept'
        " (the key is right), fix (the right option), rewrite, drop.</p>"
        '<table class="plain"><thead><tr><th>#</th><th>question</th><th>decision</th>'
        f"<th>right option</th><th>note</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _not_judged(extras: ReportExtras) -> str:
    if not extras.unjudged:
        return ""
    rows = "".join(
        f"<tr><td>{_e(u.id)}</td><td>{'' if u.source_line is None else u.source_line}</td>"
        f"<td>{_e(u.type)}</td><td>{_e(u.text)}</td></tr>"
        for u in extras.unjudged
    )
    return (
        '<section id="not-judged"><h2>Not judged</h2><p class="note">Items of a type the judge'
        " does not vet; they are listed, not scored.</p>"
        '<table class="plain"><thead><tr><th>#</th><th>line</th><th>type</th><th>item</th></tr>'
        f"</thead><tbody>{rows}</tbody></table></section>"
    )


def _lint(extras: ReportExtras) -> str:
    if extras.lint is None:
        return ""
    rows = "".join(
        f"<tr><td>{_e(f.question_id or 'quiz')}</td><td>{_e(f.code)}</td>"
        f'<td><span class="sev sev-{_e(f.severity)}">{_e(f.severity)}</span></td>'
        f"<td>{_e(f.message)}</td></tr>"
        for f in extras.lint.findings
    )
    table = (
        '<table class="plain"><thead><tr><th>#</th><th>code</th><th>severity</th>'
        f"<th>finding</th></tr></thead><tbody>{rows}</tbody></table>"
        if rows
        else ""
    )
    return (
        f'<section id="lint"><h2>Lint</h2><p class="note">{_e(extras.lint.summary())}</p>'
        f"{table}</section>"
    )


def to_html(summary: RunSummary, extras: ReportExtras) -> str:
    s = summary
    when = time.localtime(extras.created_at if extras.created_at is not None else time.time())
    sub = f"run #{s.run_id} · {time.strftime('%Y-%m-%d %H:%M', when)}"
    if s.quiz_path:
        sub += f" · {_e(s.quiz_path)}"
    banners = ""
    if s.simulated:
        banners += (
            '<p class="banner sim"><b>SIMULATED judge.</b> The verdicts come from a simulation'
            " that answers from the quiz's own truth with set error rates — a demonstration, not"
            " a model's opinion.</p>"
        )
    if is_partial(s.status, s.not_run) or s.error:
        banners += (
            f'<p class="banner stop"><b>Run {_e(run_state_text(s.status, s.not_run))}.</b> '
            + (f"{_e(s.error.rstrip('.'))}. " if s.error else "")
            + f"{s.unjudged} assertions unjudged.</p>"
        )
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="generator" content="quiztui">',
        f"<title>quiztui vet report: {_e(s.quiz_title)}</title>",
        f"<style>{STYLE}</style></head><body><main>",
        f'<header class="top"><p class="kicker">quiztui vet report</p>'
        f"<h1>{_e(s.quiz_title)}</h1>"
        f'<p class="sub">{sub}</p>{banners}</header>',
        _summary(s, extras),
        _metrics(s),
        _table(s, extras),
        _review(s, extras),
        _not_judged(extras),
        _lint(extras),
        f"<footer>quiztui {_e(__version__)} · questions, options, reasons and labels are shown"
        " as plain text · ✓/✗ are the judge's verdicts; a red edge marks a verdict that"
        " disagrees with the key</footer>",
        "</main></body></html>\n",
    ]
    return "".join(parts)
