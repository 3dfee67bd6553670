"""Progress bar with done/total and a one-line usage summary for the running vet."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import ProgressBar, Static

from quiztui.core.estimate import usd
from quiztui.core.figures import is_partial, run_state_text
from quiztui.report.progress import fit_line
from quiztui.tui.state import RUNNING, RunState
from quiztui.tui.widgets.cells import elapsed_text, one_line


class RunStats(Vertical):
    """Shows what :class:`RunState` counted; updated by the vet screen's flush timer."""

    DEFAULT_CSS = """
    RunStats { height: 2; }
    RunStats > Horizontal { height: 1; }
    RunStats ProgressBar { width: 1fr; }
    RunStats #progress-count { width: auto; padding: 0 1; }
    RunStats #stats-line { height: 1; }
    """

    def __init__(self, total: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._total = total
        self._last: tuple[str, str] | None = None
        self._prior: str | None = None  # "prior auto 0.86": the prior the run scored with
        self._parts: list[str] = []  # the stats line's items, fitted to its width when drawn

    def set_prior(self, label: str) -> None:
        """The prior the posteriors used (core/figures.prior_text: ``fixed 0.95`` or ``auto 0.86
        [0.80, 0.92] · 120 q``), kept as its short form — the interval is the header's and the
        metrics screen's."""
        self._prior = "prior " + label.split(" [", 1)[0].split(" · ", 1)[0]

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ProgressBar(total=max(self._total, 1), show_eta=False, id="progress")
            yield Static(f"0/{self._total}", id="progress-count", markup=False)
        yield Static("", id="stats-line", markup=False)

    def show(self, state: RunState) -> None:
        total = state.total
        done = state.done
        count = f"{done}/{total} assertions"
        usage = state.usage
        parts = [f"requests {usage.requests if usage else 0}"]
        if state.status == RUNNING and usage is not None and (usage.limit or usage.in_flight):
            # Connections in use now, out of the provider's (adaptive) limit when it has one.
            parts.append(f"conn {usage.in_flight}" + (f"/{usage.limit}" if usage.limit else ""))
        parts += [
            f"retries {usage.retries if usage else 0}",
            f"tokens {usage.tokens_in if usage else 0:,} in"
            f" / {usage.tokens_out if usage else 0:,} out"
            + (f" ({usage.tokens_note})" if usage is not None and usage.tokens_note else ""),
        ]
        if usage is not None and usage.cost is not None:
            parts.append(f"cost {usd(usage.cost)}")
        if usage is not None and usage.cached:
            parts.append(f"cached {usage.cached}")
        if state.unjudged:
            parts.append(f"unjudged {state.unjudged}")
        if state.quiz.skipped:  # items a non-strict load left out of the file (not vetted)
            parts.append(f"skipped items {len(state.quiz.skipped)}")
        parts.append(f"elapsed {elapsed_text(state.elapsed)}")
        if state.provider_batch is not None:  # batch mode: the provider's batch and its progress
            b = state.provider_batch
            parts.append(
                f"{b.api} batch {b.batch_id} {b.status} {b.completed + b.failed}/{b.total}"
                + (f" ({b.failed} failed)" if b.failed else "")
            )
        if self._prior is not None:  # first: it says what the confidence column rests on
            parts.insert(0, self._prior)
        if is_partial(state.status, state.not_run):  # first: it says what the counts mean
            parts.insert(0, run_state_text(state.status, state.not_run))
        if state.last_error:
            parts.append(f"last: {state.last_error}")
        parts = [one_line(part) for part in parts]
        line = " · ".join(parts)
        if (count, line) == self._last:
            return
        self._last = (count, line)
        self._parts = parts
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=max(total, 1), progress=done)
        self.query_one("#progress-count", Static).update(count)
        self._draw()

    def _draw(self) -> None:
        """The items that fit the line's width, whole: the last ones give way, not a value."""
        shown = self.query_one("#stats-line", Static)
        width = shown.content_region.width
        line = " · ".join(self._parts)
        if width > 0:
            line = fit_line(self._parts, width)
        shown.update(Text(line, no_wrap=True, overflow="ellipsis", end=""))

    def on_resize(self) -> None:
        self.call_after_refresh(self._draw)
