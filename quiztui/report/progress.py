"""One progress line on stderr for a headless run (vet, calibrate, grade, review, robustness)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from quiztui.pipeline.events import UsageUpdated


class ScoredSummary(Protocol):
    """What a grade or review summary has for the progress line (read-only)."""

    @property
    def scored(self) -> int: ...

    @property
    def unscored(self) -> int: ...

    @property
    def total(self) -> int: ...

    @property
    def requests(self) -> int: ...

    @property
    def retries(self) -> int: ...

    @property
    def tokens_in(self) -> int: ...

    @property
    def tokens_out(self) -> int: ...


def fit_line(parts: list[str], width: int, sep: str = " · ") -> str:
    """``parts`` joined by ``sep`` in at most ``width`` cells: whole parts are left out from the
    end (the first is cut only when it alone is too wide), never a value cut in half."""
    kept = list(parts)
    while len(kept) > 1 and len(sep.join(kept)) > width:
        kept.pop()
    line = sep.join(kept)
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


class Progress:
    """One progress line on stderr: redrawn in place on a terminal, every 10 % otherwise.

    On a terminal the line is fitted to its width (the bar goes first, then whole items from
    the end): a line wider than the terminal wraps, and ``\r`` then redraws only its last row,
    so every update printed a new line at 80 columns."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "assertions",
        missed: str = "unjudged",
    ) -> None:
        self.stream = stream
        self.unit = unit
        self.missed = missed
        self.tty = stream.isatty()
        self.clock = clock
        self.start = clock()
        self.last_draw = 0.0
        self.last_decile = -1
        self.last_line = ""
        self.tokens_note = ""  # the last usage event's: "estimated", "counted by the server's…"

    def columns(self) -> int:
        """The terminal's width now (it may be resized during a run)."""
        raw = getattr(self.stream, "unfiltered", self.stream)
        try:
            return os.get_terminal_size(raw.fileno()).columns
        except (AttributeError, OSError, ValueError):
            return shutil.get_terminal_size().columns

    def usage(self, event: UsageUpdated, final: bool = False) -> None:
        self.tokens_note = event.tokens_note
        self.update(
            event.judged,
            event.unjudged,
            event.total,
            event.requests,
            event.retries,
            event.tokens_in,
            event.tokens_out,
            final=final,
        )

    def finished(self, summary: ScoredSummary) -> None:
        """The final line of a grade, benchmark or review run, from its summary."""
        self.update(
            summary.scored,
            summary.unscored,
            summary.total,
            summary.requests,
            summary.retries,
            summary.tokens_in,
            summary.tokens_out,
            final=True,
        )

    def update(
        self,
        judged: int,
        unjudged: int,
        total: int,
        requests: int,
        retries: int,
        tokens_in: int,
        tokens_out: int,
        final: bool = False,
        estimated: bool = False,
    ) -> None:
        done = judged + unjudged
        now = self.clock()
        frac = done / total if total else 1.0
        note = " (estimated)" if estimated else f" ({self.tokens_note})" if self.tokens_note else ""
        parts = [
            f"{done}/{total} {self.unit} ({frac:.0%})",
            f"{self.missed} {unjudged}",
            f"requests {requests}",
            f"retries {retries}",
            f"tokens {tokens_in}/{tokens_out}{note}",
            f"{now - self.start:.1f}s",
        ]
        line = " · ".join(parts)
        if self.tty:
            if final or now - self.last_draw >= 0.1:
                room = self.columns() - 1  # the last column left free: no wrap, no scroll
                width = 30
                bar = "█" * int(frac * width) + "░" * (width - int(frac * width))
                shown = f"{bar} {line}"
                if len(shown) > room:
                    shown = fit_line(parts, room)
                # Its own redraw codes pass the CLI's terminal-safe stream (core/terminal.py).
                raw = getattr(self.stream, "unfiltered", self.stream)
                raw.write(f"\r{shown}\x1b[K" + ("\n" if final else ""))
                raw.flush()
                self.last_draw = now
        else:
            decile = int(frac * 10)
            same = line.rsplit(" · ", 1)[0] == self.last_line
            if (final and not same) or decile > self.last_decile:
                self.last_decile = decile
                self.last_line = line.rsplit(" · ", 1)[0]
                self.stream.write(line + "\n")
                self.stream.flush()
