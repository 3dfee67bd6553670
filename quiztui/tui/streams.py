"""Consuming a pipeline event stream inside a Textual worker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

YIELD_EVERY = 64  # events handled before giving the event loop a turn (keeps the UI responsive)


async def drain(
    stream: AsyncIterator[Any],
    handle: Callable[[Any], None],
    current: Callable[[], bool],
) -> None:
    """Pass every event to ``handle`` until the stream ends or ``current()`` turns false.

    The stream is always closed, so a cancelled or superseded run stops its pipeline (which then
    records the run as cancelled) instead of leaving it suspended.
    """
    try:
        count = 0
        async for event in stream:
            if not current():
                break
            handle(event)
            count += 1
            if count % YIELD_EVERY == 0:
                await asyncio.sleep(0)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
