"""Grade runs and grader benchmarks as text, Markdown, JSON or CSV. Answer text is data: escaped.

Per-fact scores and weights of the ``facts`` grader appear in every format: JSON lists them per
item, CSV has one ``facts`` cell (``1 (w 0.93, p1 0.93) fact | 0 … fact``), Markdown a sub-table
per item.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from quiztui.core import json_text
from quiztui.core.benchmark import BRACKETS, SEED_FIGURES, Agreement, BenchmarkResult
from quiztui.core.grading import FactScore, GradeItem, GradeOutcome
from quiztui.pipeline.grade import GradeSummary, benchmark_dict
from quiztui.report.writers import md_cell

Row = tuple[GradeItem, GradeOutcome]


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def fact_text(f: FactScore) -> str:
    said = "unscored" if f.score is None else str(f.score)
    bits = []
    if f.weight is not None:
        bits.append(f"w {f.weight:.2f}")
    if f.p_one is not None:
        bits.append(f"p1 {f.p_one:.2f}")
    if f.score is None and f.reason:
        bits.append(f.reason)
    return f"{said}" + (f" ({', '.join(bits)})" if bits else "") + f" {f.fact}"


def _outcome_dict(item: GradeItem, o: GradeOutcome, split: str = "") -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": item.id,
        "question": item.question,
        "reference": item.reference,
        "candidate": item.candidate,
        "human": item.human,
        "grader": o.grader,
        "score": o.raw,
        "normalised": o.normalised,
        "label": o.label,
        "reasoning": o.reasoning,
        "unscored": o.unscored,
        "attempts": o.attempts,
        "tokens_in": o.tokens_in,
        "tokens_out": o.tokens_out,
    }
    if split:
        d["split"] = split
    if o.facts:
        d["facts"] = [asdict(f) | {"value": f.value} for f in o.facts]
    return d


def grades_json(rows: Sequence[Row], summary: GradeSummary | None, label: str) -> str:
    body = {
        "judge": label,
        "summary": asdict(summary) if summary is not None else None,
        "items": [_outcome_dict(i, o) for i, o in rows],
    }
    return json_text.dumps(body, indent=2, ensure_ascii=False) + "\n"


def grades_csv(rows: Sequence[Row]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        [
            "id",
            "question",
            "reference",
            "candidate",
            "human",
            "grader",
            "score",
            "normalised",
            "label",
            "reasoning",
            "unscored",
            "facts",
        ]
    )
    for item, o in rows:
        w.writerow(
            [
                item.id,
                item.question,
                item.reference,
                item.candidate,
                "" if item.human is None else item.human,
                o.grader,
                "" if o.raw is None else o.raw,
                "" if o.normalised is None else f"{o.normalised:.4f}",
                o.label,
                o.reasoning,
                o.unscored or "",
                " | ".join(fact_text(f) for f in o.facts),
            ]
        )
    return out.getvalue()


def grades_markdown(rows: Sequence[Row], summary: GradeSummary | None, label: str) -> str:
    lines = ["# Grade report", "", f"Grader judge: {md_cell(label)}", ""]
    if summary is not None:
        lines += summary_lines(summary, md=True) + [""]
    lines += [
        "| id | score | label | candidate | reference | reasoning |",
        "|---|---|---|---|---|---|",
    ]
    for item, o in rows:
        why = o.reasoning if o.scored else f"UNSCORED: {o.unscored}"
        lines.append(
            f"| {md_cell(item.id)} | {_num(o.raw, 2)} | {md_cell(o.label)} | {md_cell(item.candidate)}"
            f" | {md_cell(item.reference)} | {md_cell(why)} |"
        )
    with_facts = [(i, o) for i, o in rows if o.facts]
    if with_facts:
        lines += ["", "## Facts", ""]
        for item, o in with_facts:
            lines += [
                f"### {md_cell(item.id)}: {o.label}",
                "",
                "| fact | said | weight | P(1) | value |",
                "|---|---|---|---|---|",
            ]
            for f in o.facts:
                said = "unscored" if f.score is None else str(f.score)
                lines.append(
                    f"| {md_cell(f.fact)} | {said} | {_num(f.weight, 2)} | {_num(f.p_one, 2)} |"
                    f" {_num(f.value, 2)} |"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


LABELS_SHOWN = 8  # a summary's most common labels; the rest are counted


def summary_lines(s: GradeSummary, md: bool = False) -> list[str]:
    bullet = "- " if md else ""
    ranked = sorted(s.labels.items(), key=lambda kv: -kv[1])
    # A graded score's labels (lexical's "F1 0.67", one per value) can run to hundreds: the most
    # common ones, and how many more.
    labels = ", ".join(f"{k} {v}" for k, v in ranked[:LABELS_SHOWN]) + (
        f", … {len(ranked) - LABELS_SHOWN} more" if len(ranked) > LABELS_SHOWN else ""
    )
    lines = [
        f"{bullet}{s.grader}: {s.scored} scored, {s.unscored} unscored of {s.total}"
        + (f"; mean {s.mean_normalised:.3f} on 0-1" if s.mean_normalised is not None else ""),
        f"{bullet}labels: {labels or '—'}",
        f"{bullet}requests {s.requests} · retries {s.retries} · re-asked {s.reasks}"
        f" · tokens {s.tokens_in}/{s.tokens_out}"
        f" · {s.seconds:.1f}s" + (f" · {s.cached} from the grade cache" if s.cached else ""),
    ]
    if s.humans:
        lines.append(
            f"{bullet}against {s.humans} human scores: Pearson {_num(s.pearson)}, Spearman {_num(s.spearman)}"
        )
    if s.stopped:
        lines.append(f"{bullet}STOPPED: {s.stopped}")
    return lines


# --- benchmarks --------------------------------------------------------------------------------


def benchmark_rows(r: BenchmarkResult) -> list[dict[str, str]]:
    """The comparison table: this grader, the constant-mean baseline and the seed's figures."""

    def row(
        name: str, a: Agreement | None, aad: float | None = None, acc: float | None = None
    ) -> dict[str, str]:
        return {
            "": name,
            "AAD": _num(a.aad if a else aad),
            "bracket acc": f"{(a.bracket_accuracy if a else acc or 0) * 100:.2f}%",
            "Pearson": _num(a.pearson) if a else "—",
            "Spearman": _num(a.spearman) if a else "—",
            "n": str(a.n) if a else "—",
        }

    rows = [
        row(f"{r.grader} ({r.calibration.kind})", r.test),
        row("constant mean (train)", r.baseline),
    ]
    if r.dataset == "msrpar":
        rows += [row(name, None, aad, acc) for name, (aad, acc) in SEED_FIGURES.items()]
    return rows


