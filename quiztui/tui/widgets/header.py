"""The run header: one line that always names the judge (SIMULATED or the model), the run state
and the cost; the quiz title gives way first, then the calibration, prior and estimate details."""

from __future__ import annotations

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from quiztui.core.estimate import Estimate, usd
from quiztui.core.figures import cost_text
from quiztui.tui.widgets.cells import one_line

STATUS_STYLES = {
    "idle": "dim",
    "running": "bold cyan",
    "finished": "bold green",
    "cancelled": "bold yellow",
    "failed": "bold red",
    "stopped": "bold yellow",
}
SEPARATOR = "  "
MIN_TITLE = 8  # below this many characters the title is left out rather than cut
MIN_EXTRA = 24  # the calibration is shown cut to the room left when that is at least this


def model_name(judge_label: str) -> str:
    """The model part of a provider's label (``model @ base_url``)."""
    return judge_label.split(" @ ", 1)[0].strip() or judge_label


class RunHeader(Static):
    """One line of run facts, all rendered literally (the title comes from the quiz file).

    What is always there: the judge (a reversed SIMULATED, or the model name), the run state,
    the cost and, while there are any, the edits not saved yet. The rest is fitted to the width: extras (the calibration, the prior, the estimate,
    the judge's full label, in that order) are left out when they do not fit beside the whole
    title; only then is the title shortened.
    """

    DEFAULT_CSS = """
    RunHeader { height: 1; }
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
        self.status_note: str | None = None  # e.g. "r starts" while a paid run waits for r
        self.estimate: Estimate | None = None
        self.budget: float | None = None
        self.spent: float | None = None  # USD so far at the configured price (None: unknown)
        self.prior: str | None = None  # prior = "auto": the estimate the run scored with
        self.unsaved = 0  # edited questions not written to the file yet (ctrl+s)
        self.wrong_keys: str | None = None  # a finished run's "expect 3.2 wrong keys [1, 6]"
        super().__init__("", id=id)
        self.update(self._text())

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
        spent: float | None = None,
        status_note: str | None = None,
        unsaved: int | None = None,
        wrong_keys: str | None = None,
    ) -> None:
        if unsaved is not None:
            self.unsaved = unsaved
        if wrong_keys is not None:
            self.wrong_keys = wrong_keys or None
        if judge_label is not None:
            self.judge_label = judge_label
        if simulated is not None:
            self.simulated = simulated
        if calibration is not None:
            self.calibration = calibration
        if status is not None:
            self.status = status
            self.status_note = status_note
        if prior is not None:
            self.prior = prior
        if spent is not None:
            self.spent = spent
        if estimate is not None:  # a new run's estimate replaces the last one's, with its budget
            self.estimate, self.budget = estimate, budget
            self.spent = spent
        self.update(self._text())

    def on_resize(self, event: Resize) -> None:
        self.update(self._text())

    # -- the parts ---------------------------------------------------------------------------

    def _judge(self) -> Text:
        if self.simulated:
            return Text(" SIMULATED ", style="bold reverse yellow", end="")
        return Text(one_line(model_name(self.judge_label)), style="bold", end="")

    def _state(self) -> Text:
        text = Text(f"[{self.status}]", style=STATUS_STYLES.get(self.status, ""), end="")
        if self.status_note:
            text.append(f" {self.status_note}", style="bold")
        return text

    def cost_text(self) -> str:
        """What the run costs: spent so far, else the estimate; a simulated judge is free."""
        if self.simulated:
            return f"cost {cost_text(None, simulated=True)}"  # as the Usage tab and reports
        estimated = self.estimate.cost if self.estimate is not None else None
        if self.spent is not None:
            text = f"cost {usd(self.spent)}"
            if estimated is not None:
                text += f" of ~{usd(estimated)}"
        elif estimated is not None:
            text = f"cost ~{usd(estimated)} est."
        else:
            text = "cost unknown"
        if self.budget is not None:
            text += f" · budget {usd(self.budget)}"
        return text

    def _extras(self) -> list[Text]:
        """The optional parts, most important first (the last is dropped first)."""
        extras = [Text(one_line(self.calibration), style="italic")]  # the judge's rates
        if self.prior is not None:
            extras.append(Text.assemble(("prior: ", "dim"), one_line(self.prior)))
        if self.estimate is not None:
            estimate = Text(self.estimate.short(), style="dim")
            if self.status_note:  # waiting for r: what the run would cost comes first
                extras.insert(0, estimate)
            else:
                extras.append(estimate)
        extras.append(Text.assemble(("judge: ", "dim"), one_line(self.judge_label)))
        return extras

    def _text(self) -> Text:
        width = self.size.width
        fixed = [self._judge(), self._state(), Text(self.cost_text(), style="dim")]
        if self.wrong_keys:  # the run's one-line answer: how many keys to expect wrong
            fixed.append(Text(self.wrong_keys, style="bold"))
        if self.unsaved:  # always shown: an edit only the app holds is lost on a careless quit
            fixed.append(Text(f"{self.unsaved} unsaved (ctrl+s)", style="bold yellow"))
        title = Text(one_line(self.quiz_title), style="bold")
        extras = self._extras()

        def join(parts: list[Text]) -> Text:
            out = Text(no_wrap=True, overflow="ellipsis", end="")
            out.append(" ")
            for i, part in enumerate(parts):
                if i:
                    out.append(SEPARATOR)
                out.append_text(part)
            return out

        if width <= 0:  # not laid out yet: everything (the first resize fits it)
            return join([*fixed, title, *extras])
        kept: list[Text] = []
        for i, extra in enumerate(extras):  # most important first; one that does not fit
            room = width - join([*fixed, title, *kept]).cell_len - len(SEPARATOR)
            if extra.cell_len <= room:
                kept.append(extra)
            elif i == 0 and room >= MIN_EXTRA:  # the first: as much of it as fits
                extra.truncate(room, overflow="ellipsis")
                kept.append(extra)
        extras = kept
        room = width - join(fixed).cell_len - len(SEPARATOR)
        if title.cell_len > room:
            if room >= MIN_TITLE:
                title.truncate(room, overflow="ellipsis")
            else:
                title = Text("")
        return join([*fixed, *([title] if title.plain else []), *extras])
