"""The run header: quiz title, judge, a loud SIMULATED label, calibration and run status."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from quiztui.core.estimate import Estimate, usd
from quiztui.tui.widgets.cells import one_line

STATUS_STYLES = {
    "idle": "dim",
    "running": "bold cyan",
    "finished": "bold green",
    "cancelled": "bold yellow",
    "failed": "bold red",
    "stopped": "bold yellow",
}


class RunHeader(Static):
    """Two lines of run facts, all rendered literally (the title comes from the quiz file)."""

    DEFAULT_CSS = """
    RunHeader { height: 2; }
    """

    def __init__(
        self,
        *,
        title: str,
        judge_label: str,
        simulated: bool,
        calibration: str,
        id: str | None = None,
    ) -> None:
        self.quiz_title = title
        self.judge_label = judge_label
        self.simulated = simulated
        self.calibration = calibration
        self.status = "idle"
        self.estimate: Estimate | None = None
        self.budget: float | None = None
        self.prior: str | None = None  # prior = "auto": the estimate the run scored with
        super().__init__(self._text(), id=id)

    def set_run(
        self,
        *,
        judge_label: str | None = None,
        simulated: bool | None = None,
        calibration: str | None = None,
        status: str | None = None,
        estimate: Estimate | None = None,
        budget: float | None = None,
        prior: str | None = None,
    ) -> None:
        if judge_label is not None:
            self.judge_label = judge_label
        if simulated is not None:
            self.simulated = simulated
        if calibration is not None:
            self.calibration = calibration
        if status is not None:
            self.status = status
        if prior is not None:
            self.prior = prior
        if estimate is not None:  # a new run's estimate replaces the last one's, with its budget
            self.estimate, self.budget = estimate, budget
        self.update(self._text())

    def _text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(" quiztui ", style="bold reverse")
        text.append(" ")
        text.append(one_line(self.quiz_title), style="bold")
        text.append("  ")
        text.append(f"[{self.status}]", style=STATUS_STYLES.get(self.status, ""))
        if self.estimate is not None:
            text.append("  " + self.estimate.short(), style="dim")
            if self.budget is not None:
                text.append(f" · budget {usd(self.budget)}", style="dim")
        text.append("\n")
        if self.simulated:
            text.append(" SIMULATED ", style="bold reverse yellow")
            text.append(" ")
        text.append("calibration: ", style="dim")
        text.append(one_line(self.calibration), style="italic")
        if self.prior is not None:
            text.append("  prior: ", style="dim")
            text.append(one_line(self.prior))
        text.append("  judge: ", style="dim")
        text.append(one_line(self.judge_label))
        return text
