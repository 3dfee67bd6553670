"""Adaptive concurrency: an AIMD limit on requests in flight, shared by the HTTP providers.

A fixed limit is wrong both ways: set high it hammers an API that answers 429 (and every 429 costs a
retry delay), set low it leaves throughput unused. The limiter starts at the configured limit,
*halves* it (floor 1) when the provider signals a rate limit (429, Anthropic's 529, Gemini's
RESOURCE_EXHAUSTED) or another sign of overload (503, a timeout, a reset connection, a stream cut
short: how a local server that serves one request at a time says it) and *adds one* after each quiet period without one, never above the configured
limit — additive increase, multiplicative decrease, as TCP does.

A burst of 429s from requests that were all sent under the old limit is one signal, not many: each
slot remembers the *epoch* (number of cuts so far) it was taken in, and only a rate limit reported
for a slot of the current epoch cuts again. Without that, eight concurrent 429s would take the limit
from 16 to 1 in one go.

The clock is injectable (``clock=``) so tests move time by hand instead of sleeping. The increase is
checked when a slot is taken or given back: with no traffic nothing needs a higher limit, and one
step per check keeps a long idle spell from jumping straight back to the full limit.

Every change of the limit is logged (``quiztui.providers.limiter``): old and new limit and why.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from quiztui.providers.base import Usage

log = logging.getLogger(__name__)


class Slot:
    """One request's place in the limiter; ``epoch`` says which limit it was admitted under."""

    __slots__ = ("epoch",)

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch


class AdaptiveLimiter:
    """At most ``limit`` slots held at once; the limit moves with rate-limit signals.

    With ``adaptive=False`` it is a plain semaphore of ``max_limit`` slots that still keeps
    ``usage.in_flight`` and ``usage.limit`` up to date.
    """

    def __init__(
        self,
        max_limit: int,
        *,
        adaptive: bool = True,
        quiet_seconds: float = 30.0,
        decrease: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        usage: Usage | None = None,
    ) -> None:
        if max_limit < 1:
            raise ValueError("max_limit must be >= 1")
        if not 0.0 < decrease < 1.0:
            raise ValueError("decrease must be between 0 and 1")
        self.max_limit = max_limit
        self.adaptive = adaptive
        self.quiet_seconds = max(0.0, quiet_seconds)
        self.decrease = decrease
        self._clock = clock
        self.usage = usage if usage is not None else Usage()
        self.limit = max_limit
        self.in_flight = 0
        self.cuts = 0  # the epoch: how many times the limit was cut
        self._last_change = clock()
        self._waiters: deque[asyncio.Future[int]] = deque()
        self._sync()

    # -- the limit -------------------------------------------------------------------------

    def rate_limited(
        self, slot: Slot | None = None, why: str = "the server said too many requests"
    ) -> bool:
        """A rate-limit (or other overload) signal for ``slot``; returns whether the limit was cut.

        Signals from slots admitted before the last cut are ignored (see the module docstring);
        ``slot=None`` always counts. ``why`` goes to the log.
        """
        if not self.adaptive or (slot is not None and slot.epoch != self.cuts):
            return False
        self.cuts += 1
        old, self.limit = self.limit, max(1, int(self.limit * self.decrease))
        self._last_change = self._clock()
        self._sync()
        log.info("concurrency limit %d -> %d: %s", old, self.limit, why)
        return True

    def start_at(self, limit: int, why: str) -> None:
        """Set the limit in force (within 1 and ``max_limit``) before any traffic: what the
        server says it serves at once (``why`` goes to the log)."""
        old, self.limit = self.limit, max(1, min(self.max_limit, limit))
        self._last_change = self._clock()
        self._sync()
        if old != self.limit:
            log.info("concurrency limit %d -> %d: %s", old, self.limit, why)

    def _creep(self) -> None:
        """One step up when a quiet period has passed since the last cut or step."""
        if not self.adaptive or self.limit >= self.max_limit:
            return
        now = self._clock()
        if now - self._last_change >= self.quiet_seconds:
            self.limit += 1
            self._last_change = now
            self._wake()
            self._sync()
            log.info(
                "concurrency limit %d -> %d: no rate limit for %.0f s",
                self.limit - 1,
                self.limit,
                self.quiet_seconds,
            )

    # -- slots -----------------------------------------------------------------------------

    async def acquire(self) -> Slot:
        """Wait for a free slot (first come, first served)."""
        self._creep()
        if not self._waiters and self.in_flight < self.limit:
            self.in_flight += 1
            self._sync()
            return Slot(self.cuts)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            epoch = await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as we were cancelled
            else:
                self._waiters.remove(future)
            raise
        return Slot(epoch)

    def release(self) -> None:
        self.in_flight -= 1
        self._creep()
        self._wake()
        self._sync()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        held = await self.acquire()
        try:
            yield held
        finally:
            self.release()

    def _wake(self) -> None:
        """Hand free slots to waiters in order (a slot passes to a waiter already counted)."""
        while self._waiters and self.in_flight < self.limit:
            future = self._waiters.popleft()
            if future.done():
                continue
            self.in_flight += 1
            future.set_result(self.cuts)

    def _sync(self) -> None:
        self.usage.in_flight = self.in_flight
        self.usage.limit = self.limit
