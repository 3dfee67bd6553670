"""The commands' event loop is run without formatting its result (quiztui/cli/running.py)."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from quiztui.cli.running import run_to_end


class _Result:
    """A result that notes each time its repr is made (a run summary's repr took 8-15 ms)."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def __repr__(self) -> str:
        self.seen.append("repr")
        return "_Result()"


async def _give(seen: list[str]) -> _Result:
    await asyncio.sleep(0)
    return _Result(seen)


def test_the_result_comes_back_and_is_never_formatted() -> None:
    seen: list[str] = []
    result = run_to_end(_give(seen))
    assert isinstance(result, _Result) and seen == []
    if threading.current_thread() is threading.main_thread() and sys.version_info[:2] == (3, 11):
        # Python 3.11's asyncio.run formats the finished main task, its result included, when
        # it puts the SIGINT handler back (signal.getsignal tries it as an enum member).
        asyncio.run(_give(seen))
        assert seen, "asyncio.run no longer formats its result: run_to_end may go"


def test_an_error_comes_out_as_it_was_raised() -> None:
    async def fail() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_to_end(fail())


async def test_a_background_step_waits_while_other_work_is_ready() -> None:
    """A headless run's report work (cli/vet.report_work) goes a step at a time through
    ``when_idle``: a round of replies read one after another is not interleaved with it."""
    from quiztui.cli.running import when_idle

    order: list[str] = []

    async def replies() -> None:  # sixteen replies read one after another, each handing over
        for n in range(16):
            order.append(f"reply {n}")
            await asyncio.sleep(0)

    async def report() -> None:
        for n in range(3):
            await when_idle()
            order.append(f"step {n}")

    reading = asyncio.create_task(replies())
    await asyncio.gather(report(), reading)
    assert order[:16] == [f"reply {n}" for n in range(16)]
    assert order[16:] == ["step 0", "step 1", "step 2"]


async def test_a_background_step_goes_at_once_on_an_idle_loop() -> None:
    from quiztui.cli.running import when_idle

    for _ in range(50):  # nothing else is ready: never a step's wait (an hour here)
        await asyncio.wait_for(when_idle(step=3600.0), timeout=60)
