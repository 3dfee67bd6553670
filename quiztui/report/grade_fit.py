"""The k-fold table of ``grade --benchmark FILE --fit kfold`` as text, Markdown or JSON.

AAD and RMSE are shown on the user's own scale (``--scale``); bracket accuracy, Pearson r and
Spearman ρ do not depend on it. Every figure carries its bootstrap 95 % interval.
"""

from __future__ import annotations

from typing import Any

from quiztui.core import json_text
from quiztui.core.benchmark import BRACKETS
from quiztui.core.grade_fit import KFoldResult
from quiztui.formats.marked import Scale
from quiztui.report.grades import confusion_rows
from quiztui.report.writers import md_cell


def _units(scale: Scale) -> float:
    return scale.span / 5.0


def _fmt(value: float | None, interval: tuple[float, float] | None, mul: float = 1.0) -> str:
    if value is None:
        return "—"
    if interval is None:
        return f"{value * mul:.3f}"
    return f"{value * mul:.3f} [{interval[0] * mul:.3f}, {interval[1] * mul:.3f}]"


def _pct(value: float, interval: tuple[float, float] | None) -> str:
    text = f"{value * 100:.1f}%"
    return (
        text if interval is None else f"{text} [{interval[0] * 100:.1f}, {interval[1] * 100:.1f}]"
    )


def kfold_rows(r: KFoldResult, scale: Scale) -> list[dict[str, str]]:
    """One row per model; baselines are marked."""
    u = _units(scale)
    out = []
    for row in r.rows:
        a, iv = row.agreement, row.intervals
        out.append(
            {
                "model": row.name + (" (baseline)" if row.baseline else ""),
                "n": str(a.n),
                f"AAD ({scale})": _fmt(a.aad, iv["aad"], u),
                f"RMSE ({scale})": _fmt(row.rmse, iv["rmse"], u),
                "bracket acc": _pct(a.bracket_accuracy, iv["bracket_accuracy"]),
                "Pearson r": _fmt(a.pearson, iv["pearson"]),
                "Spearman ρ": _fmt(a.spearman, iv["spearman"]),
            }
        )
    return out


def kfold_head(r: KFoldResult, scale: Scale, judge: str, saved: Any) -> list[str]:
    lines = [
        f"benchmark {r.dataset} · {r.n} marked answers · scale {scale} · {r.k}-fold"
        f" (seed {r.seed}) · graders {', '.join(r.graders)} · {judge}",
        "held-out figures pooled over the folds; [95 % bootstrap interval]; brackets on 0-5:"
        f" {', '.join(BRACKETS)}",
    ]
    if r.neighbour_groups:
        lines.append(f"neighbours: {r.neighbour_groups} questions with two or more marked answers")
    else:
        lines.append("neighbours: no question has two marked answers (model left out)")
    for grader, count in r.unscored.items():
        if count:
            lines.append(f"{grader}: {count} unscored answers left out of its rows")
    best = r.best()
    lines.append(
        f"best held-out bracket accuracy: {best.name}"
        + (f"; calibration saved: {saved}" if saved else "")
    )
    return lines


def kfold_text(r: KFoldResult, scale: Scale, judge: str, saved: Any = None) -> str:
    from quiztui.report.text import text_table

    best = r.best()
    return (
        "\n".join(kfold_head(r, scale, judge, saved))
        + "\n\n"
        + text_table(kfold_rows(r, scale))
        + f"\nbracket confusion, {best.name}, held out (rows: human, columns: predicted)\n"
        + text_table(confusion_rows(best.agreement))
    )


def kfold_markdown(r: KFoldResult, scale: Scale, judge: str, saved: Any = None) -> str:
    rows = kfold_rows(r, scale)
    heads = list(rows[0])
    lines = [
        f"# Graders fitted on {md_cell(r.dataset)} ({r.k}-fold)",
        "",
        *(f"- {md_cell(line)}" for line in kfold_head(r, scale, judge, saved)),
        "",
        "| " + " | ".join(md_cell(h) for h in heads) + " |",
        "|" + "---|" * len(heads),
        *("| " + " | ".join(md_cell(row[h]) for h in heads) + " |" for row in rows),
    ]
    return "\n".join(lines) + "\n"


def kfold_dict(r: KFoldResult, scale: Scale, judge: str, saved: Any = None) -> dict[str, Any]:
    u = _units(scale)

    def scaled(iv: tuple[float, float] | None) -> list[float] | None:
        return None if iv is None else [iv[0] * u, iv[1] * u]

    return {
        "dataset": r.dataset,
        "judge": judge,
        "scale": [scale.lo, scale.hi],
        "k": r.k,
        "seed": r.seed,
        "n": r.n,
        "graders": list(r.graders),
        "folds": list(r.folds),
        "unscored": r.unscored,
        "neighbour_groups": r.neighbour_groups,
        "best": r.best().name,
        "calibration": None if saved is None else str(saved),
        "rows": [
            {
                "model": row.name,
                "baseline": row.baseline,
                "n": row.agreement.n,
                "aad": row.agreement.aad * u,
                "rmse": row.rmse * u,
                "bracket_accuracy": row.agreement.bracket_accuracy,
                "pearson": row.agreement.pearson,
                "spearman": row.agreement.spearman,
                "intervals": {
                    "aad": scaled(row.intervals["aad"]),
                    "rmse": scaled(row.intervals["rmse"]),
                    "bracket_accuracy": row.intervals["bracket_accuracy"],
                    "pearson": row.intervals["pearson"],
                    "spearman": row.intervals["spearman"],
                },
                "confusion": [list(c) for c in row.agreement.confusion],
            }
            for row in r.rows
        ],
    }


def kfold_json(r: KFoldResult, scale: Scale, judge: str, saved: Any = None) -> str:
    return json_text.dumps(kfold_dict(r, scale, judge, saved), indent=2) + "\n"
