"""One progress line on stderr for a headless run (vet, calibrate, grade, review, robustness)."""

from __future__ import annotations

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


class Progress:
    """One progress line on stderr: redrawn in place on a terminal, every 10 % otherwise."""

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
        line = (
            f"{done}/{total} {self.unit} ({frac:.0%}) · {self.missed} {unjudged} · requests {requests}"
            f" · retries {retries} · tokens {tokens_in}/{tokens_out}"
            + (
                " (estimated)"
                if estimated
                else f" ({self.tokens_note})"
                if self.tokens_note
                else ""
            )
            + f" · {now - self.start:.1f}s"
        )
        if self.tty:
            if final or now - self.last_draw >= 0.1:
                width = 30
                bar = "█" * int(frac * width) + "░" * (width - int(frac * width))
                # Its own redraw codes pass the CLI's terminal-safe stream (core/terminal.py).
                raw = getattr(self.stream, "unfiltered", self.stream)
                raw.write(f"\r{bar} {line}\x1b[K" + ("\n" if final else ""))
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