def confusion_rows(a: Agreement) -> list[dict[str, str]]:
    return [
        {
            "human \\ predicted": BRACKETS[i],
            **{p: str(a.confusion[i][j]) for j, p in enumerate(BRACKETS)},
        }
        for i in range(3)
    ]


def benchmark_text(r: BenchmarkResult, judge: str) -> str:
    from quiztui.report.text import text_table

    head = [
        f"benchmark {r.dataset} · grader {r.grader} · {judge}",
        f"calibration fitted on {r.train_n} train items ({r.calibration.describe()});"
        f" evaluated on {r.test.n} test items",
    ]
    if r.unscored_train or r.unscored_test:
        head.append(f"unscored and left out: {r.unscored_train} train, {r.unscored_test} test")
    return (
        "\n".join(head)
        + "\n\n"
        + text_table(benchmark_rows(r))
        + "\nbracket confusion on test (rows: human, columns: predicted)\n"
        + text_table(confusion_rows(r.test))
    )


def benchmark_markdown(r: BenchmarkResult, judge: str) -> str:
    def table(rows: list[dict[str, str]]) -> list[str]:
        heads = list(rows[0])
        return [
            "| " + " | ".join(md_cell(h) or " " for h in heads) + " |",
            "|" + "---|" * len(heads),
            *("| " + " | ".join(md_cell(r[h]) for h in heads) + " |" for r in rows),
        ]

    return (
        "\n".join(
            [
                f"# Grader benchmark: {md_cell(r.grader)} on {md_cell(r.dataset)}",
                "",
                f"Judge: {md_cell(judge)}. Calibration fitted on {r.train_n} train items"
                f" ({md_cell(r.calibration.describe())}); {r.test.n} test items"
                f" ({r.unscored_train} train and {r.unscored_test} test unscored, left out).",
                "",
                *table(benchmark_rows(r)),
                "",
                "Bracket confusion on test (rows: human, columns: predicted):",
                "",
                *table(confusion_rows(r.test)),
            ]
        )
        + "\n"
    )


def benchmark_json(r: BenchmarkResult, judge: str) -> str:
    return json_text.dumps({"judge": judge, **benchmark_dict(r)}, indent=2) + "\n"
