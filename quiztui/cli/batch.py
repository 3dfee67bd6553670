"""``quiztui vet QUIZ --batch-api``: the command-line side of batch mode.

The ``--batch-api`` flag, the status lines of a headless batch run and the pending batches that
``quiztui runs`` lists. The assembly (provider, settings) is :mod:`quiztui.assemble.batch`.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, TextIO

from quiztui.pipeline.events import ProviderBatchStatus

if TYPE_CHECKING:
    from quiztui.store import Store


def add_argument(vet: argparse.ArgumentParser) -> None:
    vet.add_argument(
        "--batch-api",
        action="store_true",
        help="send the run through the judge's batch API (OpenAI Batch or Anthropic Message"
        " Batches: about half the price, results within 24 h); --resume collects it",
    )


class StatusLines:
    """Headless progress of batch mode: one stderr line whenever a batch's status changes (a
    batch may wait for hours; the assertion progress line does not move meanwhile)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._last: dict[str, str] = {}

    def __call__(self, event: ProviderBatchStatus) -> None:
        if self._last.get(event.batch_id) == event.status:
            return
        self._last[event.batch_id] = event.status
        failed = f", {event.failed} failed" if event.failed else ""
        found = " (submitted earlier)" if event.resumed else ""
        self.stream.write(
            f"quiztui: {event.api} batch {event.batch_id}{found}: {event.status},"
            f" {event.completed + event.failed}/{event.total} requests done{failed}\n"
        )
        self.stream.flush()


def print_pending(store: Store, stream: TextIO) -> None:
    """The provider batches submitted and not yet collected, for ``quiztui runs``."""
    pending = store.provider_batches.pending()
    if not pending:
        return
    stream.write(f"\npending provider batches ({len(pending)}): collect with `quiztui vet")
    stream.write(" --resume RUN --batch-api`\n")
    stream.write(f"{'run':>5}  {'api':<9} {'batch':<36} {'status':<12} {'done':>11}  submitted\n")
    for b in pending:
        done = f"{b.completed + b.failed}/{b.total}"
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(b.created_at))
        stream.write(
            f"{b.run_id:>5}  {b.api:<9} {_clip(b.batch_id, 36):<36} {_clip(b.status, 12):<12}"
            f" {done:>11}  {when}\n"
        )


def _clip(text: str, width: int) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in text)  # the provider's words
    return text if len(text) <= width else text[: width - 1] + "…"
