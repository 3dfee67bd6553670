"""Events from concurrent work, yielded as they happen."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

E = TypeVar("E")

Emit = Callable[[E], None]

_DONE = object()


async def events_of(work: Callable[[Emit[E]], Awaitable[object]]) -> AsyncIterator[E]:
    """Run ``work(emit)`` as a task and yield every event it emits, in order, until it ends.

    An exception in ``work`` is raised here after the events emitted before it. Closing the
    iterator early (a cancelled run) cancels the task and waits for it, so nothing is left
    running.
    """
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def run() -> None:
        try:
            await work(queue.put_nowait)
        finally:
            queue.put_nowait(_DONE)

    task = asyncio.create_task(run())
    try:
        while (event := await queue.get()) is not _DONE:
            yield event  # type: ignore[misc]
        await task
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
