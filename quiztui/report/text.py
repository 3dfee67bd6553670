"""Plain-text pieces both faces print: aligned tables and the calibration set-up note."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quiztui.core.calibration import JudgeProfile


def text_table(rows: list[dict[str, str]]) -> str:
    """Plain aligned columns (the headless output is read in terminals and CI logs)."""
    if not rows:
        return ""
    heads = list(rows[0])
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h in heads}
    lines = ["  ".join(h.ljust(widths[h]) for h in heads).rstrip()]
    lines.append("  ".join("-" * widths[h] for h in heads))
    lines += ["  ".join(r[h].ljust(widths[h]) for h in heads).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def cheapest_note(profiles: list[JudgeProfile]) -> str:
    """Which set-up is cheapest among those whose accuracy is within 1 point of the best."""
    scored = [p for p in profiles if not math.isnan(p.confusion.accuracy)]
    if not scored:
        return "no set-up produced verdicts"
    best = max(p.confusion.accuracy for p in scored)
    good = [p for p in scored if p.confusion.accuracy >= best - 0.01]
    pick = min(good, key=lambda p: (p.tokens_per_question, p.wall_time))
    setup = "per-question mode" if pick.mode == "question" else f"batch size {pick.batch_size}"
    return (
        f"cheapest set-up within 1 point of the best accuracy ({best:.3f}): {setup}"
        f" — accuracy {pick.confusion.accuracy:.3f}, {pick.tokens_per_question:.0f} tokens/question"
    )
