"""``asyncio.run`` for the commands, without formatting their result.

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
