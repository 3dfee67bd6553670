"""One run lifecycle for every pipeline: its record in the store, its event queue, how it ends.

Every kind of run (vet, calibrate, panel, grade, benchmark, review, robustness, generate) goes the
same way. The pipeline creates its row (``start``: each kind has its own table and columns), yields
its start event, then runs its concurrent work as one task that emits events into the run's queue
(``stream``; a run in phases, like generate's chunks then stages, streams once per phase); each
event is recorded in the store (the ``record`` hook) and handed on in order. ``emit`` puts events
into the same queue from outside the work (a batch provider's ``attach_run`` hook gets it). Then
the run ends in one of two ways, written here once:

- it ran to its end: ``finish(status, summary)`` records "finished", "failed" (the run could not
  go on, e.g. the judge refused the key) or "stopped" (a vet run reached its budget) with the
  summary;
- it ended early: the consumer closed the stream (``GeneratorExit``), its task was cancelled, or an
  error escaped. The stream cancels the work and waits for it, then records the kind's early status
  with no summary ("stopped" for grade, review and robustness; "cancelled" for vet, where only a
  cancellation counts: a vet run that dies of an error stays "running" or "batch-pending", to be
  resumed) and lets the exception go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import aclosing, asynccontextmanager, contextmanager
from typing import Any, Generic, Protocol, TypeVar

from quiztui.providers.base import Provider

E = TypeVar("E")
T = TypeVar("T", bound="RunTable")

Emit = Callable[[E], None]
Work = Callable[[Emit[E]], Awaitable[object]]

FINISHED = "finished"
FAILED = "failed"
STOPPED = "stopped"
CANCELLED = "cancelled"

_DONE = object()


class RunTable(Protocol):
    """Where a kind of run is stored: ``Store`` (vet runs), ``store.grades``, ``store.reviews``,
    ``store.robustness``."""

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None) -> None: ...


async def events_of(
    work: Work[E], queue: asyncio.Queue[Any] | None = None
) -> AsyncGenerator[E, None]:
    """Run ``work(emit)`` as a task and yield every event it emits, in order, until it ends.

    An exception in ``work`` is raised here after the events emitted before it. Closing the
    iterator early (a cancelled run) cancels the task and waits for it, so nothing is left
    running. ``queue`` may already hold events (emitted before the work started).
    """
    events: asyncio.Queue[Any] = asyncio.Queue() if queue is None else queue

    async def run() -> None:
        try:
            await work(events.put_nowait)
        finally:
            events.put_nowait(_DONE)

    task = asyncio.create_task(run())
    try:
        while (event := await events.get()) is not _DONE:
            yield event
        await task
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


class RunLifecycle(Generic[E, T]):
    """One run's lifecycle. ``table`` None: the run is not stored (no store given, or a kind that
    stores nothing of its own, like generate and panel); the queue and the stream work alike."""

    def __init__(
        self,
        table: T | None = None,
        *,
        record: Callable[[T, int, E], None] | None = None,
        early_status: str = STOPPED,
        early_on: tuple[type[BaseException], ...] = (BaseException,),
    ) -> None:
        self.table = table
        self.run_id: int | None = None
        self._record = record
        self._early_status = early_status
        self._early_on = early_on
        self._queue: asyncio.Queue[Any] = asyncio.Queue()

    def start(self, create: Callable[[T], int]) -> int | None:
        """Create the run's row with ``create(table)``; its id, or None when not stored."""
        if self.table is not None:
            self.run_id = create(self.table)
        return self.run_id

    def emit(self, event: E) -> None:
        """Put an event into the run's stream; usable before the stream starts (it comes first)."""
        self._queue.put_nowait(event)

    def finish(self, status: str, summary: dict[str, Any] | None) -> None:
        """Record how the run ended, with its summary."""
        if self.table is not None and self.run_id is not None:
            self.table.finish_run(self.run_id, status, summary)

    @contextmanager
    def ending(self) -> Iterator[None]:
        """Record the early status when the block ends early (see the module doc), then re-raise."""
        try:
            yield
        except self._early_on:
            self.finish(self._early_status, None)
            raise

    @asynccontextmanager
    async def stream(self, work: Work[E]) -> AsyncIterator[AsyncIterator[E]]:
        """The events of ``work(emit)`` as they happen, each recorded before it is handed on.

        However the block is left, the work is cancelled and awaited first; an early end is then
        recorded by :meth:`ending`.
        """
        with self.ending():
            async with aclosing(self._recorded(work)) as events:
                yield events

    async def _recorded(self, work: Work[E]) -> AsyncGenerator[E, None]:
        async with aclosing(events_of(work, self._queue)) as events:
            async for event in events:
                if self._record is not None and self.table is not None and self.run_id is not None:
                    self._record(self.table, self.run_id, event)
                yield event


def usage_mark(providers: Iterable[Provider | None]) -> tuple[int, int, int, int]:
    """Requests, retries, tokens in and out so far, summed over ``providers`` (a run's usage is the
    difference of two marks)."""
    totals = [0, 0, 0, 0]
    for p in providers:
        if p is None:
            continue
        u = p.usage
        for i, v in enumerate((u.requests, u.retries, u.tokens_in, u.tokens_out)):
            totals[i] += v
    return (totals[0], totals[1], totals[2], totals[3])


__all__ = [
    "CANCELLED",
    "FAILED",
    "FINISHED",
    "STOPPED",
    "Emit",
    "RunLifecycle",
    "RunTable",
    "Work",
    "events_of",
    "usage_mark",
]
