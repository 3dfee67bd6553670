"""``asyncio.run`` for the commands, without formatting their result; and :func:`when_idle`, for
work that must not hold up a run's replies.

Python 3.11's runner puts its own SIGINT handler in place while the coroutine runs and, once it
is done, looks the handler up again through ``signal.getsignal``, which tries it as a member of
an enum and, failing, formats its repr: the handler holds the main task, and a done task's repr
holds its result. A headless vet run's result is the run's summary, every question in it: 8-15 ms
after the last reply (``docs/speed.md``). :func:`run_to_end` keeps the result out of the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``'s result (and its exceptions, KeyboardInterrupt included)."""
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]


async def when_idle(step: float = 0.001) -> None:
    """Return once the event loop has nothing else ready to run: for background work done a step
    at a time (a headless run's report, ``cli/vet.report_work``) that must not hold up a run.

    A round of replies arrives together and is read one after another; a background step run
    between two of them delays every reply after it, and the requests that follow them. So a
    step waits while anything else is ready: it checks again every ``step`` seconds (a timer, so
    the loop sleeps meanwhile). The ready queue is asyncio's own event loop's (``_ready``); a
    loop without one (uvloop) gets a plain yield.
    """
    await asyncio.sleep(0)
    ready = getattr(asyncio.get_running_loop(), "_ready", None)
    while ready:
        await asyncio.sleep(step)
