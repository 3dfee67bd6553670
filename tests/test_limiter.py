"""The adaptive concurrency limiter: pure unit tests with a hand-moved clock (no sleeps)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from quiztui.providers.base import Usage
from quiztui.providers.limiter import AdaptiveLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def settle() -> None:
    """Let woken tasks run (a few loop turns, no wall-clock wait)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_slots_up_to_the_limit_then_waiters_in_order_and_usage_mirrors_it() -> None:
    usage = Usage()
    limiter = AdaptiveLimiter(2, usage=usage, clock=Clock())
    assert usage.limit == 2 and usage.in_flight == 0
    await limiter.acquire()
    await limiter.acquire()
    assert usage.in_flight == 2
    order: list[str] = []

    async def wait(name: str) -> None:
        await limiter.acquire()
        order.append(name)

    first, second = asyncio.create_task(wait("first")), asyncio.create_task(wait("second"))
    await settle()
    assert order == [] and usage.in_flight == 2  # both wait: the limit is full
    limiter.release()
    await settle()
    assert order == ["first"] and usage.in_flight == 2  # the freed slot passed on, in order
    limiter.release()
    await settle()
    assert order == ["first", "second"]
    await asyncio.gather(first, second)
    limiter.release()
    limiter.release()
    assert usage.in_flight == 0


async def test_a_rate_limit_halves_the_limit_down_to_one() -> None:
    limiter = AdaptiveLimiter(16, clock=Clock())
    seen = []
    for _ in range(6):
        assert limiter.rate_limited()
        seen.append(limiter.limit)
    assert seen == [8, 4, 2, 1, 1, 1]
    assert limiter.usage.limit == 1


async def test_a_burst_of_429s_from_one_epoch_cuts_once() -> None:
    """Eight requests sent under the old limit that all get 429 are one signal, not eight."""
    limiter = AdaptiveLimiter(8, clock=Clock())
    slots = [await limiter.acquire() for _ in range(8)]
    cuts = [limiter.rate_limited(s) for s in slots]
    assert cuts == [True] + [False] * 7 and limiter.limit == 4
    for _ in slots:
        limiter.release()
    fresh = await limiter.acquire()  # admitted under the new limit: its 429 counts again
    assert limiter.rate_limited(fresh) and limiter.limit == 2


async def test_the_limit_creeps_back_one_step_per_quiet_period_never_above_the_maximum() -> None:
    clock = Clock()
    limiter = AdaptiveLimiter(4, quiet_seconds=10.0, clock=clock)
    limiter.rate_limited()
    limiter.rate_limited()
    assert limiter.limit == 1
    history = []
    for step in (9.9, 0.1, 5.0, 5.0, 10.0, 10.0, 10.0, 100.0):
        clock.advance(step)
        await limiter.acquire()
        limiter.release()
        history.append(limiter.limit)
    # 9.9 s is not yet quiet; then one step per 10 s; 100 s idle is still one step; capped at 4.
    assert history == [1, 2, 2, 3, 4, 4, 4, 4]


async def test_a_rate_limit_restarts_the_quiet_period() -> None:
    clock = Clock()
    limiter = AdaptiveLimiter(8, quiet_seconds=10.0, clock=clock)
    limiter.rate_limited()
    clock.advance(9.0)
    limiter.rate_limited()
    clock.advance(9.0)
    await limiter.acquire()
    assert limiter.limit == 2  # only 9 s since the last cut
    clock.advance(1.0)
    limiter.release()
    assert limiter.limit == 3


async def test_a_raised_limit_wakes_waiters() -> None:
    clock = Clock()
    limiter = AdaptiveLimiter(2, quiet_seconds=5.0, clock=clock)
    limiter.rate_limited()
    await limiter.acquire()
    waiter = asyncio.create_task(limiter.acquire())
    await settle()
    assert not waiter.done()
    clock.advance(5.0)
    holder = asyncio.create_task(limiter.acquire())  # the check on acquire raises the limit to 2
    await settle()
    assert waiter.done() and limiter.in_flight == 2 and not holder.done()
    holder.cancel()
    await settle()
    assert limiter.in_flight == 2


async def test_a_cut_below_the_slots_in_flight_holds_new_requests_back() -> None:
    limiter = AdaptiveLimiter(4, clock=Clock())
    for _ in range(4):
        await limiter.acquire()
    limiter.rate_limited()  # limit 2 with 4 in flight
    waiter = asyncio.create_task(limiter.acquire())
    limiter.release()
    limiter.release()
    await settle()
    assert not waiter.done() and limiter.in_flight == 2  # at the limit, not under it
    limiter.release()
    await settle()
    assert waiter.done() and limiter.in_flight == 2


async def test_a_cancelled_waiter_leaks_no_slot() -> None:
    limiter = AdaptiveLimiter(1, clock=Clock())
    await limiter.acquire()
    waiter = asyncio.create_task(limiter.acquire())
    await settle()
    waiter.cancel()
    await settle()
    limiter.release()
    assert limiter.in_flight == 0
    async with limiter.slot():
        assert limiter.in_flight == 1
    assert limiter.in_flight == 0


async def test_fixed_mode_never_moves_the_limit() -> None:
    clock = Clock()
    limiter = AdaptiveLimiter(6, adaptive=False, quiet_seconds=1.0, clock=clock)
    assert not limiter.rate_limited()
    clock.advance(100.0)
    await limiter.acquire()
    assert limiter.limit == 6 and limiter.usage.limit == 6 and limiter.usage.in_flight == 1


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="max_limit"):
        AdaptiveLimiter(0)
    with pytest.raises(ValueError, match="decrease"):
        AdaptiveLimiter(4, decrease=1.0)


async def test_every_change_of_the_limit_is_logged_with_old_new_and_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="quiztui.providers.limiter")
    clock = Clock()
    limiter = AdaptiveLimiter(4, clock=clock, quiet_seconds=30.0)
    slot = await limiter.acquire()
    assert limiter.rate_limited(slot)
    assert not limiter.rate_limited(slot)  # the same epoch again: no change, nothing logged
    limiter.release()
    clock.advance(30.0)
    await limiter.acquire()
    limiter.release()
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        (
            "quiztui.providers.limiter",
            "concurrency limit 4 -> 2: the server said too many requests",
        ),
        ("quiztui.providers.limiter", "concurrency limit 2 -> 3: no rate limit for 30 s"),
    ]
