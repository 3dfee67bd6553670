"""Progress bar with done/total and a one-line usage summary for the running vet."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import ProgressBar, Static

from quiztui.tui.state import RunState
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
        parts = [
            f"requests {usage.requests if usage else 0}",
            f"retries {usage.retries if usage else 0}",
            f"tokens {usage.tokens_in if usage else 0:,} in"
            f" / {usage.tokens_out if usage else 0:,} out",
        ]
        if usage is not None and usage.cached:
            parts.append(f"cached {usage.cached}")
        if state.unjudged:
            parts.append(f"unjudged {state.unjudged}")
        parts.append(f"elapsed {elapsed_text(state.elapsed)}")
        line = " · ".join(parts)
        if state.last_error:
            line += f" · last: {state.last_error}"
        if (count, line) == self._last:
            return
        self._last = (count, line)
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=max(total, 1), progress=done)
        self.query_one("#progress-count", Static).update(count)
        self.query_one("#stats-line", Static).update(
            Text(one_line(line), no_wrap=True, overflow="ellipsis", end="")
        )
