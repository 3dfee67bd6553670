"""Terminal charts for the metrics screen: a declarative spec drawn by textual-plotext.

A screen builds a :class:`ChartSpec` (plain numbers and labels) and hands it to
:meth:`Chart.show`; the chart redraws only when the spec changed. Specs carry numbers and fixed
labels only — never quiz or model text, which plotext would not escape.

Series are told apart by marker as well as colour, so a chart still reads under ``NO_COLOR``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from textual_plotext import PlotextPlot

SeriesKind = Literal["line", "scatter", "bar"]


@dataclass(frozen=True, slots=True)
class Series:
    x: tuple[float, ...] | tuple[str, ...]
    y: tuple[float, ...]
    label: str | None = None
    kind: SeriesKind = "line"
    marker: str | None = None  # a plotext marker name ("braille", "dot", "hd") or one character
    color: str | None = None


@dataclass(frozen=True, slots=True)
class ChartSpec:
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    series: tuple[Series, ...] = ()
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    xticks: tuple[tuple[float, ...], tuple[str, ...]] | None = None
    yticks: tuple[tuple[float, ...], tuple[str, ...]] | None = None
    bar_width: float | None = None  # fraction of the slot a bar fills (plotext default 0.8)


def ticks(values: Sequence[float], fmt: str = "{:g}") -> tuple[tuple[float, ...], tuple[str, ...]]:
    """Tick positions and their labels, e.g. ``ticks([0, 0.5, 1])``."""
    return tuple(values), tuple(fmt.format(v) for v in values)


def histogram(title: str, xlabel: str, counts: Sequence[int], labels: Sequence[str]) -> ChartSpec:
    """Bars of counts, one per label (plotext leaves a zero blank), with integer y ticks."""
    top = max(max(counts, default=0), 1)
    step = max(1, math.ceil(top / 5))
    return ChartSpec(
        title=title,
        xlabel=xlabel,
        series=(Series(tuple(labels), tuple(float(c) for c in counts), kind="bar"),),
        ylim=(0.0, top * 1.05),
        yticks=ticks(range(0, top + 1, step), "{:d}"),
        bar_width=0.6,
    )


class Chart(PlotextPlot):
    """A PlotextPlot that draws a :class:`ChartSpec`."""

    DEFAULT_CSS = """
    Chart {
        width: 1fr;
        height: 1fr;
        min-height: 6;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.spec: ChartSpec | None = None

    def show(self, spec: ChartSpec) -> None:
        if spec == self.spec:
            return
        self.spec = spec
        plt = self.plt
        plt.clear_figure()
        plt.title(spec.title)
        plt.xlabel(spec.xlabel)
        plt.ylabel(spec.ylabel)
        for s in spec.series:
            x, y = list(s.x), list(s.y)
            if s.kind == "bar":
                plt.bar(x, y, marker=s.marker, color=s.color, width=spec.bar_width, label=s.label)
            elif s.kind == "scatter":
                plt.scatter(x, y, marker=s.marker, color=s.color, label=s.label)
            else:
                plt.plot(x, y, marker=s.marker, color=s.color, label=s.label)
        if spec.xlim is not None:
            plt.xlim(*spec.xlim)
        if spec.ylim is not None:
            plt.ylim(*spec.ylim)
        if spec.xticks is not None:
            plt.xticks(list(spec.xticks[0]), list(spec.xticks[1]))
        if spec.yticks is not None:
            plt.yticks(list(spec.yticks[0]), list(spec.yticks[1]))
        self.refresh()
