"""Small bar charts as inline SVG for the HTML report: no plotting library, no external assets.

Every chart is a row of bars, each bar a stack of coloured segments (one per badge), so the
badge counts, the confidence histogram and the k/n distribution share one drawing routine.
Labels pass through ``html.escape``; the SVG carries a ``viewBox`` so it scales with the page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 460
HEIGHT = 260
LEFT, RIGHT, TOP, BOTTOM = 46, 12, 34, 50


@dataclass(frozen=True, slots=True)
class Segment:
    value: int
    css_class: str  # a badge class from the page's stylesheet, e.g. "fill-good"
    label: str  # what the segment counts, for the hover title


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    segments: tuple[Segment, ...]

    @property
    def total(self) -> int:
        return sum(s.value for s in self.segments)


def nice_ticks(top: int, most: int = 5) -> list[int]:
    """Integer y ticks from 0 to at least ``top``, a 1/2/5 × 10^k step, at most ``most`` + 1."""
    if top <= 0:
        return [0, 1]
    raw = top / most
    power = 10 ** max(0, math.floor(math.log10(raw))) if raw >= 1 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    step = max(1, int(step))
    last = math.ceil(top / step) * step
    return list(range(0, last + 1, step))


def _text(x: float, y: float, text: str, cls: str, anchor: str = "middle", extra: str = "") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" class="{cls}" text-anchor="{anchor}"{extra}>'
        f"{escape(text)}</text>"
    )


def bar_chart(
    title: str,
    bars: Sequence[Bar],
    *,
    xlabel: str,
    ylabel: str,
    edges: Sequence[str] | None = None,
    chart_id: str = "chart",
) -> str:
    """An SVG bar chart. With ``edges`` (one more than bars) the x labels sit between bars, as a
    histogram's bin edges; otherwise each bar is labelled under its middle."""
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    top = max((b.total for b in bars), default=0)
    ticks = nice_ticks(top + max(1, math.ceil(top * 0.08)))  # headroom for the value labels
    scale = plot_h / ticks[-1]
    slot = plot_w / max(1, len(bars))
    gap = 0.0 if edges is not None else min(slot * 0.25, 18.0)
    out = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"'
        f' aria-labelledby="{chart_id}-t" preserveAspectRatio="xMidYMid meet">',
        f'<title id="{chart_id}-t">{escape(title)}</title>',
        _text(WIDTH / 2, 18, title, "ct"),
    ]
    base = TOP + plot_h
    for t in ticks:
        y = base - t * scale
        out.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
        )
        out.append(_text(LEFT - 6, y + 4, str(t), "tick", "end"))
    for i, bar in enumerate(bars):
        x = LEFT + i * slot + gap / 2
        w = max(1.0, slot - gap - (1.0 if edges is not None else 0.0))
        y = base
        for seg in bar.segments:
            if seg.value <= 0:
                continue
            h = seg.value * scale
            y -= h
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}"'
                f' class="{seg.css_class}"><title>{escape(bar.label)}: {seg.value}'
                f" {escape(seg.label)}</title></rect>"
            )
        if edges is None:
            out.append(_text(x + w / 2, y - 4, str(bar.total), "val"))
        if edges is None:
            out.append(_text(x + w / 2, base + 16, bar.label, "tick"))
    if edges is not None:
        for i, label in enumerate(edges):
            if label:
                out.append(_text(LEFT + i * slot, base + 16, label, "tick"))
    out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{base}" y2="{base}" class="axis"/>')
    out.append(_text(LEFT + plot_w / 2, HEIGHT - 10, xlabel, "al"))
    out.append(
        _text(
            12,
            TOP + plot_h / 2,
            ylabel,
            "al",
            extra=f' transform="rotate(-90 12 {TOP + plot_h / 2:.1f})"',
        )
    )
    out.append("</svg>")
    return "".join(out)


def legend(items: Sequence[tuple[str, str]]) -> str:
    """An HTML legend: (css class, label) pairs, the swatch coloured by the class."""
    return (
        '<ul class="legend">'
        + "".join(f'<li><span class="sw {cls}"></span>{escape(label)}</li>' for cls, label in items)
        + "</ul>"
    )
